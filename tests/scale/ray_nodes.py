"""A Ray head and a second node on 127.0.0.1 as separate `ray start --block` processes, for tests.

    with RayNodes() as nodes:                # head (1 CPU) + node (1 CPU), every port picked free
        rollout(..., RolloutSpec(..., backend="ray", address=nodes.address))
        nodes.kill_raylet(nodes.worker)      # the second node's raylet dies mid-run

Each node gets its own ports (GCS, node manager, object manager, agents, metrics, worker
range) and one private temp dir, so other clusters on the machine are untouched; teardown
kills exactly the processes these two `ray start` commands started (by pid, never
`ray stop`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from tests.s3_server import free_port

RAY = str(Path(sys.executable).with_name("ray"))
# `ray start` turns on token auth by itself when a ~/.ray/auth_token exists (another
# cluster's on this machine), which its own clients then fail: this test cluster on
# 127.0.0.1 runs without. (Ray dials this host's own interface address for 127.0.0.1:
# the traffic never leaves the machine.) Drivers of these nodes run with ENV too.
ENV = {**os.environ, "RAY_ADDRESS": "", "RAY_USAGE_STATS_ENABLED": "0",
       "RAY_AUTH_MODE": "disabled"}


def _ports(n: int) -> list[int]:
    return [free_port() for _ in range(n)]


class RayNodes:
    def __init__(self, head_resources: str = '{"phoneloop_head": 1}', worker_resources: str | None = None) -> None:
        self.tmp = tempfile.mkdtemp(prefix="rn", dir="/tmp")  # short: Ray's socket paths have a length limit
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.head_resources, self.worker_resources = head_resources, worker_resources
        self.head: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.started: set[int] = set()

    def _start(self, args: list[str]) -> subprocess.Popen:
        manager, objects, agent, grpc, env_agent, metrics = _ports(6)
        low = free_port()
        cmd = [RAY, "start", "--block", "--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--disable-usage-stats",
               "--node-manager-port", str(manager), "--object-manager-port", str(objects),
               "--dashboard-agent-listen-port", str(agent), "--dashboard-agent-grpc-port", str(grpc),
               "--runtime-env-agent-port", str(env_agent), "--metrics-export-port", str(metrics),
               "--min-worker-port", str(low), "--max-worker-port", str(low + 40), *args]
        log = open(os.path.join(self.tmp, f"ray-start-{len(self.started)}.log"), "wb")
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=ENV, start_new_session=True)
        log.close()
        self.started.add(proc.pid)
        return proc

    def __enter__(self) -> RayNodes:
        try:
            self.head = self._start(["--head", "--port", str(self.port), "--temp-dir", self.tmp,
                                     "--include-dashboard", "false", "--dashboard-port", str(free_port()),
                                     "--resources", self.head_resources])
            self.wait_nodes(1)
            extra = ["--resources", self.worker_resources] if self.worker_resources else []
            self.worker = self._start(["--address", self.address, *extra])
            self.wait_nodes(2)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def wait_nodes(self, n: int, timeout_s: float = 120) -> None:
        """Until the cluster lists ``n`` alive nodes (asked from a fresh process: no driver state here)."""
        code = ("import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
                "print(sum(1 for n in ray.nodes() if n['Alive']))")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for proc in (self.head, self.worker):
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"ray start exited with {proc.returncode}: {self._log(proc)}")
            try:
                out = subprocess.run([sys.executable, "-c", code, self.address], capture_output=True, text=True,
                                     timeout=60, env=ENV)
                if out.returncode == 0 and int(out.stdout.strip().splitlines()[-1]) >= n:
                    return
                self.last_error = out.stderr[-2000:]
            except (subprocess.TimeoutExpired, ValueError, IndexError):
                pass
            time.sleep(1)
        raise RuntimeError(f"the Ray cluster at {self.address} did not reach {n} nodes in {timeout_s:.0f} s: "
                           f"{getattr(self, 'last_error', '')}")

    def _log(self, proc: subprocess.Popen) -> str:
        index = 0 if proc is self.head else 1
        try:
            return Path(self.tmp, f"ray-start-{index}.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def processes(self, proc: subprocess.Popen) -> list[psutil.Process]:
        try:
            return [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def kill_raylet(self, proc: subprocess.Popen) -> int:
        """SIGKILL that node's raylet (its workers and actors die with it); returns its pid."""
        for p in self.processes(proc):
            try:
                if p.name() == "raylet" or "raylet" in " ".join(p.cmdline()[:1]):
                    p.kill()
                    return p.pid
            except psutil.NoSuchProcess:
                continue
        raise RuntimeError("no raylet under that node's ray start process")

    def __exit__(self, *exc) -> None:
        victims: list[psutil.Process] = []
        for proc in (self.worker, self.head):
            if proc is not None:
                victims += self.processes(proc)
        victims += [p for p in psutil.process_iter(["cmdline"]) if self.tmp in " ".join(p.info["cmdline"] or [])]
        for proc in (self.worker, self.head):
            if proc is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # its own session: only what this ray start started
                except ProcessLookupError:
                    pass
        for p in victims:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(victims, timeout=20)
        for proc in (self.worker, self.head):
            if proc is not None:
                proc.wait(timeout=20)
        shutil.rmtree(self.tmp, ignore_errors=True)
