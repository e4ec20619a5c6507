"""Label Studio for a lake: a configured server, or a local one started headless.

``connect(lake)`` returns the server to talk to:

- ``PHONELOOP_LABEL_STUDIO_URL`` + ``PHONELOOP_LABEL_STUDIO_TOKEN`` set: that server;
- otherwise the local one ``serve(lake)`` started. ``serve`` creates (once) a separate
  virtualenv with ``label-studio`` (its pins clash with ours), generates an admin login
  and a 40-character API token into ``<lake>/labelstudio/credentials.json`` (mode 0600),
  and starts ``label-studio start --no-browser --internal-host HOST`` (127.0.0.1 unless
  ``host`` says otherwise, e.g. 0.0.0.0 behind a reverse proxy; ``--host`` gets
  ``PHONELOOP_LABEL_STUDIO_PUBLIC_URL`` when set) with its data in
  ``<lake>/labelstudio/data`` and analytics and version checks off. Label Studio's SSRF
  protection stays on: every reserved and private range is banned except the one
  address of the phoneloop API (``api_url``, default ``PHONELOOP_API_URL`` or
  http://127.0.0.1:8765), so the webhook reaches the API and nothing else on the
  private network (Label Studio bans by address only: any port of that address is
  reachable). It waits for ``/health`` on the exact port (Label Studio silently moves
  to the next port when one is busy) and records the process in
  ``<lake>/labelstudio/server.json``. A second ``serve`` reuses the running server.

The first start on a fresh data folder runs database migrations (about a minute); a
restart takes seconds. ``stop(lake)`` ends the process group it started.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import signal
import socket
import subprocess
import time
from dataclasses import dataclass

import httpx
from pathlib import Path

from annotate.client import LabelStudio
from annotate.errors import ServerFailedToStart, ServerNotRunning

LABEL_STUDIO_VERSION = "1.23.2"
DEFAULT_PORT = 8080
START_TIMEOUT_S = 240.0
USERNAME = "admin@phoneloop.local"
_UNPREFIXED = ("USERNAME", "PASSWORD", "USER_TOKEN", "PORT", "HOST", "DATA_DIR")
DEFAULT_API_URL = "http://127.0.0.1:8765"
# Label Studio's own default banned subnets (core/utils/io.py, 1.23.2)
BANNED_SUBNETS = (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
    "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
    "224.0.0.0/4", "233.252.0.0/24", "240.0.0.0/4", "255.255.255.255/32", "::/128", "::1/128", "::ffff:0:0/96",
    "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001:0000::/32", "2001:20::/28",
    "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8",
)


@dataclass(frozen=True)
class Server:
    url: str
    token: str
    managed: bool  # started by phoneloop for this lake (else configured)
    token_file: str | None = None
    username: str | None = None
    password: str | None = None
    pid: int | None = None

    def client(self) -> LabelStudio:
        return LabelStudio(self.url, self.token)


def home(lake_uri: str) -> Path:
    """``<lake>/labelstudio``: credentials, pid file, log and the server's data (local lakes only)."""
    if "://" in lake_uri and not lake_uri.startswith("file://"):
        raise ServerNotRunning(f"a local Label Studio keeps its data beside a local lake, not {lake_uri}; "
                               "set PHONELOOP_LABEL_STUDIO_URL and PHONELOOP_LABEL_STUDIO_TOKEN instead")
    return Path(lake_uri.removeprefix("file://")) / "labelstudio"


def venv_dir() -> Path:
    """``PHONELOOP_LABEL_STUDIO_VENV``, else ``.venv-labelstudio`` beside phoneloop's source tree."""
    configured = os.environ.get("PHONELOOP_LABEL_STUDIO_VENV")
    return Path(configured) if configured else Path(__file__).resolve().parents[1] / ".venv-labelstudio"


def ensure_venv(say=print) -> Path:
    """The ``label-studio`` executable, creating its virtualenv first if needed (PyPI)."""
    venv = venv_dir()
    exe = venv / "bin" / "label-studio"
    if exe.exists():
        return exe
    say(f"creating the Label Studio virtualenv in {venv} (label-studio=={LABEL_STUDIO_VERSION}) ...")
    python = os.environ.get("PYTHON", "python3")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                    f"label-studio=={LABEL_STUDIO_VERSION}"], check=True)
    return exe


def configured() -> Server | None:
    url, token = os.environ.get("PHONELOOP_LABEL_STUDIO_URL"), os.environ.get("PHONELOOP_LABEL_STUDIO_TOKEN")
    if url and token:
        return Server(url=url.rstrip("/"), token=token, managed=False)
    return None


