"""The farm's scheduling, one code path for every backend: `collect run` over adb phones.

    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4))                    # threads
    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4), backend="ray", address="auto")

The decisions are ``fleet.pool.Pool``'s (shared with ``rollout``, ``eval`` and
``collect mock``): one job queue, an idle phone takes the next (task, seed) job, a job
handed back goes to whichever phone asks next, a worker that dies hands back its job in
flight. What the farm adds is what its messages mean (``_pass.handle``): a phone that
fails its health check hands the job back untouched; an episode cut by the phone going
offline is written as ``device_offline`` (outcome unknown, verified by none) and its job
is requeued, up to ``max_attempts``; the phone then reconnects with backoff and rejoins,
or leaves the farm.

Both backends run the same worker (``work``): ``local`` as one thread per phone in this
process (``fleet.backends.ThreadBackend``: adb work is I/O, the phone does the
rendering), ``ray`` as one Ray actor per phone, pinned by the custom resource
``adb:<SERIAL>`` to the node whose adb server sees it (start each phone host with
``ray start --address HEAD:6379 --resources '{"adb:SERIAL": 1}'``). Workers write their
episodes to the lake themselves, a few at a time as they finish (so on Ray use a lake
every node reaches). After a worker died, every job without an episode in the lake runs
once more on the phones still there.
"""

from __future__ import annotations

import dataclasses
import queue as queue_module
import threading
import time
import uuid
from dataclasses import asdict
from typing import Any

from collectors.collect import CollectReport
from collectors.farm_phones import OFFLINE, FarmOptions, PhoneRef, connect, health, load_policy_factory, needs_ime
from phones.episode import instantiate, run_episode
from phones.errors import PhoneError

WORKER = "collectors.farm_pool:work"
WRITE_EVERY, FLUSH_SECONDS = 4, 2.0  # episodes per commit, or sooner after this long


def collect_on_backend(lake, refs: list, tasks: list, seeds: list[int], opts, problems: list[str],
                       backend: str = "local", address: str | None = None) -> CollectReport:
    """Every (task, seed) job over ``refs`` on ``backend`` ("local": threads, "ray": actors)."""
    from fleet.backends import ThreadBackend, make_backend

    runner = ThreadBackend(WORKER) if backend == "local" else make_backend(backend, address, target=WORKER)
    # a thread shares this process's credentials; an actor on another node reads its own environment
    target = {"uri": lake.uri, "storage_options": lake.storage_options} if backend == "local" else lake.uri
    report = CollectReport(errors=list(problems))
    report.dropped = 0  # type: ignore[attr-defined]
    jobs = [{"task": t, "seed": s, "attempts": 0, "phones": []} for t in tasks for s in seeds]
    labels = [r.label for r in refs]
    dead = _pass(runner, target, labels, jobs, opts, report)
    if dead:
        missing = _missing(lake, jobs)
        live = [label for label in labels if label not in dead]
        if missing and live:
            report.errors.append(f"{len(missing)} job(s) had no episode in the lake after a phone's worker died: "
                                 "run again")
            _pass(runner, target, live, missing, opts, report)
        elif missing:
            report.errors.append(f"{len(missing)} job(s) not run: no phone left in the farm")
    lake.invalidate()  # the workers wrote through their own handles: the caller's sees their commits
    return report


def _pass(backend, lake_target, labels: list[str], jobs: list[dict], opts, report: CollectReport) -> set[str]:
    from fleet.pool import Pool

    # every phone gets a worker, even with fewer jobs: a farm's phone may leave before its first job
    pool = Pool(backend, "adb", labels, jobs, (lake_target, asdict(opts)), every_phone=True)
    dead: set[str] = set()

    def handle(message: dict) -> int:
        kind, job = message["kind"], message.get("job")
        if kind == "episode":
            report.episodes += 1
            report.outcomes[message["outcome"]] = report.outcomes.get(message["outcome"], 0) + 1
            return 1
        if kind == "written":
            report.written += message["written"]
            report.skipped += message["skipped"]
            report.quarantined += message["quarantined"]
            report.errors.extend(message["reasons"])
            return 0
        if kind == "unfit":  # failed its health check: the job waits for a fit phone
            pool.requeue(job)
            return 0
        if kind == "offline":
            report.dropped += int(message["recorded"])  # type: ignore[attr-defined]
            job = {**job, "attempts": job["attempts"] + 1, "phones": [*job["phones"], message["phone"]]}
            if job["attempts"] < opts.max_attempts:
                pool.requeue(job)
                return 0
            report.errors.append(f"{job['task']} seed {job['seed']}: gave up after {job['attempts']} attempts on "
                                 f"{', '.join(job['phones'])} ({message['error']})")
            return 1
        report.errors.append(message["error"])  # "error": a phone that left, or a job that crashed
        return int(job is not None)

    def on_death(label, _handle, job) -> None:
        dead.add(label)
        report.errors.append(f"{label}: worker died" + (f" during {job['task']} seed {job['seed']}" if job else ""))

    left = pool.run(handle, on_death=on_death)
    if left:
        report.errors.append(f"{left} job(s) not run: no phone left in the farm")
    return dead


