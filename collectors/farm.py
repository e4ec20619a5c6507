"""A device farm that survives its phones: list phones on several adb servers, and collect from one job queue.

    rows = list_phones(port=5037)                 # serial, state, and screen facts for usable phones
    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4),
                                adb=["127.0.0.1:5037", "10.0.0.7:5037"])   # [] = every online phone

The lake is opened and checked before the first job. Each phone has a worker thread (adb
work is I/O: the phone does the rendering) that takes the next (task, seed) job from one
``JobQueue`` when it is idle, so a slow phone simply takes fewer jobs. Before each job a
health check runs: screen on and unlocked, battery above ``min_battery``, and the
ADBKeyBoard IME present when the job types non-ASCII text. A phone that goes offline
mid-episode has that episode retried on another phone (up to ``max_attempts``); the
dropped attempt is kept with ``meta.failure_reason = "device_offline"``, outcome
``unknown`` and ``verified_by = "none"``, so it does not count against the policy. The
phone then reconnects with exponential backoff and rejoins, or leaves the farm after
``reconnects`` failed tries. The parent writes every episode in one batch.
"""

from __future__ import annotations

import dataclasses
import importlib
import queue
import threading
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from collectors.adb_phone import AdbPhone, client, list_devices
from collectors.errors import CollectorError, DeviceNotFound, EpisodeAborted
from collectors.loop import CollectReport, OraclePolicy, _instantiate, run_episode, write
from datalake.types import Episode

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
            except CollectorError as exc:
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


# --- the job queue ------------------------------------------------------------------------------
@dataclass
class Job:
    task: str
    seed: int
    attempts: int = 0
    phones: list[str] = field(default_factory=list)  # where it was tried


class JobQueue:
    """Jobs for idle workers; ``take`` blocks until a job is free or every job is finished (then None)."""

    def __init__(self, jobs: Iterable[Job]) -> None:
        self._q: queue.Queue[Job] = queue.Queue()
        self._open = 0
        self._cond = threading.Condition()
        for job in jobs:
            self._q.put(job)
            self._open += 1

    def take(self, poll: float = 0.05) -> Job | None:
        while True:
            try:
                return self._q.get(timeout=poll)
            except queue.Empty:
                with self._cond:
                    if self._open == 0:
                        return None

    def give_back(self, job: Job) -> None:
        """Return a job untouched (the phone could not start it) or for another try."""
        self._q.put(job)

    def finish(self) -> None:
        with self._cond:
            self._open -= 1

    def close_all(self) -> list[Job]:
        """Jobs nobody can run any more (every phone left); they are finished as failed."""
        left = []
        while True:
            try:
                left.append(self._q.get_nowait())
            except queue.Empty:
                break
        with self._cond:
            self._open -= len(left)
        return left


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
        from collectors.text import ADB_KEYBOARD

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


@dataclass
class _Results:
    episodes: list[Episode] = field(default_factory=list)
    dropped: list[Episode] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, item: Any) -> None:
        with self.lock:
            getattr(self, kind).append(item)


def _connect(ref: PhoneRef, opts: FarmOptions, stop: threading.Event) -> tuple[AdbPhone | None, str]:
    wait, last = opts.backoff, ""
    for attempt in range(opts.reconnects + 1):
        try:
            return AdbPhone(ref.serial, host=ref.host, port=ref.port), ""
        except CollectorError as exc:
            last = str(exc)
        if attempt < opts.reconnects and stop.wait(wait):
            break
        wait = min(wait * 2, 30.0)
    return None, last


def _worker(ref: PhoneRef, jobs: JobQueue, out: _Results, opts: FarmOptions, stop: threading.Event) -> None:
    factory = load_policy_factory(opts.policy)
    phone: AdbPhone | None = None
    unfit = 0
    while True:
        if phone is None:
            phone, why = _connect(ref, opts, stop)
            if phone is None:
                out.add("errors", f"{ref.label}: left the farm after {opts.reconnects} reconnect tries ({why})")
                return
        job = jobs.take()
        if job is None:
            return
        task = _instantiate(job.task, job.seed)
        try:
            reason = health(phone, _needs_ime(task), opts.min_battery)
            if reason is not None:
                jobs.give_back(job)
                unfit += 1
                if unfit > opts.reconnects:
                    out.add("errors", f"{ref.label}: left the farm: {reason}")
                    return
                stop.wait(min(opts.backoff * 2 ** unfit, 30.0))
                continue
            unfit = 0
            ep = run_episode(phone, factory(phone, task), task if task is not None else job.task, seed=job.seed,
                             max_steps=opts.max_steps, meta={"serial": ref.serial, "adb": f"{ref.host}:{ref.port}",
                                                             "attempt": job.attempts + 1})
        except (EpisodeAborted, CollectorError) as exc:  # gone before the first step, or during the health check
            ep, offline_before = None, str(exc)
        else:
            offline_before = None
        if ep is not None and not str(ep.meta.get("failure_reason", "")).startswith("device offline"):
            out.add("episodes", ep)
            jobs.finish()
            continue
        job.attempts += 1
        job.phones.append(ref.label)
        if ep is not None:
            meta = {**ep.meta, "failure_reason": OFFLINE, "offline_detail": ep.meta["failure_reason"],
                    "counts_against_policy": False}
            dropped_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ep.episode_id}/dropped/{ref.label}/{job.attempts}"))
            out.add("dropped", dataclasses.replace(ep, outcome="unknown", verified_by="none", meta=meta,
                                                   episode_id=dropped_id))  # its own id: a retry may equal it
        if job.attempts < opts.max_attempts:
            jobs.give_back(job)  # another phone (or this one, reconnected) takes it
        else:
            out.add("errors", f"{job.task} seed {job.seed}: gave up after {job.attempts} attempts on "
                              f"{', '.join(job.phones)} ({offline_before or 'device offline'})")
            jobs.finish()
        phone = None  # reconnect before the next job


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
    (``backend="ray"``: one Ray actor per phone, see ``collectors.farm_ray``)."""
    from rollout.backends import check_backend

    check_backend(backend, address)
    opts = options or FarmOptions(**kw)
    load_policy_factory(opts.policy)
    target = check_lake(lake)
    servers = [parse_adb(s) for s in adb] if adb else [(host, client(host, port).port)]
    refs, problems = resolve_phones(list(serials), servers)
    if not refs:
        raise DeviceNotFound("no usable phone: " + ("; ".join(problems) or "the adb servers list no phones"))
    if backend == "ray":
        from collectors.farm_ray import collect_on_ray

        return collect_on_ray(target, refs, list(tasks), list(seeds), opts, problems, address)
    jobs = JobQueue(Job(t, s) for t in tasks for s in list(seeds))
    out, stop = _Results(errors=list(problems)), threading.Event()
    threads = [threading.Thread(target=_worker, args=(r, jobs, out, opts, stop), name=f"farm-{r.label}", daemon=True)
               for r in refs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for job in jobs.close_all():
        out.errors.append(f"{job.task} seed {job.seed}: not run: no phone left in the farm")
    report = write(target, out.episodes + out.dropped, out.errors)
    report.dropped = len(out.dropped)  # type: ignore[attr-defined]
    return report
