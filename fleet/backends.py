"""Where phone workers run: spawned local processes (the default), threads of this process, or Ray actors.

A backend makes the two queues (jobs in, results out) and starts one worker per phone:
``target`` ("module:function") is the worker's main loop, called as
``target(phone, *args, parent_pid)`` (``parent_pid`` is None on threads and Ray). ``rollout`` /
``eval`` use ``rollout.worker:work``, ``collect mock`` ``collectors.mock_collect:work``
and ``collect run`` ``collectors.farm_pool:work``; the fleet never imports them, it only
resolves the name. The scheduling over a backend is ``fleet.pool.Pool``.

- ``LocalBackend``: ``multiprocessing`` spawn processes on this machine, queues served by a
  manager process.
- ``ThreadBackend``: threads of this process and ``queue.Queue`` (the adb farm: its work is
  I/O, the phones do the rendering).
- ``RayBackend``: one Ray actor per phone (``ray.util.queue.Queue`` for the queues), on a
  local cluster (``ray.init``) or an existing one (``--address auto`` or
  ``ray://HOST:PORT``). Actors write finished episodes to the lake themselves, so the
  lake must be reachable from every node (an ``s3://`` lake, or one shared folder). Where
  an actor runs is ``fleet.placement`` (a real phone's actor is pinned to the node whose
  adb server sees it; see docs/scale.md).
"""

from __future__ import annotations

import importlib
import os
import queue as queue_module
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from fleet.errors import ActorPending, BackendUnavailable, BadBackend, PlacementInfeasible
from fleet.placement import ACTOR_CPUS, PIN, actor_options, nodes_of, place

BACKENDS = ("local", "ray")
JOIN_SECONDS = 30.0
PENDING_SECONDS = 60.0  # a Ray actor not running this long after it was asked for is an error
QUEUE_LOST = (EOFError, ConnectionError)  # what a manager-served queue raises once its manager process is gone


def load_target(path: str) -> Callable:
    """The worker function a "module:function" name points to."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class LocalBackend:
    def __init__(self, target: str) -> None:
        from datalake.lake import spawn_context

        self.ctx, self.target = spawn_context(), target
        self._manager: Any = None

    def queues(self):
        """Queues served by a manager process, not ``multiprocessing.Queue``: a worker SIGKILLed while it
        held a plain queue's pipe lock (its feeder thread writing a message, or a blocking ``get``) left
        that lock held for good, so every sibling then hung on its next message or at exit. Through the
        manager each worker has its own connection and holds no lock that another needs."""
        if self._manager is None:
            from multiprocessing.managers import SyncManager

            self._manager = SyncManager(ctx=self.ctx)
            self._manager.start(initializer=die_with_parent, initargs=(os.getpid(),))
        return self._manager.Queue(), self._manager.Queue()

    @property
    def manager_pid(self) -> int | None:
        """The queue manager's process (None before ``queues``): killing it ends a pass with QueuesLost."""
        return self._manager._process.pid if self._manager is not None else None

    def start(self, phone: str, kind: str, args: tuple) -> Any:
        proc = self.ctx.Process(target=load_target(self.target), args=(phone, *args, os.getpid()), daemon=True)
        proc.start()
        return proc

    def dead(self, handle) -> bool:
        """The worker process is gone. Asked only about workers whose ``done`` never arrived,
        and only after the results queue stayed empty for a poll: a worker puts ``done``
        (a call the manager answers once the message is queued) before its process ends,
        so a gone worker without one died."""
        return not handle.is_alive()

    def join(self, handles: list) -> None:
        for proc in handles:
            proc.join()
        if self._manager is not None:
            self._manager.shutdown()
            self._manager = None


