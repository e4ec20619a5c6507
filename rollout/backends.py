"""Where phone workers run — spawned local processes (the default) or Ray actors — and the
one scheduling loop every command that drives phones shares (``Pool``).

A backend makes the two queues (jobs in, results out) and starts one worker per phone:
``target`` ("module:function") is the worker's main loop, called as
``target(phone, *args, parent_pid)`` (``parent_pid`` is None on Ray). ``rollout`` /
``eval`` use ``rollout.worker:work``, ``collect mock`` ``collectors.mock_collect:work``
and ``collect run`` ``collectors.farm_pool:work``. The scheduling itself — the next job goes to
whichever worker asks, a dead worker's job in flight goes back to the queue, when the run
is over — is ``Pool.run``; what a message means (an episode, a drop-out to retry) is the
caller's ``handle``.

The worker protocol, on the results queue (every message has ``kind`` and ``phone``):
``started`` {job} when a worker took a job; ``done`` when it stopped; any other message
is the caller's, and ``handle`` says how many jobs it ended. A ``None`` job is the stop
signal.

- ``LocalBackend``: ``multiprocessing`` spawn processes and queues on this machine.
- ``ThreadBackend``: threads of this process and ``queue.Queue`` (the adb farm: its work is
  I/O, the phones do the rendering).
- ``RayBackend``: one Ray actor per phone (``ray.util.queue.Queue`` for the queues), on a
  local cluster (``ray.init``) or an existing one (``--address auto`` or
  ``ray://HOST:PORT``). Actors write finished episodes to the lake themselves, so the
  lake must be reachable from every node (an ``s3://`` lake, or one shared folder). A real
  phone's actor asks for the custom resource ``adb:<SERIAL>``, so it is placed on the node
  whose adb server sees that phone: start that node with
  ``ray start --address HEAD:6379 --resources '{"adb:SERIAL": 1}'`` (see docs/scale.md).
"""

from __future__ import annotations

import importlib
import os
import queue as queue_module
import socket
import threading
import uuid
from typing import Any, Callable

from rollout.errors import QueuesLost, RolloutError

BACKENDS = ("local", "ray")
ROLLOUT_WORKER = "rollout.worker:work"
POLL_SECONDS = 0.5
JOIN_SECONDS = 30.0
QUEUE_LOST = (EOFError, ConnectionError)  # what a manager-served queue raises once its manager process is gone