def credentials(lake_uri: str) -> dict:
    """The lake's Label Studio login and token, generated once (file mode 0600)."""
    path = home(lake_uri) / "credentials.json"
    if path.exists():
        return json.loads(path.read_text())
    path.parent.mkdir(parents=True, exist_ok=True)
    creds = {"username": USERNAME, "password": secrets.token_urlsafe(18), "token": secrets.token_hex(20)}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(creds, out, indent=2)
    return creds


def connect(lake_uri: str) -> Server:
    """The server this lake annotates with: configured, or the running local one."""
    server = configured() or running(lake_uri)
    if server is None:
        raise ServerNotRunning(f"no Label Studio running for {lake_uri}: run `phoneloop annotate serve` "
                               "or set PHONELOOP_LABEL_STUDIO_URL and PHONELOOP_LABEL_STUDIO_TOKEN")
    return server


def running(lake_uri: str) -> Server | None:
    """The local server recorded in the pid file, if its process is alive and healthy."""
    state = _read_state(lake_uri)
    if state is None or not _alive(state.get("pid")) or not _is_label_studio(state["pid"]):
        return None
    server = _local(lake_uri, state["url"], state["pid"])
    return server if healthy(server.url) else None


def serve(lake_uri: str, *, port: int | None = None, host: str = "127.0.0.1", api_url: str | None = None,
          timeout: float = START_TIMEOUT_S, say=print) -> Server:
    """Start (or reuse) the lake's local Label Studio and return it once /health answers.

    The port: ``port``, else the one the lake's server used last — the server comes back
    on exactly that port (after a crash too), or ``ServerFailedToStart`` names the busy
    port; with neither, ``PHONELOOP_LABEL_STUDIO_PORT`` or 8080, or any free port when that
    one is busy.
    ``host`` is the bind address; ``api_url`` the phoneloop API the webhook may reach.
    """
    server = configured()
    if server is not None:
        with server.client() as client:
            if not client.healthy():
                raise ServerNotRunning(f"the configured Label Studio at {server.url} does not answer /health")
        return server
    state = _read_state(lake_uri) or {}
    if _alive(state.get("pid")) and _is_label_studio(state["pid"]):  # running, or still starting
        _wait_healthy(state["pid"], state["url"], home(lake_uri) / "server.log", timeout)
        return _local(lake_uri, state["url"], state["pid"])
    _end_leftovers(state.get("pid"))  # what a crashed server left behind in its group
    # a busy port would make Label Studio move silently to the next one: a port asked for (or the
    # one this lake's server had) is taken or refused naming it; only the default may move
    wanted = port or state.get("port")
    if wanted:
        if not _port_free(wanted, host):
            raise ServerFailedToStart(f"port {wanted} on {host} is busy (not this lake's Label Studio): stop what "
                                      f"listens there, or choose another with --port")
        port = wanted
    else:
        port = _free_port(int(os.environ.get("PHONELOOP_LABEL_STUDIO_PORT", DEFAULT_PORT)), host)
    exe = ensure_venv(say)
    creds = credentials(lake_uri)
    base = home(lake_uri)
    (base / "data").mkdir(parents=True, exist_ok=True)
    log = open(base / "server.log", "ab")
    args = [str(exe), "start", "--no-browser", "--internal-host", host, "--port", str(port)]
    if os.environ.get("PHONELOOP_LABEL_STUDIO_PUBLIC_URL"):
        args += ["--host", os.environ["PHONELOOP_LABEL_STUDIO_PUBLIC_URL"]]
    api = api_url or os.environ.get("PHONELOOP_API_URL", DEFAULT_API_URL)
    proc = subprocess.Popen(args, env=_env(base, creds, api), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=base, start_new_session=True)
    log.close()
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{port}"
    _write_state(lake_uri, {"pid": proc.pid, "port": port, "url": url})
    say(f"starting Label Studio on {url} (first start migrates its database: about a minute) ...")
    _wait_healthy(proc.pid, url, base / "server.log", timeout)
    return _local(lake_uri, url, proc.pid)


def stop(lake_uri: str, timeout: float = 30.0) -> bool:
    """Stop the lake's local server; False when none was running."""
    state = _read_state(lake_uri)
    if state is None:
        return False
    pid = state.pop("pid", None)
    stopped = False
    if _alive(pid) and _is_label_studio(pid):
        _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            _signal_group(pid, signal.SIGKILL)
        stopped = True
    _write_state(lake_uri, state)  # keep the port: a restart reuses it when free
    return stopped


def status(lake_uri: str) -> dict:
    """URL, token location and projects (tasks, annotations) of the lake's server."""
    server = configured() or running(lake_uri)
    out = {"running": server is not None, "managed": bool(server and server.managed),
           "url": server.url if server else None,
           "token_file": str(home(lake_uri) / "credentials.json") if not configured() else
           "PHONELOOP_LABEL_STUDIO_TOKEN", "projects": []}
    if server is None:
        return out
    with server.client() as client:
        out["projects"] = [{"id": p["id"], "title": p["title"], "tasks": p.get("task_number") or 0,
                            "annotations": p.get("total_annotations_number") or 0,
                            "tasks_annotated": p.get("num_tasks_with_annotations") or 0}
                           for p in client.projects()]
    return out