def die_with_parent(parent_pid: int | None) -> None:
    """Linux: this process gets SIGKILL when the process that started it dies (no orphan workers
    writing to the lake, no orphan queue manager)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if parent_pid is not None and os.getppid() != parent_pid:  # the parent died before prctl
        os._exit(1)


class ThreadBackend:
    """One thread per phone in this process; the same worker protocol, queues from ``queue``."""

    def __init__(self, target: str) -> None:
        self.target = target

    def queues(self):
        return queue_module.Queue(), queue_module.Queue()

    def start(self, phone: str, kind: str, args: tuple) -> threading.Thread:
        thread = threading.Thread(target=load_target(self.target), args=(phone, *args, None), daemon=True,
                                  name=f"phoneloop-{kind}-{phone}")
        thread.start()
        return thread

    def dead(self, handle: threading.Thread) -> bool:
        """Gone without its ``done``: it raised before its loop (``queue.Queue`` hands over a
        ``done`` the moment it is put, so a thread that said it is never asked about)."""
        return not handle.is_alive()

    def join(self, handles: list) -> None:
        for thread in handles:
            thread.join(timeout=JOIN_SECONDS)  # each said "done" (or died): only its last statements are left


class RayBackend:
    """One Ray actor per phone. Before each actor starts, the run's actors so far and this one are
    placed on the cluster's live nodes (``fleet.placement.place``): a missing ``adb:`` resource or too
    few CPUs is ``PlacementInfeasible`` at once, naming the resource, and the actors already started are
    killed (Pool starts every worker before the first job is scheduled). An actor still not running
    ``pending_timeout`` seconds after it was asked for is ``ActorPending``: an error, never a silent
    wait. Callers may ``check`` a whole list of phones before they start anything."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None, *, target: str,
                 run: str | None = None, pending_timeout: float = PENDING_SECONDS) -> None:
        self.target, self.run = target, run or uuid.uuid4().hex[:12]  # actors are named phoneloop-RUN-PHONE
        self.pending_timeout = pending_timeout
        self.ray = ray_connect(address, num_cpus)
        self._actor_class = _actor_class(self.ray)
        self._placed: list[tuple[str, str]] = []  # this pass's (kind, phone) actors
        self._handles: list[RayWorker] = []

    def queues(self):
        """Both queues live on the head node (Ray's ``node:__internal_head__`` resource): losing
        any other node never loses them, and without the head there is no cluster anyway.
        A new pair is a new pass: placement starts again from no actors."""
        from ray.util.queue import Queue

        self._placed, self._handles = [], []
        options = {"num_cpus": 0, "resources": {"node:__internal_head__": 0.001}}
        return Queue(actor_options=options), Queue(actor_options=options)

    def check(self, kind: str, phones: list[str]) -> dict[str, str | None]:
        """Where ``phones``' actors (with this pass's others) would go; PlacementInfeasible when one cannot."""
        return place([*self._placed, *((kind, p) for p in phones)], nodes_of(self.ray))

    def start(self, phone: str, kind: str, args: tuple) -> RayWorker:
        try:
            plan = self.check(kind, [phone])
        except PlacementInfeasible:
            self._kill(self._handles)
            raise
        self._placed.append((kind, phone))
        actor = self._actor_class.options(**actor_options(kind, phone, self.run, plan)).remote()
        handle = RayWorker(phone, actor, actor.ready.remote(), actor.run.remote(self.target, phone, *args),
                           time.monotonic(), plan.get(phone))
        self._handles.append(handle)
        return handle

    def dead(self, handle: RayWorker) -> bool:
        if not handle.running:
            ready, _ = self.ray.wait([handle.ready], timeout=0)
            if not ready:
                waited = time.monotonic() - handle.since
                if waited > self.pending_timeout:
                    self._kill(self._handles)
                    raise ActorPending(self._pending_message(handle, waited))
                return False
            handle.running = True
        ready, _ = self.ray.wait([handle.ref], timeout=0)
        if not ready:
            return False
        try:
            self.ray.get(handle.ref)
        except Exception:  # RayActorError, a worker process that died, a node that left
            return True
        return False

    def _pending_message(self, handle: RayWorker, waited: float) -> str:
        need = {"CPU": ACTOR_CPUS, **({handle.resource: PIN} if handle.resource else {})}
        try:
            free = {k: round(v, 3) for k, v in self.ray.available_resources().items()
                    if k == "CPU" or k.startswith("adb:")}
        except Exception:  # noqa: BLE001  the cluster itself may be what is gone
            free = "unknown"
        return (f"the Ray actor of phone {handle.phone} was still pending after {waited:.0f} s: it needs {need}, "
                f"the cluster has {free} available (other work holds the CPUs, or the node left)")

    def _kill(self, handles: list[RayWorker]) -> None:
        for handle in handles:
            try:
                self.ray.kill(handle.actor, no_restart=True)
            except Exception:  # an actor on a node that is gone: nothing left to kill
                pass

    def join(self, handles: list) -> None:
        for handle in handles:
            try:
                self.ray.get(handle.ref, timeout=30)
            except Exception:  # already reported as dead
                pass
        self._kill(handles)


@dataclass
class RayWorker:
    """A started phone actor: ``ready`` answers once Ray placed it, ``ref`` once its worker loop ended."""

    phone: str
    actor: Any
    ready: Any
    ref: Any
    since: float  # host monotonic time it was asked for
    resource: str | None  # the adb resource that pins it, if any
    running: bool = False


def ray_connect(address: str | None = None, num_cpus: int | None = None):
    """The ray module, connected to the cluster at ``address`` (a new local one when None) unless it already is."""
    ray = ray_module()
    if not ray.is_initialized():
        _check_reachable(address)
        try:
            ray.init(address=address, num_cpus=num_cpus if address is None else None,
                     include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise BackendUnavailable(f"cannot start or reach Ray at {address or 'a new local cluster'}: {exc}") \
                from None
    return ray


def _check_reachable(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail in seconds, not minutes, when a named cluster does not answer (ray.init keeps retrying)."""
    if address in (None, "", "auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise BadBackend(f"--address must be auto, HOST:PORT or ray://HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise BackendUnavailable(f"cannot reach the Ray cluster at {address}: {exc}") from None


def ray_module():
    try:
        import ray
    except ImportError:
        raise BackendUnavailable("--backend ray needs the ray package: pip install 'phoneloop[scale]'") from None
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
        """One phone: runs the worker ``target`` ("module:function") until the jobs run out."""

        def ready(self) -> bool:
            return True

        def run(self, target: str, phone: str, *args) -> str:
            load_target(target)(phone, *args, None)
            return phone

    return PhoneWorker


def check_backend(name: str, address: str | None = None) -> None:
    """The --backend/--address pair is valid (BadBackend naming the bad one)."""
    if name not in BACKENDS:
        raise BadBackend(f"--backend must be one of {', '.join(BACKENDS)}, not {name!r}")
    if name == "local" and address:
        raise BadBackend("--address is for --backend ray")


def make_backend(name: str, address: str | None = None, *, target: str,
                 run: str | None = None) -> LocalBackend | RayBackend:
    check_backend(name, address)
    if name == "local":
        return LocalBackend(target)
    return RayBackend(address=address, target=target, run=run)