def _missing(lake, jobs: list[dict]) -> list[dict]:
    lake.invalidate()
    rows = lake.sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed, "
                    "json_extract_string(meta_json, '$.failure_reason') AS failure_reason FROM episodes "
                    "WHERE json_extract_string(meta_json, '$.serial') IS NOT NULL").to_pylist()
    have = {(r["task"], r["seed"]) for r in rows if r["failure_reason"] != "device_offline"}
    return [{**job, "attempts": 0} for job in jobs if (job["task"], job["seed"]) not in have]


def work(label: str, lake_target, opts_dict: dict, jobs, results, parent: int | None = None) -> None:
    """One phone's worker (a thread or an actor): connect, take jobs, health-check, record,
    write in small batches. ``lake_target`` is the lake's URI, or {uri, storage_options}."""
    from datalake.lake import Lake

    opts = FarmOptions(**opts_dict)
    hostport, _, serial = label.rpartition("/")
    host, _, port = hostport.rpartition(":")
    ref, stop = PhoneRef(host, int(port), serial), threading.Event()
    spec = lake_target if isinstance(lake_target, dict) else {"uri": lake_target}
    factory = load_policy_factory(opts.policy)
    lake = Lake.open(spec["uri"], storage_options=spec.get("storage_options"))
    batch: list = []
    since, phone, unfit = time.monotonic(), None, 0
    try:
        while True:
            if phone is None:
                phone, why = connect(ref, opts, stop)
                if phone is None:
                    results.put({"kind": "error", "phone": label, "error": f"{label}: left the farm after "
                                 f"{opts.reconnects} reconnect tries ({why})"})
                    return
            try:
                job = jobs.get(timeout=FLUSH_SECONDS)
            except queue_module.Empty:
                since = _flush(lake, batch, label, results, since)
                continue
            if job is None:
                return
            results.put({"kind": "started", "phone": label, "job": job})
            message, episode = _run_job(phone, ref, factory, job, opts)
            if episode is not None:
                batch.append(episode)
            if message["kind"] == "unfit":
                unfit += 1
                if unfit > opts.reconnects:
                    results.put({"kind": "unfit", "phone": label, "job": job})
                    results.put({"kind": "error", "phone": label, "error": f"{label}: left the farm: "
                                 f"{message['reason']}"})
                    return
                stop.wait(min(opts.backoff * 2 ** unfit, 30.0))
            else:
                unfit = 0
            if message["kind"] == "offline":
                since = _flush(lake, batch, label, results, since)
                phone = None  # reconnect before the next job
            results.put({**message, "phone": label, "job": job})
            if len(batch) >= WRITE_EVERY or (batch and time.monotonic() - since >= FLUSH_SECONDS):
                since = _flush(lake, batch, label, results, since)
    finally:
        _flush(lake, batch, label, results, since)
        results.put({"kind": "done", "phone": label})


def _run_job(phone, ref, factory, job: dict, opts) -> tuple[dict, Any]:
    task = instantiate(job["task"], job["seed"])
    try:
        reason = health(phone, needs_ime(task), opts.min_battery)
        if reason is not None:
            return {"kind": "unfit", "reason": reason}, None
        ep = run_episode(phone, factory(phone, task), task if task is not None else job["task"], seed=job["seed"],
                         max_steps=opts.max_steps, meta={"serial": ref.serial, "adb": f"{ref.host}:{ref.port}",
                                                         "attempt": job["attempts"] + 1})
    except PhoneError as exc:  # gone before the first step, or during the health check
        return {"kind": "offline", "recorded": False, "error": str(exc)}, None
    if not str(ep.meta.get("failure_reason", "")).startswith("device offline"):
        return {"kind": "episode", "outcome": ep.outcome}, ep
    meta = {**ep.meta, "failure_reason": OFFLINE, "offline_detail": ep.meta["failure_reason"],
            "counts_against_policy": False}
    dropped_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ep.episode_id}/dropped/{ref.label}/{job['attempts'] + 1}"))
    dropped = dataclasses.replace(ep, outcome="unknown", verified_by="none", meta=meta, episode_id=dropped_id)
    return {"kind": "offline", "recorded": True, "error": "device offline"}, dropped


def _flush(lake, batch: list, label: str, results, since: float) -> float:
    if batch:
        written = lake.write_episodes(list(batch), origin="collect")
        results.put({"kind": "written", "phone": label, "written": written.written, "skipped": written.skipped,
                     "quarantined": written.quarantined, "reasons": list(written.reasons)})
        batch.clear()
    return time.monotonic()
