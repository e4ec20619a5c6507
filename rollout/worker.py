"""One rollout worker process: a phone, jobs from the runner's shared queue, finished
episodes written to the lake in small batches by a writer thread while the next episode
runs (``_Writer``; see ``rollout.runner`` for the whole run).

A job is ``{"task", "seed", "attempt"}``. Its episode ends in one of three ways:

- finished (success, failure, or ``policy_error`` when the endpoint kept failing: the
  steps taken so far are kept): written, reported as ``episode``;
- the phone dropped out: the episode is written as ``device_offline`` and reported as
  ``offline``; the runner gives the job to another phone and this worker stops;
- nothing could be recorded (no step): reported as ``noepisode`` with the reason.
"""

from __future__ import annotations

import queue as queue_module
import threading
import time
from dataclasses import replace
from typing import Any

from datalake.lake import Lake
from datalake.types import Episode
from fleet.backends import die_with_parent
from phones.episode import run_episode
from phones.errors import DeviceOffline, EpisodeAborted, PhoneError
from phones.make import make_phone
from rollout.errors import LakeWriteFailed, PolicyError
from rollout.policies import INVALID, PolicyOptions, make_policy
from rollout.spec import RolloutSpec, episode_id

WRITE_EVERY = 4  # episodes per lake commit
FLUSH_SECONDS = 1.0  # a finished episode waits at most about this long for its commit to start
WRITE_SECONDS = 600.0  # a commit still running after this long fails the worker (a hung object store)
REAL_MAX_STEPS = 30
ORACLE_MAX_STEPS = 300  # the oracle ends its own episodes; this only guards against a stuck one


def work(phone_id: str, lake_uri: str, kind: str, spec_dict: dict, rollout_id: str, adb_port: int | None,
         jobs, results, parent_pid: int | None = None, in_process: bool = False) -> None:
    """The worker's main loop (a spawned process's target, or a thread's with ``in_process``).
    Finished episodes go to a ``_Writer``, which commits them on a thread of its own while
    the next episode runs; whatever it holds is committed before ``done``, however the loop
    ended, and a failed commit stops the worker with an ``error`` naming it."""
    if not in_process:  # a thread must not set the parent-death signal of the whole runner
        die_with_parent(parent_pid)
    spec = RolloutSpec(**{**spec_dict, "options": PolicyOptions(**spec_dict["options"])})
    writer, phone = None, None
    try:
        writer = _Writer(Lake.open(lake_uri), results, phone_id)
        phone = make_phone(kind, phone_id, adb_port, spec.perturb, spec.locale)
        _jobs(phone, phone_id, kind, lake_uri, spec, rollout_id, jobs, results, writer)
    except LakeWriteFailed:
        pass  # reported by writer.close() below, with the episodes it could not write
    except Exception as exc:  # report, never hang the parent
        results.put({"kind": "error", "error": f"{phone_id}: {type(exc).__name__}: {exc}"})
    finally:
        if phone is not None:
            _close(phone)
        if writer is not None:
            writer.close()  # the final commit: on a normal end, a policy's crash, a phone's failure
        results.put({"kind": "done", "phone": phone_id})


def _jobs(phone, phone_id, kind, lake_uri, spec, rollout_id, jobs, results, writer: _Writer) -> None:
    """Take jobs until the stop signal (``None``) or this phone drops out."""
    formats: dict = {}  # a served checkpoint's prompt format, read from the lake once for this run
    while True:
        try:
            job = jobs.get(timeout=FLUSH_SECONDS)
        except queue_module.Empty:
            writer.hand_off()  # idle: commit what is waiting
            continue
        if job is None:
            return
        results.put({"kind": "started", "job": job, "phone": phone_id})
        episode, message = run_job(lake_uri, phone, kind, job, spec, rollout_id, phone_id, formats)
        message = {**message, "phone": phone_id}
        if episode is not None:
            writer.add(episode)
        if message["kind"] == "offline":  # this phone is gone: commit what we have, hand the job back
            writer.flush()
            results.put(message)
            return
        results.put(message)
        writer.hand_off_if_due()