def _target(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class LocalBackend:
    def __init__(self, target: str = ROLLOUT_WORKER) -> None:
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
        proc = self.ctx.Process(target=_target(self.target), args=(phone, *args, os.getpid()), daemon=True)
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
        thread = threading.Thread(target=_target(self.target), args=(phone, *args, None), daemon=True,
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
    def __init__(self, address: str | None = None, num_cpus: int | None = None, target: str = ROLLOUT_WORKER,
                 run: str | None = None) -> None:
        self.target, self.run = target, run or uuid.uuid4().hex[:12]  # actors are named phoneloop-RUN-PHONE
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
        """Both queues live on the head node (Ray's ``node:__internal_head__`` resource): losing
        any other node never loses them, and without the head there is no cluster anyway."""
        from ray.util.queue import Queue

        options = {"num_cpus": 0, "resources": {"node:__internal_head__": 0.001}}
        return Queue(actor_options=options), Queue(actor_options=options)

    def start(self, phone: str, kind: str, args: tuple) -> Any:
        options: dict[str, Any] = {"num_cpus": 0.5, "max_restarts": 0, "name": f"phoneloop-{self.run}-{phone}",
                                   "lifetime": None}
        if kind == "adb":
            serial = str(phone).rpartition("/")[2]  # a farm phone is HOST:PORT/SERIAL
            options["resources"] = {f"adb:{serial}": 0.001}  # pinned to the node whose adb server sees it
        actor = self._actor_class.options(**options).remote()
        return actor, actor.run.remote(self.target, phone, *args)

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
            try:
                self.ray.kill(actor)
            except Exception:  # an actor on a node that is gone: nothing left to kill
                pass


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
        """One phone: runs the worker ``target`` ("module:function") until the jobs run out."""

        def run(self, target: str, phone: str, *args) -> str:
            _target(target)(phone, *args, None)
            return phone

    return PhoneWorker


def check_backend(name: str, address: str | None = None) -> None:
    """The --backend/--address pair is valid (RolloutError naming the bad one)."""
    if name not in BACKENDS:
        raise RolloutError(f"--backend must be one of {', '.join(BACKENDS)}, not {name!r}")
    if name == "local" and address:
        raise RolloutError("--address is for --backend ray")


def make_backend(name: str, address: str | None = None, *, target: str = ROLLOUT_WORKER,
                 run: str | None = None) -> LocalBackend | RayBackend:
    check_backend(name, address)
    if name == "local":
        return LocalBackend(target)
    return RayBackend(address=address, target=target, run=run)


class Pool:
    """One pass of jobs over one worker per phone: the scheduling every phone command shares.

        pool = Pool(backend, kind, phones, todo, args)      # starts min(phones, jobs) workers
                                                            # (every_phone=True: one per phone)
        pool.run(handle, on_death=...)                      # until every job ended or no worker is left

    ``handle(message)`` gets each of the caller's messages and returns how many jobs it
    ended (0 or 1); it may ``requeue(job)`` (a drop-out retried on another phone) and
    ``retire(phone)`` (that phone takes no more jobs in a later pass). A worker that dies
    without saying ``done`` (a killed process, a lost Ray node) is reported to
    ``on_death(phone, handle, job)`` and the job it held goes back to the queue. A job a
    dead worker had taken but not yet announced cannot be seen: when only such jobs can
    be left, the pass stops, and the caller reruns whatever the lake does not hold. When the
    queues themselves are lost (LocalBackend's manager process died), ``run`` waits for the
    workers to stop and raises QueuesLost; the caller may rerun on a fresh Pool.
    """

    def __init__(self, backend, kind: str, phones: list, todo: list, args: tuple, *,
                 every_phone: bool = False) -> None:
        self.backend = backend
        self.jobs, self.results = backend.queues()
        self.manager_pid = getattr(backend, "manager_pid", None)
        for job in todo:
            self.jobs.put(job)
        chosen = phones if every_phone else phones[:len(todo)]  # a farm's phone may leave before its first job
        self.workers = {phone: backend.start(phone, kind, (*args, self.jobs, self.results)) for phone in chosen}
        self.in_flight: dict[Any, Any] = dict.fromkeys(self.workers)
        self.finished: set = set()
        self.usable = set(self.workers)
        self.pending = len(todo)  # jobs not yet ended; -1 once the stop signals are out
        self.deaths = 0

    def requeue(self, job) -> None:
        self.jobs.put(job)

    def retire(self, phone) -> None:
        self.usable.discard(phone)

    def run(self, handle: Callable[[dict], int], *, on_death: Callable | None = None,
            progress: Callable[[], None] | None = None) -> int:
        """Schedule until done; returns the jobs that never ended (no phone left to run them).
        Raises QueuesLost, once every worker stopped, when the queues' manager process died."""
        try:
            while len(self.finished) < len(self.workers):
                if self.pending == 0:
                    for _ in self.workers:
                        self.jobs.put(None)  # no more jobs: every worker flushes and stops
                    self.pending = -1
                try:
                    message = self.results.get(timeout=POLL_SECONDS)
                except queue_module.Empty:
                    self._reap(on_death)
                    if self.pending > 0 and len(self.finished) == len(self.workers):
                        break
                    if self.pending > 0 and self._only_lost_jobs_left():
                        self.pending = 0  # stop the live workers; the caller reruns the lost job
                    continue
                self._receive(message, handle)
                if progress is not None:
                    progress()
        except QUEUE_LOST as exc:
            self.backend.join(list(self.workers.values()))  # they lose their queues too: they write and stop
            pid = f" (pid {self.manager_pid})" if self.manager_pid else ""
            raise QueuesLost(f"the queue manager{pid} died ({type(exc).__name__}: {exc})") from None
        self.backend.join(list(self.workers.values()))
        return max(self.pending, 0)

    def _receive(self, message: dict, handle: Callable[[dict], int]) -> None:
        kind, phone = message["kind"], message.get("phone")
        if kind == "started":
            self.in_flight[phone] = message["job"]
            return
        if kind == "done":
            self.finished.add(phone)
            return
        ended = handle(message)
        if phone is not None and (ended or message.get("job") is not None):
            self.in_flight[phone] = None  # its job ended (or went back to the queue): it is between jobs
        if self.pending > 0:
            self.pending -= ended

    def _reap(self, on_death: Callable | None) -> None:
        """Notice workers that died without saying so; their job in flight goes back to the queue."""
        for phone, handle in self.workers.items():
            if phone in self.finished or not self.backend.dead(handle):
                continue
            self.finished.add(phone)
            self.usable.discard(phone)
            self.deaths += 1
            job = self.in_flight.get(phone)
            if on_death is not None:
                on_death(phone, handle, job)
            if job is not None and self.pending > 0:
                self.jobs.put(job)  # nothing of it was recorded by this worker: another phone runs it
            # after the stop signals (pending == -1) the caller's lake check runs it again

    def _only_lost_jobs_left(self) -> bool:
        """After a worker died, the jobs still counted as pending may include one it had taken
        from the queue but not yet announced ("started" never arrived): nobody will end it, so
        waiting would hang. When the queue is empty and no live worker holds a job, that is
        the case. Stopping early is always safe: a live worker still busy finishes its episode
        before it reads the stop signal, and the caller reruns whatever is not in the lake."""
        if self.deaths == 0 or not _queue_empty(self.jobs):
            return False
        return all(self.in_flight.get(p) is None for p in self.workers if p not in self.finished)


def _queue_empty(jobs) -> bool:
    try:
        return jobs.empty()
    except (OSError, ValueError):  # a closed queue
        return True


# --- one policy for every phone actor ------------------------------------------------------------
SERVED = "ray-actor:"  # a policy spec naming a PolicyActor: ray-actor:<actor name>


def serve_policy(lake_uri: str, ref: str, name: str, *, max_batch: int = 8, max_wait_ms: float = 20.0,
                 max_queue: int = 64):
    """Load the local checkpoint ``ref`` once, in one Ray actor (named ``name``) that every
    phone actor calls (``ray-actor:<name>`` as their policy). Calls that arrive within
    ``max_wait_ms`` of each other, up to ``max_batch``, are answered by one batched greedy
    ``generate`` (``rollout.model_server``); at most ``max_queue`` requests wait, further
    callers block until there is room (back-pressure, never unbounded memory). Returns
    the actor handle; ``ray.kill`` it when the run is over."""
    ray = ray_module()
    actor = _policy_actor(ray).options(name=name, num_cpus=0, max_concurrency=max_queue + max_batch + 4,
                                       max_restarts=0).remote(lake_uri, ref, max_batch, max_wait_ms, max_queue)
    ray.get(actor.ready.remote(), timeout=600)  # load errors surface here, not in every phone
    return actor


def _policy_actor(ray):
    @ray.remote
    class PolicyActor:
        """A ``ModelServer`` without HTTP: threaded calls feed its batching queue."""

        def __init__(self, lake_uri: str, ref: str, max_batch: int, max_wait_ms: float, max_queue: int) -> None:
            from rollout.model_server import ModelServer

            self.server = ModelServer.load(lake_uri, ref, max_batch=max_batch, max_wait_ms=max_wait_ms,
                                           max_queue=max_queue).start(http=False)

        def ready(self) -> bool:
            return True

        def generate(self, messages: list[dict], images: list[bytes], max_tokens: int) -> str:
            from io import BytesIO

            from PIL import Image

            from rollout.model_server import _Request

            pictures = [Image.open(BytesIO(png)).convert("RGB") for png in images]
            request = self.server.submit(_Request(messages, pictures, max_tokens))
            if request.error:
                raise RuntimeError(request.error)
            return request.text

        def batch_sizes(self) -> list[int]:
            return list(self.server.batch_sizes)

    return PolicyActor


class ActorGenerate:
    """A phone's ``generate(messages, images)`` that calls the named PolicyActor."""

    def __init__(self, spec: str, max_tokens: int, timeout_s: float) -> None:
        self.name, self.max_tokens, self.timeout_s = spec.removeprefix(SERVED), max_tokens, timeout_s
        self.retries = 0
        self._actor = None

    def __call__(self, messages: list[dict], images: list[bytes]) -> str:
        ray = ray_module()
        if self._actor is None:
            self._actor = ray.get_actor(self.name)
        try:
            return ray.get(self._actor.generate.remote(messages, list(images), self.max_tokens),
                           timeout=self.timeout_s)
        except Exception as exc:  # a dead or overloaded policy actor: the episode ends as policy_error
            from rollout.errors import PolicyError

            raise PolicyError(f"policy actor {self.name}: {type(exc).__name__}: {exc}"[:500]) from None
