"""A device farm that survives its phones: list phones on several adb servers, and collect from one job queue.

    rows = list_phones(port=5037)                 # serial, state, and screen facts for usable phones
    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4),
                                adb=["127.0.0.1:5037", "10.0.0.7:5037"])   # [] = every online phone

The lake is opened and checked before the first job. Each phone has a worker (a thread
here, or a Ray actor with ``backend="ray"``) that takes the next (task, seed) job from
one queue when it is idle, so a slow phone simply takes fewer jobs; the scheduling is
``fleet.pool.Pool``, the one every phone command shares (``collectors.farm_pool``).
Before each job a health check runs: screen on and unlocked, battery above
``min_battery``, and the ADBKeyBoard IME present when the job types non-ASCII text. A
phone that goes offline mid-episode has that episode retried on another phone (up to
``max_attempts``); the dropped attempt is kept with ``meta.failure_reason =
"device_offline"``, outcome ``unknown`` and ``verified_by = "none"``, so it does not
count against the policy. The phone then reconnects with exponential backoff and
rejoins, or leaves the farm after ``reconnects`` failed tries. Workers write their
episodes a few at a time as they finish.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from collectors.collect import CollectReport
from phones.adb_phone import AdbPhone, client, list_devices
from phones.episode import OraclePolicy
from phones.errors import DeviceNotFound, PhoneError

OFFLINE = "device_offline"


@dataclass
class PhoneRow:
    serial: str
    state: str
    width: int | None = None
    height: int | None = None
    dpi: int | None = None
    model: str | None = None
    kind: str | None = None
    error: str | None = None
    adb: str | None = None  # host:port of the adb server that lists it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_phones(host: str = "127.0.0.1", port: int | None = None) -> list[PhoneRow]:
    """Every phone the adb server lists, with screen facts for those in state ``device``."""
    adb = client(host, port)
    rows = []
    for info in list_devices(adb):
        row = PhoneRow(info.serial, info.state, adb=f"{host}:{adb.port}")
        if info.state == "device":
            try:
                phone = AdbPhone(info.serial, host=host, port=adb.port)
                d = phone.device()
                row.width, row.height, row.dpi, row.model, row.kind = d.width, d.height, d.extra["dpi"], \
                    d.extra["model"], d.kind
            except PhoneError as exc:
                row.error = str(exc)
        rows.append(row)
    return rows


def load_policy_factory(spec: str):
    """``oracle`` or ``module:callable`` where ``callable(phone, task) -> Policy``."""
    if spec == "oracle":
        return OraclePolicy.factory
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"policy {spec!r} must be 'oracle' or 'module:callable'")
    return getattr(importlib.import_module(module), name)


# --- phones --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PhoneRef:
    host: str
    port: int
    serial: str

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}/{self.serial}"


def parse_adb(spec: str) -> tuple[str, int]:
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"--adb {spec!r} must be HOST:PORT (e.g. 127.0.0.1:5037)")
    return host, int(port)


def resolve_phones(serials: list[str], servers: list[tuple[str, int]]) -> tuple[list[PhoneRef], list[str]]:
    """The phones to use (all online ones when ``serials`` is empty) and why others cannot be used."""
    listed: list[tuple[PhoneRef, str]] = []
    for host, port in servers:
        listed += [(PhoneRef(host, port, d.serial), d.state) for d in list_devices(client(host, port))]
    refs, problems = [], []
    if not serials:
        return [r for r, s in listed if s == "device"], [f"{r.label}: {s}" for r, s in listed if s != "device"]
    for want in serials:
        match = [(r, s) for r, s in listed if want in (r.serial, r.label)]
        if not match:
            shown = ", ".join(r.label for r, _ in listed) or "none"
            problems.append(f"{want}: not listed by any adb server ({', '.join(f'{h}:{p}' for h, p in servers)}; "
                            f"listed: {shown})")
        for r, s in match:
            refs.append(r)  # offline or unauthorized ones join and keep trying to connect with backoff
    return refs, problems


def health(phone: AdbPhone, needs_ime: bool, min_battery: int) -> str | None:
    """Why ``phone`` should not take a job now, or None when it is fit."""
    out = phone.run("dumpsys power | grep -E 'mWakefulness=|mHoldingDisplaySuspendBlocker'; "
                    "dumpsys window | grep -E 'mDreamingLockscreen|mShowingLockscreen|isStatusBarKeyguard'; "
                    "dumpsys battery | grep level")
    if "mWakefulness=" in out and "mWakefulness=Awake" not in out:
        return "screen off"
    if "mShowingLockscreen=true" in out or "mDreamingLockscreen=true" in out or "isStatusBarKeyguard=true" in out:
        return "locked (keyguard showing)"
    level = next((int(tok) for line in out.splitlines() if "level:" in line
                  for tok in line.split() if tok.isdigit()), None)
    if level is not None and level < min_battery:
        return f"battery {level}% < {min_battery}%"
    if needs_ime:
        from phones.text import ADB_KEYBOARD

        if ADB_KEYBOARD not in phone.run("ime list -s"):
            return f"non-ASCII typing needs the ADBKeyBoard IME ({ADB_KEYBOARD}), not installed"
    return None


def _needs_ime(task: Any) -> bool:
    params = getattr(task, "params", None) or {}
    return any(isinstance(v, str) and not v.isascii() for v in params.values())


@dataclass
class FarmOptions:
    policy: str = "oracle"
    max_steps: int = 30
    max_attempts: int = 3  # tries of one job over the farm
    reconnects: int = 5  # failed reconnect tries before a phone leaves the farm
    backoff: float = 0.5  # first reconnect wait, doubled each try (capped at 30 s)
    min_battery: int = 15


def _connect(ref: PhoneRef, opts: FarmOptions, stop: threading.Event) -> tuple[AdbPhone | None, str]:
    wait, last = opts.backoff, ""
    for attempt in range(opts.reconnects + 1):
        try:
            return AdbPhone(ref.serial, host=ref.host, port=ref.port), ""
        except PhoneError as exc:
            last = str(exc)
        if attempt < opts.reconnects and stop.wait(wait):
            break
        wait = min(wait * 2, 30.0)
    return None, last


def check_lake(lake: Any) -> Any:
    """Open the lake and read its table versions, so a missing or broken lake fails before any collection."""
    from datalake.lake import Lake

    target = lake if isinstance(lake, Lake) else Lake.open(str(lake))
    target.versions()
    return target


def collect_on_devices(lake: Any, serials: list[str], tasks: Iterable[str], *, seeds: Iterable[int] = (0,),
                       host: str = "127.0.0.1", port: int | None = None, adb: list[str] | None = None,
                       options: FarmOptions | None = None, backend: str = "local", address: str | None = None,
                       **kw: Any) -> CollectReport:
    """Run every (task, seed) job from one queue over the phones of one or more adb servers
    (one thread per phone; ``backend="ray"``: one Ray actor per phone, see ``collectors.farm_pool``)."""
    from fleet.backends import check_backend

    check_backend(backend, address)
    opts = options or FarmOptions(**kw)
    load_policy_factory(opts.policy)
    target = check_lake(lake)
    servers = [parse_adb(s) for s in adb] if adb else [(host, client(host, port).port)]
    refs, problems = resolve_phones(list(serials), servers)
    if not refs:
        raise DeviceNotFound("no usable phone: " + ("; ".join(problems) or "the adb servers list no phones"))
    from collectors.farm_pool import collect_on_backend

    return collect_on_backend(target, refs, list(tasks), list(seeds), opts, problems, backend, address)
