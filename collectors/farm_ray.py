"""`collect run --backend ray`: the farm's phones as Ray actors, each on the node whose adb server sees it.

    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4), backend="ray", address="auto")

The guarantees are the local farm's (``collectors.farm``), the scheduling the rollout's
(``rollout.backends.Pool``): one actor per phone, pinned by the custom resource
``adb:<SERIAL>`` (start each phone host with ``ray start --address HEAD:6379 --resources
'{"adb:SERIAL": 1}'``); an idle actor takes the next (task, seed) job after the same
health check; an episode cut by the phone going offline is written as
``device_offline`` (outcome unknown, verified by none) and its job moves to another
phone, up to ``max_attempts``; the actor then reconnects with backoff, or leaves. Actors
write their episodes to the lake themselves, a few at a time as they finish, so use a
lake every node reaches. An actor that dies hands back its job in flight; afterwards
every job without an episode in the lake runs once more on the phones still there.
"""

from __future__ import annotations

import dataclasses
import queue as queue_module
import threading
import time
import uuid
from dataclasses import asdict
from typing import Any

from collectors.errors import CollectorError, EpisodeAborted
from collectors.loop import CollectReport, _instantiate, run_episode

WORKER = "collectors.farm_ray:work"
WRITE_EVERY, FLUSH_SECONDS = 4, 2.0  # episodes per commit, or sooner after this long


def collect_on_ray(lake, refs: list, tasks: list[str], seeds: list[int], opts, problems: list[str],
                   address: str | None = None) -> CollectReport:
    from rollout.backends import make_backend

    backend = make_backend("ray", address, target=WORKER)
    report = CollectReport(errors=list(problems))
    report.dropped = 0  # type: ignore[attr-defined]
    jobs = [{"task": t, "seed": s, "attempts": 0, "phones": []} for t in tasks for s in seeds]
    labels = [r.label for r in refs]
    dead = _pass(backend, lake.uri, labels, jobs, opts, report)
    if dead:
        missing = _missing(lake, jobs)
        live = [label for label in labels if label not in dead]
        if missing and live:
            report.errors.append(f"{len(missing)} job(s) had no episode in the lake after a phone's actor died: "
                                 "run again")
            _pass(backend, lake.uri, live, missing, opts, report)
        elif missing:
            report.errors.append(f"{len(missing)} job(s) not run: no phone left in the farm")
    return report


def _pass(backend, lake_uri: str, labels: list[str], jobs: list[dict], opts, report: CollectReport) -> set[str]:
    from rollout.backends import Pool

    pool = Pool(backend, "adb", labels, jobs, (lake_uri, asdict(opts)))
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
        report.errors.append(f"{label}: actor died" + (f" during {job['task']} seed {job['seed']}" if job else ""))

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


def work(label: str, lake_uri: str, opts_dict: dict, jobs, results, parent: int | None = None) -> None:
    """One phone's actor: connect, take jobs, health-check, record, write in small batches."""
    from collectors.farm import FarmOptions, PhoneRef, _connect, load_policy_factory
    from datalake.lake import Lake

    opts = FarmOptions(**opts_dict)
    hostport, _, serial = label.rpartition("/")
    host, _, port = hostport.rpartition(":")
    ref, stop = PhoneRef(host, int(port), serial), threading.Event()
    factory, lake = load_policy_factory(opts.policy), Lake.open(lake_uri)
    batch: list = []
    since, phone, unfit = time.monotonic(), None, 0
    try:
        while True:
            if phone is None:
                phone, why = _connect(ref, opts, stop)
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
    from collectors.farm import OFFLINE, _needs_ime, health

    task = _instantiate(job["task"], job["seed"])
    try:
        reason = health(phone, _needs_ime(task), opts.min_battery)
        if reason is not None:
            return {"kind": "unfit", "reason": reason}, None
        ep = run_episode(phone, factory(phone, task), task if task is not None else job["task"], seed=job["seed"],
                         max_steps=opts.max_steps, meta={"serial": ref.serial, "adb": f"{ref.host}:{ref.port}",
                                                         "attempt": job["attempts"] + 1})
    except (EpisodeAborted, CollectorError) as exc:  # gone before the first step, or during the health check
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