class _Writer:
    """Finished episodes committed to the lake in small batches by a thread of their own.

    A batch goes to the lake when it holds ``WRITE_EVERY`` episodes or its first has waited
    ``FLUSH_SECONDS``: a daemon thread commits it (``Lake.write_episodes``; deltalake's
    Rust writer releases the GIL) while this worker runs its next episode. Only one commit
    runs at a time: handing off the next batch first waits for the previous one. So at any
    moment at most two batches (the one committing, the one filling; ``2 x WRITE_EVERY``
    episodes) and the episode in flight are not yet in the lake: that is what a kill can
    lose. Writes stay idempotent (``write_episodes`` skips ids the lake holds). A failed
    or timed-out commit is remembered: the next hand-off raises
    ``LakeWriteFailed``, and ``close`` reports it on ``results`` with the number of finished
    episodes not written. ``written`` messages carry no ``phone``: they may arrive while
    the worker is already in its next job (``Pool`` reads a phone's message as "between jobs").
    """

    def __init__(self, lake: Lake, results, phone_id: str):
        self.lake, self.results, self.phone_id = lake, results, phone_id
        self.episodes: list[Episode] = []
        self.since = 0.0
        self.failure: str | None = None
        self.unwritten = 0  # finished episodes a failed commit did not write
        self._thread: threading.Thread | None = None
        self._committing = 0  # episodes in the commit in progress
        self._error: str | None = None  # set by the writer thread when its commit failed

    def add(self, episode: Episode) -> None:
        if not self.episodes:
            self.since = time.monotonic()
        self.episodes.append(episode)

    def hand_off_if_due(self) -> None:
        self.check()  # after a failed commit: stop taking jobs (close() counts what is held as not written)
        if len(self.episodes) >= WRITE_EVERY or (self.episodes and time.monotonic() - self.since >= FLUSH_SECONDS):
            self.hand_off()

    def hand_off(self) -> None:
        """Start committing the filling batch (after the previous commit ended)."""
        self.wait()
        if not self.episodes:
            return
        batch, self.episodes = self.episodes, []
        self._committing = len(batch)
        self._thread = threading.Thread(target=self._commit, args=(batch,), daemon=True,
                                        name=f"lake-writer-{self.phone_id}")
        self._thread.start()

    def flush(self) -> None:
        """Commit everything now; returns when it is in the lake (or raises LakeWriteFailed)."""
        self.hand_off()
        self.wait()

    def wait(self) -> None:
        """Until the commit in progress ended; LakeWriteFailed if it (or an earlier one) failed."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=WRITE_SECONDS)
            error = f"a lake commit did not finish in {WRITE_SECONDS:.0f} s" if thread.is_alive() else self._error
            if error is not None:
                self.failure = self.failure or error
                self.unwritten += self._committing
            self._committing = 0
        self.check()

    def check(self) -> None:
        if self.failure is not None:
            raise LakeWriteFailed(f"{self.phone_id}: lake write failed: {self.failure}")

    def close(self) -> None:
        """The final commit; a failure (now or earlier) goes to ``results`` as an ``error``."""
        try:
            self.flush()
        except LakeWriteFailed:
            self.unwritten += len(self.episodes)
            self.episodes = []
            self.results.put({"kind": "error", "unwritten": self.unwritten,
                              "error": f"{self.phone_id}: lake write failed: {self.failure}; "
                                       f"{self.unwritten} finished episode(s) not written"})

    def _commit(self, batch: list[Episode]) -> None:
        try:
            written = self.lake.write_episodes(batch, origin="rollout")
        except BaseException as exc:  # deltalake's PanicException is a BaseException: it must surface too
            self._error = f"{type(exc).__name__}: {exc}"[:800]
            return
        self.results.put({"kind": "written", "written": written.written, "quarantined": written.quarantined})


class _Recorder:
    """Passes ``act`` through to the policy and keeps the steps, so an episode whose
    policy fails part-way can still be written with the steps it took; keeps the policy's
    per-step score (``step_meta``: model policies with log-probs) for the steps' meta, and
    the step's timing: ``policy_ms`` (how long the policy took to answer) and ``t_ms`` (when
    it was asked, in ms since the episode's first step), which the viewer shows."""

    def __init__(self, policy: Any):
        self.policy, self.name, self.source = policy, policy.name, policy.source
        self.history: list = []
        self.step_meta: dict[int, dict] = {}  # step index -> meta the policy gave for it
        self.started: float | None = None

    def act(self, instruction, observation, history):
        self.history = history  # run_episode's own list: it holds every recorded step
        asked = time.monotonic()
        self.started = asked if self.started is None else self.started
        result = self.policy.act(instruction, observation, history)
        timing = {"policy_ms": round(1000 * (time.monotonic() - asked), 1),
                  "t_ms": round(1000 * (asked - self.started), 1)}
        meta = getattr(self.policy, "step_meta", None)
        self.step_meta[len(history)] = {**(meta or {}), **timing}  # the step run_episode appends next
        return result

    def scored(self, steps) -> tuple:
        """``steps`` with the policy's scores merged into their meta."""
        return tuple(replace(s, meta={**s.meta, **self.step_meta[i]}) if i in self.step_meta else s
                     for i, s in enumerate(steps))

    @property
    def retries(self) -> int:
        inner = getattr(self.policy, "inner", self.policy)
        return getattr(inner, "retries", 0)


