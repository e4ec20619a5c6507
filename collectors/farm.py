"""A device farm: list the phones an adb server sees, and collect on several at once.

    rows = list_phones(port=5037)                 # serial, state, and screen facts for usable phones
    report = collect_on_devices("./lake", ["emulator-5554", "emulator-5556"], ["SettingsWifiOff"],
                                seeds=range(4), port=5037)

One worker process per serial (spawn start method), each running its share of the
(task, seed) jobs through ``run_episode`` on its own ``AdbPhone``. A phone that is
unusable at the start fails its jobs with the reason; one that goes offline mid-episode
yields a failed episode with ``failure_reason`` and the rest of the run continues. The
parent writes every episode in one batch through the lake API.
"""

from __future__ import annotations

import importlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from collectors.adb_phone import AdbPhone, client, list_devices
from collectors.errors import CollectorError, EpisodeAborted
from collectors.loop import CollectReport, OraclePolicy, _instantiate, run_episode, write
from datalake.lake import spawn_context
from datalake.types import Episode


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_phones(host: str = "127.0.0.1", port: int | None = None) -> list[PhoneRow]:
    """Every phone the adb server lists, with screen facts for those in state ``device``."""
    adb = client(host, port)
    rows = []
    for info in list_devices(adb):
        row = PhoneRow(info.serial, info.state)
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


def _worker(serial: str, host: str, port: int, jobs: list[tuple[str, int]], policy: str,
            max_steps: int) -> tuple[list[Episode], list[str]]:
    episodes: list[Episode] = []
    errors: list[str] = []
    try:
        phone = AdbPhone(serial, host=host, port=port)
        factory = load_policy_factory(policy)
    except CollectorError as exc:
        return [], [f"{serial}: {name} seed {seed}: {exc}" for name, seed in jobs]
    for name, seed in jobs:
        task = _instantiate(name, seed)
        try:
            ep = run_episode(phone, factory(phone, task), task if task is not None else name, seed=seed,
                             max_steps=max_steps, meta={"serial": serial})
            episodes.append(ep)
        except (EpisodeAborted, CollectorError) as exc:
            errors.append(f"{serial}: {name} seed {seed}: {exc}")
    return episodes, errors


def collect_on_devices(lake: Any, serials: list[str], tasks: Iterable[str], *, seeds: Iterable[int] = (0,),
                       host: str = "127.0.0.1", port: int | None = None, policy: str = "oracle",
                       max_steps: int = 30) -> CollectReport:
    """Run every (task, seed) job, spread round-robin over ``serials``, one worker process per phone."""
    if not serials:
        raise ValueError("no serials given")
    adb = client(host, port)
    list_devices(adb)  # fail fast, in this process, when no adb server answers
    port = adb.port
    jobs = [(t, s) for t in tasks for s in seeds]
    shares: dict[str, list[tuple[str, int]]] = {s: [] for s in serials}
    for i, job in enumerate(jobs):
        shares[serials[i % len(serials)]].append(job)
    episodes: list[Episode] = []
    errors: list[str] = []
    with ProcessPoolExecutor(max_workers=len(serials), mp_context=spawn_context()) as pool:
        futures = [pool.submit(_worker, s, host, port, share, policy, max_steps) for s, share in shares.items() if share]
        for future in futures:
            eps, errs = future.result()
            episodes += eps
            errors += errs
    return write(lake, episodes, errors)
