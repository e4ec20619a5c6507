"""The farm's scheduling, one code path for every backend: `collect run` over adb phones.

    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4))                    # threads
    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4), backend="ray", address="auto")

The decisions are ``fleet.pool.Pool``'s (shared with ``rollout``, ``eval`` and
``collect mock``): one job queue, an idle phone takes the next (task, seed) job, a job
handed back goes to whichever phone asks next, a worker that dies hands back its job in
flight. What the farm adds is what its messages mean (``_pass.handle``): a phone that
fails its health check hands the job back untouched; an episode cut by the phone going
offline, or by its host's adb server dying, is kept as a partial episode
(``failure_reason`` ``device_offline`` or ``host_unreachable``, ``meta.offline_detail`` the
error, outcome unknown, verified by none) and its job is requeued, up to ``max_attempts``
tries; the phone then reconnects with backoff and rejoins, or leaves the farm. Any other
exception a job raises (a policy, an oracle, the phone) is that job's error: it is named
in the report and the job is requeued the same way. A worker does not retry a job it
failed while another phone may take it (it hands it back once). Every job that ends with
no episode is listed in ``report.failed_jobs``; the command exits non-zero on any.

Both backends run the same worker (``work``): ``local`` as one thread per phone in this
process (``fleet.backends.ThreadBackend``: adb work is I/O, the phone does the
rendering), ``ray`` as one Ray actor per phone, pinned by the custom resource
``adb:HOST:PORT/SERIAL`` to the node whose adb server sees it (start each phone host with
``ray start --address HEAD:6379 --resources '{"adb:HOST:PORT/SERIAL": 1}'``; see ``fleet.placement``). Workers write their
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
from phones.errors import AdbServerUnreachable, DeviceNotFound, DeviceOffline, DeviceUnauthorized, EpisodeAborted

UNREACHABLE = "host_unreachable"  # the phone's adb server (its host) died mid-episode
CUT = (OFFLINE, UNREACHABLE)  # failure reasons of an attempt kept as a partial episode; its job runs again
CUT_PREFIXES = {"device offline": OFFLINE, "host unreachable": UNREACHABLE}  # run_episode's failure_reason
GONE = (AdbServerUnreachable, DeviceOffline, DeviceNotFound, DeviceUnauthorized, EpisodeAborted)

WORKER = "collectors.farm_pool:work"
WRITE_EVERY, FLUSH_SECONDS = 4, 2.0  # episodes per commit, or sooner after this long


def collect_on_backend(lake, refs: list, tasks: list, seeds: list[int], opts, problems: list[str],
                       backend: str = "local", address: str | None = None) -> CollectReport:
    """Every (task, seed) job over ``refs`` on ``backend`` ("local": threads, "ray": actors).
    ``report.failed_jobs`` names every job that ended with no episode (empty only when each job got one)."""
    from fleet.backends import ThreadBackend, make_backend

    runner = ThreadBackend(WORKER) if backend == "local" else make_backend(backend, address, target=WORKER)
    # a thread shares this process's credentials; an actor on another node reads its own environment
    target = {"uri": lake.uri, "storage_options": lake.storage_options} if backend == "local" else lake.uri
    report = CollectReport(errors=list(problems))
    jobs = [{"task": t, "seed": s, "attempts": 0, "phones": []} for t in tasks for s in seeds]
    labels = [r.label for r in refs]
    done: set[tuple[str, int]] = set()  # jobs whose episode a worker reported
    gave_up: dict[tuple[str, int], str] = {}
    dead = _pass(runner, target, labels, jobs, opts, report, done, gave_up)
    missing = _missing(lake, jobs) if dead else []
    if missing:  # episodes a dead worker finished but had not written, and jobs it never started
        live = [label for label in labels if label not in dead]
        if live:
            report.errors.append(f"{len(missing)} job(s) had no episode in the lake after a phone's worker died: "
                                 "run again")
            done.difference_update((j["task"], j["seed"]) for j in missing)
            _pass(runner, target, live, missing, opts, report, done, gave_up)
            missing = _missing(lake, jobs)
    lost = {(j["task"], j["seed"]) for j in missing}
    for job in jobs:
        key = (job["task"], job["seed"])
        if key not in done or key in lost:
            why = gave_up.get(key) or ("no phone left in the farm" if key not in done else "its episode was not "
                                       "written (the worker died)")
            report.failed_jobs.append(f"{job['task']} seed {job['seed']}: {why}")
    lake.invalidate()  # the workers wrote through their own handles: the caller's sees their commits
    return report


def _pass(backend, lake_target, labels: list[str], jobs: list[dict], opts, report: CollectReport,
          done: set, gave_up: dict) -> set[str]:
    from fleet.pool import Pool

    # every phone gets a worker, even with fewer jobs: a farm's phone may leave before its first job
    pool = Pool(backend, "adb", labels, jobs, (lake_target, asdict(opts)), every_phone=True)
    dead: set[str] = set()

    def handle(message: dict) -> int:
        kind, job = message["kind"], message.get("job")
        if kind == "episode":
            report.episodes += 1
            report.outcomes[message["outcome"]] = report.outcomes.get(message["outcome"], 0) + 1
            done.add((job["task"], job["seed"]))
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
        if kind in ("offline", "failed"):  # cut by a phone or host going away, or the job itself raised
            report.dropped += int(message.get("recorded", False))
            job = {**job, "attempts": job["attempts"] + 1, "phones": [*job["phones"], message["phone"]]}
            report.errors.append(f"{job['task']} seed {job['seed']}: attempt {job['attempts']} on "
                                 f"{message['phone']} failed: {message['error']}")
            if job["attempts"] < opts.max_attempts:
                pool.requeue(job)
                return 0
            gave_up[(job["task"], job["seed"])] = (f"gave up after {job['attempts']} attempt(s) on "
                                                   f"{', '.join(job['phones'])} (last: {message['error']})")
            return 1
        report.errors.append(message["error"])  # "error": a phone that left, or a worker that crashed
        return int(job is not None)

    def on_death(label, _handle, job) -> None:
        dead.add(label)
        report.errors.append(f"{label}: worker died" + (f" during {job['task']} seed {job['seed']}" if job else ""))

    pool.run(handle, on_death=on_death)  # jobs left with no phone are named by the caller
    return dead


def _missing(lake, jobs: list[dict]) -> list[dict]:
    lake.invalidate()
    rows = lake.sql("SELECT task, json_extract(meta_json, '$.seed')::INT AS seed, "
                    "json_extract_string(meta_json, '$.failure_reason') AS failure_reason FROM episodes "
                    "WHERE json_extract_string(meta_json, '$.serial') IS NOT NULL").to_pylist()
    have = {(r["task"], r["seed"]) for r in rows if r["failure_reason"] not in CUT}
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
            if label in job["phones"] and label not in job.setdefault("declined", []):
                job["declined"].append(label)  # it failed here: once, leave it to another phone
                jobs.put(job)
                stop.wait(opts.backoff)
                continue
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
    except Exception as exc:  # noqa: BLE001  said, not swallowed: the pool requeues the job this worker held
        results.put({"kind": "error", "phone": label, "error": f"{label}: worker crashed: {type(exc).__name__}: "
                     f"{exc}"})
        raise
    finally:
        _flush(lake, batch, label, results, since)
        results.put({"kind": "done", "phone": label})


def _run_job(phone, ref, factory, job: dict, opts) -> tuple[dict, Any]:
    """(message, episode or None): any exception of the job is that job's error, never the worker's."""
    try:
        task = instantiate(job["task"], job["seed"])
        reason = health(phone, needs_ime(task), opts.min_battery)
        if reason is not None:
            return {"kind": "unfit", "reason": reason}, None
        ep = run_episode(phone, factory(phone, task), task if task is not None else job["task"], seed=job["seed"],
                         max_steps=opts.max_steps, meta={"serial": ref.serial, "adb": f"{ref.host}:{ref.port}",
                                                         "attempt": job["attempts"] + 1})
    except GONE as exc:  # gone before the first step, or during the health check
        return {"kind": "offline", "recorded": False, "error": f"{type(exc).__name__}: {exc}"}, None
    except Exception as exc:  # noqa: BLE001  a job that raised (a policy, an oracle, a phone error): retried
        return {"kind": "failed", "error": f"{type(exc).__name__}: {exc}"}, None
    detail = str(ep.meta.get("failure_reason", ""))
    reason = next((code for prefix, code in CUT_PREFIXES.items() if detail.startswith(prefix)), None)
    if reason is None:
        return {"kind": "episode", "outcome": ep.outcome}, ep
    meta = {**ep.meta, "failure_reason": reason, "offline_detail": detail, "partial": True,
            "counts_against_policy": False}
    dropped_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{ep.episode_id}/dropped/{ref.label}/{job['attempts'] + 1}"))
    dropped = dataclasses.replace(ep, outcome="unknown", verified_by="none", meta=meta, episode_id=dropped_id)
    return {"kind": "offline", "recorded": True, "error": detail}, dropped


def _flush(lake, batch: list, label: str, results, since: float) -> float:
    if batch:
        written = lake.write_episodes(list(batch), origin="collect")
        results.put({"kind": "written", "phone": label, "written": written.written, "skipped": written.skipped,
                     "quarantined": written.quarantined, "reasons": list(written.reasons)})
        batch.clear()
    return time.monotonic()