def run_job(lake_uri, phone, kind, job: dict, spec, rollout_id: str, phone_id: str,
            formats: dict | None = None) -> tuple[Episode | None, dict]:
    """Run one job; returns the episode to write (or None) and the message for the runner
    (``formats``: the worker's memo of checkpoint prompt formats, see ``make_policy``)."""
    from mockphone.tasks import registry

    name, seed = job["task"], job["seed"]
    task = registry.get(name)(seed=seed)
    max_steps = spec.max_steps or _step_limit(spec.policy, kind, task, seed, spec.perturb)
    meta = {"rollout_id": rollout_id, "phone": phone_id, "attempt": job["attempt"], **spec.meta,
            **({"run_id": spec.run_id} if spec.run_id else {})}
    where = f"{phone_id}: {name} seed {seed}"
    for tries in (1, 2):
        try:
            recorder = _Recorder(make_policy(spec.policy, phone, task, spec.options, lake_uri=lake_uri,
                                             name=spec.name, formats=formats))
        except PolicyError as exc:
            return None, {"kind": "noepisode", "error": f"{where}: {exc}"}
        try:
            episode = run_episode(phone, recorder, task, seed=seed, max_steps=max_steps, round=spec.round, meta=meta)
            episode = replace(episode, steps=recorder.scored(episode.steps))
            break
        except PolicyError as exc:
            episode = _partial(phone, recorder, task, seed, spec, meta, exc)
            if episode is None:
                return None, {"kind": "noepisode", "error": f"{where}: policy error before the first step: {exc}"}
            break
        except DeviceOffline as exc:
            return None, {"kind": "offline", "job": job, "error": f"{where}: device offline: {exc}"}
        except EpisodeAborted as exc:
            if "device offline" in str(exc):
                return None, {"kind": "offline", "job": job, "error": f"{where}: {exc}"}
            if tries == 2:
                return None, {"kind": "noepisode", "error": f"{where}: {exc}"}
        except PhoneError as exc:  # a bad screenshot or dump: once more on the same phone
            if tries == 2:
                return None, {"kind": "noepisode", "error": f"{where}: {type(exc).__name__}: {exc}"}
    return _finish(episode, job, spec, rollout_id, recorder.retries, where)


def _partial(phone, recorder: _Recorder, task, seed: int, spec, meta: dict, exc: PolicyError) -> Episode | None:
    """The episode up to the policy's failure: outcome failure, ``failure_reason=policy_error``."""
    if not recorder.history:
        return None
    try:
        device = phone.device()
    except PhoneError:
        return None
    return Episode(instruction=task.goal, source=recorder.source, device=device,
                   steps=recorder.scored(recorder.history),
                   app=task.app_names[0] if task.app_names else None, category=getattr(task, "category", None),
                   task=task.name(), outcome="failure", verified_by="none", policy=recorder.name, round=spec.round,
                   meta={"seed": seed, **meta, "failure_reason": "policy_error", "policy_error": str(exc)[:500]})


def _finish(episode: Episode, job: dict, spec, rollout_id: str, retries: int, where: str) -> tuple[Episode, dict]:
    meta = dict(episode.meta)
    reason = str(meta.get("failure_reason") or "")
    if reason.startswith("device offline"):
        failure = "device_offline"
    elif reason == "policy_error":
        failure = "policy_error"
    elif episode.outcome == "failure" and meta.get("stopped") == "max_steps":
        failure = "max_steps"
    else:
        failure = None
    invalid = sum(1 for s in episode.steps if (s.raw_output or "").startswith(INVALID))
    meta.update({k: v for k, v in (("invalid_steps", invalid), ("retries", retries)) if v})
    scores = [s.meta["score"] for s in episode.steps if isinstance(s.meta.get("score"), float)]
    if scores:  # the policy's mean step score (the episode's ``score`` column is the verifier's)
        meta["policy_score"] = sum(scores) / len(scores)
    score = meta.get("score")
    score = min(1.0, max(0.0, float(score))) if isinstance(score, (int, float)) and not isinstance(score, bool) \
        else None
    episode = replace(episode, episode_id=episode_id(rollout_id, job["task"], job["seed"], job["attempt"]),
                      purpose=spec.purpose, failure_reason=failure, score=score, meta=meta)
    if failure == "device_offline":
        return episode, {"kind": "offline", "job": job, "error": f"{where}: {reason}"}
    return episode, {"kind": "episode", "outcome": episode.outcome, "invalid_steps": invalid, "retries": retries,
                     "failure_reason": failure}


def _close(phone) -> None:
    try:
        phone.close()
    except Exception:  # closing a dead phone must not hide the run's result
        pass


_OPTIMAL: dict[tuple[str, int, str], int] = {}


def _step_limit(policy: str, kind: str, task, seed: int, perturb: str = "none") -> int:
    if policy == "oracle":
        return ORACLE_MAX_STEPS
    return 2 * _optimal_length(task, seed, perturb) if kind == "mock" else REAL_MAX_STEPS


def _optimal_length(task, seed: int, perturb: str = "none") -> int:
    """Steps the oracle needs on a fresh mock phone with the same perturbations (including its terminate)."""
    key = (task.name(), seed, perturb)
    if key not in _OPTIMAL:
        from mockphone.phone import MockPhone
        from mockphone.tasks.oracle import solve

        scratch = MockPhone(perturbations=perturb)
        try:
            scratch.reset(seed)
            fresh = type(task)(seed=seed)
            fresh.initialize_task(scratch)
            _OPTIMAL[key] = max(1, len(solve(scratch, fresh)))
        finally:
            scratch.close()
    return _OPTIMAL[key]