# -- helpers ---------------------------------------------------------------------------------
def _local(lake_uri: str, url: str, pid: int) -> Server:
    creds = credentials(lake_uri)
    return Server(url=url, token=creds["token"], managed=True, token_file=str(home(lake_uri) / "credentials.json"),
                  username=creds["username"], password=creds["password"], pid=pid)


def banned_subnets(api_url: str) -> list[str]:
    """Label Studio's banned subnets with exactly the API's address taken out."""
    from urllib.parse import urlsplit

    host = urlsplit(api_url).hostname or "127.0.0.1"
    try:
        allowed = ipaddress.ip_address(socket.gethostbyname(host) if not _is_ip(host) else host)
    except (OSError, ValueError):
        return list(BANNED_SUBNETS)
    out: list[str] = []
    for subnet in map(ipaddress.ip_network, BANNED_SUBNETS):
        if subnet.version == allowed.version and allowed in subnet:
            single = ipaddress.ip_network(f"{allowed}/{allowed.max_prefixlen}")
            out.extend(str(n) for n in sorted(subnet.address_exclude(single)))
        else:
            out.append(str(subnet))
    return out


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _env(base: Path, creds: dict, api_url: str = DEFAULT_API_URL) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _UNPREFIXED and not k.startswith("LABEL_STUDIO_")}
    env.update({
        "LABEL_STUDIO_BASE_DATA_DIR": str(base / "data"),
        "LABEL_STUDIO_USERNAME": creds["username"], "LABEL_STUDIO_PASSWORD": creds["password"],
        "LABEL_STUDIO_USER_TOKEN": creds["token"], "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "COLLECT_ANALYTICS": "false", "LATEST_VERSION_CHECK": "false", "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": "",
        "SSRF_PROTECTION_ENABLED": "true",
        "USE_DEFAULT_BANNED_SUBNETS": "false",  # replaced by the same list minus the API's address:
        "USER_ADDITIONAL_BANNED_SUBNETS": ",".join(banned_subnets(api_url)),
        "PYTHONUNBUFFERED": "1",
    })
    return env


def _wait_healthy(pid: int, url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise ServerFailedToStart(f"Label Studio exited:\n{_tail(log)}")
        if healthy(url):
            return
        time.sleep(1.0)
    _signal_group(pid, signal.SIGKILL)
    raise ServerFailedToStart(f"Label Studio did not answer {url}/health within {timeout:.0f} s:\n{_tail(log)}")


def healthy(url: str) -> bool:
    """Whether ``<url>/health`` answers UP (without the token, and without loading the SDK)."""
    try:
        response = httpx.get(f"{url}/health", timeout=3, trust_env=False)
    except httpx.HTTPError:
        return False
    return response.status_code == 200 and "UP" in response.text


def _tail(log: Path, lines: int = 20) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _port_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on ``port`` now. Probed as the server binds, with
    SO_REUSEADDR: connections of a crashed server linger in TIME_WAIT for a minute, and
    they do not keep a new listener off the port."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(1)
        except OSError:
            return False
    return True


def _free_port(preferred: int, host: str = "127.0.0.1") -> int:
    if _port_free(preferred, host):
        return preferred
    with socket.socket() as sock:
        try:
            sock.bind((host, 0))
        except OSError:
            raise ServerFailedToStart(f"no free TCP port on {host}") from None
        return sock.getsockname()[1]


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of this process counts as gone
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return True


def _is_label_studio(pid: int) -> bool:
    """Whether ``pid`` still runs label-studio (a stale pid file may name a reused pid)."""
    try:
        return b"label-studio" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no procfs (macOS): trust the pid file
    except OSError:
        return False


def _end_leftovers(pid: int | None) -> None:
    """Kill the label-studio processes still in the process group of a server that died (its
    group id is its pid), so its port is free again; processes of other programs are left alone."""
    if not pid or not Path("/proc").is_dir():
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            group = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2])
            ours = group == pid and b"label-studio" in (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ours:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _signal_group(pid: int | None, sig: int) -> None:
    if not pid:
        return
    try:
        os.killpg(pid, sig)  # the server runs in its own session: its group id is its pid
    except (ProcessLookupError, PermissionError):
        pass


def _read_state(lake_uri: str) -> dict | None:
    path = home(lake_uri) / "server.json"
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if state.get("pid") or state.get("port") else None


def _write_state(lake_uri: str, state: dict) -> None:
    path = home(lake_uri) / "server.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2) + "\n")
