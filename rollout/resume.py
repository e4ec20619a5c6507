"""Which run a standalone ``phoneloop rollout`` without ``--run-id`` belongs to.

A rollout run's episode ids come from its run id (``rollout.runner.rollout_id_for``), and a
run with a run id skips the jobs the lake already holds. Without ``--run-id`` the command
used to start a fresh id every time, so a rollout killed and rerun recorded its finished jobs
twice (3 kills and reruns: 120 episodes for 40 jobs). Now the command names its own runs:
``cli-<key>/<n>``, where the key is what decides the episodes (the policy's identity, the jobs,
the step limit, perturbation, locale, phone kind and the prompt options) and ``n`` counts the
runs of that command. A rerun resumes the last run while any of its jobs lacks an episode, and
starts run ``n + 1`` once that one is complete (``--new-run`` starts one at once).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from datalake.lake import Lake

# The prompt options that change what a policy answers; timeouts, retries and keys do not.
_ANSWER_OPTIONS = ("style", "coords", "history", "model", "temperature", "max_tokens", "elements")


@dataclass(frozen=True)
class RunChoice:
    run_id: str
    resumed: bool  # an unfinished run of the same command, continued
    done: int  # jobs of that run the lake already holds
    jobs: int


def command_key(spec, jobs: list[tuple[str, int]], identity: str, phone_kind: str) -> str:
    """What decides a standalone rollout's episodes, hashed: two commands with the same key are one run."""
    options = {name: getattr(spec.options, name, None) for name in _ANSWER_OPTIONS}
    body = {"policy": identity, "jobs": sorted([task, int(seed)] for task, seed in jobs), "max_steps": spec.max_steps,
            "perturb": spec.perturb, "locale": spec.locale, "phones": phone_kind, "options": options,
            "round": spec.round}
    return hashlib.sha1(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:12]


def choose_run(lake: Lake, key: str, jobs: list[tuple[str, int]], *, new_run: bool = False) -> RunChoice:
    """The last run of the command ``key`` if it is unfinished (and not ``new_run``), else the next one."""
    base = f"cli-{key}/"
    rows = lake.sql("SELECT json_extract_string(meta_json, '$.run_id') AS run_id, task, "
                    "json_extract(meta_json, '$.seed')::INT AS seed, failure_reason FROM episodes "
                    "WHERE starts_with(json_extract_string(meta_json, '$.run_id'), ?)", [base]).to_pylist()
    held: dict[int, set[tuple[str, int]]] = {}
    for r in rows:
        suffix = r["run_id"][len(base):]
        if not suffix.isdigit():
            continue
        finished = held.setdefault(int(suffix), set())
        if r["failure_reason"] != "device_offline":  # a drop-out is retried by the run, not finished
            finished.add((r["task"], r["seed"]))
    wanted = set(jobs)
    if not held:
        return RunChoice(f"{base}1", False, 0, len(wanted))
    last = max(held)
    done = len(held[last] & wanted)
    if done < len(wanted) and not new_run:
        return RunChoice(f"{base}{last}", True, done, len(wanted))
    return RunChoice(f"{base}{last + 1}", False, 0, len(wanted))
