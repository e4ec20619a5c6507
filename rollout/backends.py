"""Where rollout workers run: spawned local processes (the default) or Ray actors.

A backend makes the two queues (jobs in, results out) and starts one worker per phone;
the scheduling itself — who gets the next job, what a drop-out or a dead worker means,
when the run is over — is ``rollout.runner._run_workers``, the same for both.

- ``LocalBackend``: ``multiprocessing`` spawn processes and queues on this machine.
- ``RayBackend``: one Ray actor per phone (``ray.util.queue.Queue`` for the queues), on a
  local cluster (``ray.init``) or an existing one (``--address auto`` or
  ``ray://HOST:PORT``). Actors write finished episodes to the lake themselves, so the
  lake must be reachable from every node (an ``s3://`` lake, or one shared folder). A real
  phone's actor asks for the custom resource ``adb:<SERIAL>``, so it is placed on the node
  whose adb server sees that phone: start that node with
  ``ray start --address HEAD:6379 --resources '{"adb:SERIAL": 1}'`` (see docs/scale.md).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from rollout.errors import RolloutError

BACKENDS = ("local", "ray")


class LocalBackend:
    def __init__(self) -> None:
        from datalake.lake import spawn_context

        self.ctx = spawn_context()

    def queues(self):
        return self.ctx.Queue(), self.ctx.Queue()

    def start(self, phone: str, kind: str, args: tuple) -> Any:
        from rollout.worker import work

        proc = self.ctx.Process(target=work, args=(phone, *args, os.getpid()), daemon=True)
        proc.start()
        return proc

    def dead(self, handle) -> bool:
        """The worker is gone without having finished normally."""
        return not handle.is_alive() and handle.exitcode not in (0, None)

    def join(self, handles: list) -> None:
        for proc in handles:
            proc.join()


class RayBackend:
    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self.ray = ray_module()
        if not self.ray.is_initialized():
            _check_reachable(address)
            try:
                self.ray.init(address=address, num_cpus=num_cpus if address is None else None,
                              include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise RolloutError(f"cannot start or reach Ray at {address or 'a new local cluster'}: {exc}") from None
        self._actor_class = _actor_class(self.ray)

    def queues(self):
        from ray.util.queue import Queue

        return Queue(actor_options={"num_cpus": 0}), Queue(actor_options={"num_cpus": 0})

    def start(self, phone: str, kind: str, args: tuple) -> Any:
        options: dict[str, Any] = {"num_cpus": 0.5, "max_restarts": 0, "name": f"phoneloop-{args[3]}-{phone}",
                                   "lifetime": None}
        if kind == "adb":
            options["resources"] = {f"adb:{phone}": 0.001}  # pinned to the node whose adb server sees it
        actor = self._actor_class.options(**options).remote()
        return actor, actor.run.remote(phone, *args)

    def dead(self, handle) -> bool:
        _, ref = handle
        ready, _ = self.ray.wait([ref], timeout=0)
        if not ready:
            return False
        try:
            self.ray.get(ref)
        except Exception:  # RayActorError, a worker process that died, a node that left
            return True
        return False

    def join(self, handles: list) -> None:
        for actor, ref in handles:
            try:
                self.ray.get(ref, timeout=30)
            except Exception:  # already reported as dead
                pass
            self.ray.kill(actor)


def _check_reachable(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail in seconds, not minutes, when a named cluster does not answer (ray.init keeps retrying)."""
    if address in (None, "", "auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RolloutError(f"--address must be auto, HOST:PORT or ray://HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RolloutError(f"cannot reach the Ray cluster at {address}: {exc}") from None


def ray_module():
    try:
        import ray
    except ImportError:
        raise RolloutError("--backend ray needs the ray package: pip install 'phoneloop[scale]'") from None
    return ray


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _actor_class(ray):
    @ray.remote
    class PhoneWorker:
        """One phone: runs ``rollout.worker.work`` until the jobs run out."""

        def run(self, phone: str, *args) -> str:
            from rollout.worker import work

            work(phone, *args, None)
            return phone

    return PhoneWorker


def make_backend(name: str, address: str | None = None) -> LocalBackend | RayBackend:
    if name == "local":
        if address:
            raise RolloutError("--address is for --backend ray")
        return LocalBackend()
    if name == "ray":
        return RayBackend(address=address)
    raise RolloutError(f"--backend must be one of {', '.join(BACKENDS)}, not {name!r}")
