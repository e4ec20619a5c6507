"""The loop: rounds of collect -> curate -> SFT -> rollout -> curate -> GRPO -> eval.

Round k (``phoneloop loop --rounds R --config loop.yaml``):

0. tasks (round 1, before anything trains): the instances the loop will train on (collect's
   demonstrations, the rollouts' and GRPO's online episodes) are fingerprinted
   (``mockphone.tasks.instances``); with ``eval.suites`` a task set is generated from
   ``eval.suites.tasks`` x ``eval.suites.seeds`` (verified: start 0, oracle 1, wrong endings < 1)
   and split into the suites ``<name>-id``, ``<name>-ood-template`` and ``<name>-ood-app``
   (``datalake.tasksets.split_suites``); the eval's instances must share no fingerprint with
   the training ones, or the loop stops here (``rollout.heldout.EvalOverlap``, exit 2) unless
   ``eval.allow_overlap``.
1. collect: oracle demonstrations on mock phones (``collect.tasks``, ``collect.seeds``);
   real-phone data enters the lake separately (import, adb collection, annotation).
2. curate: ``recipe`` -> a dataset version with an ``sft`` export.
3. sft: train ``loop-rK-sft`` from the previous round's final model (round 1: ``sft.model``).
4. rollout: the SFT model on mock phones (``rollout.tasks``); verified episodes, source=rollout.
   correct: the rollout's failures, corrected at their first wrong step (``rollout.corrections``;
   ``correct.annotator: oracle`` stands in for a person, ``annotations`` uses only the corrections
   people made in Label Studio): verified corrected episodes, source=corrected, join the lake.
5. curate again: ``rollout_recipe`` (successful rollouts join the demonstrations) -> a
   dataset version with a ``grpo`` export.
6. grpo: ``loop-rK-grpo`` from the SFT model: offline step rewards on that export,
   plus online mock-phone episodes when ``grpo.env: mock`` (``grpo.mix: true`` is the
   Real+Mock recipe; ``training.grpo`` picks played or tool-call episodes by the policy's format).
7. eval: SFT vs GRPO (and ``eval.baselines``) on the suites of stage 0 (or on ``eval.tasks`` from
   seed ``eval.seed``), refused again if a model's datasets hold an evaluated instance; the table
   (per suite, category and app, with each policy's overlap) is saved, and ``curves.png`` beside
   the state file draws every round so far (SFT loss, GRPO reward and variance, held-out success).
   A policy with a job left without an episode, or an episode ended by a policy error, fails the
   stage (the state's ``failed`` names the policy and the jobs) unless ``eval.allow_partial``.

Every stage's inputs and outputs (dataset refs, model names, rollout and eval ids) are
written to ``<lake>/loops/<name>/state.json`` as soon as the stage ends, so an interrupted
loop resumes at the first unfinished stage (``phoneloop loop status`` shows it).

Killed at any point (even SIGKILL) and run again, a loop ends with exactly the episodes,
datasets and models of an uninterrupted run: rollout and eval episode ids are derived
from (loop, round, stage, policy, task, seed, attempt) and a rerun skips what the lake
holds; a dataset version built from the same table versions is reused; a model already
registered under the stage's name is reused, and a half-trained one is trained again.

A stage that produces nothing it should (no episodes, an empty dataset, a dataset whose
export for the next training stage has 0 train rows, a model that does not load the way
the next stage loads it, an eval policy that did not run) fails the loop with ``StageFailed``; the state
file's ``failed`` entry names the round, the stage and why. Lineage lives in the lake:
models record their parent and dataset fingerprint, datasets the table versions they read.

``collect``, ``rollout``, ``eval`` and ``grpo`` (with ``env: mock``) each take
``perturb:`` (a profile of ``mockphone.perturb`` or a YAML of rates; default none),
checked when the config loads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

import yaml

STAGES = ("tasks", "collect", "curate", "sft", "rollout", "correct", "curate_rollouts", "grpo", "eval")
ROOT = Path(__file__).resolve().parent.parent


class LoopConfigError(ValueError):
    """A loop.yaml that cannot run; the message names the field."""


class StageFailed(RuntimeError):
    """A loop stage raised or produced nothing it should; the state file records which and why."""


@dataclass(frozen=True)
class LoopConfig:
    name: str = "loop"
    collect: dict[str, Any] = field(default_factory=lambda: {"tasks": "category:single-app", "seeds": [0]})
    recipe: str = "examples/recipes/default.yaml"
    rollout_recipe: str = "examples/recipes/with_rollouts.yaml"
    sft: dict[str, Any] = field(default_factory=lambda: {"model": "tiny", "max_steps": 20})
    rollout: dict[str, Any] = field(default_factory=lambda: {"tasks": "category:single-app", "phones": "mock:2",
                                                              "episodes": 1})
    grpo: dict[str, Any] = field(default_factory=lambda: {"max_steps": 2})
    correct: dict[str, Any] = field(default_factory=lambda: {"annotator": "oracle"})
    eval: dict[str, Any] = field(default_factory=lambda: {"tasks": "category:single-app", "episodes": 3,
                                                           "baselines": ["random"]})

    @classmethod
    def load(cls, path: str | Path | None) -> LoopConfig:
        if path is None:
            return cls()
        data = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(data, dict):
            raise LoopConfigError(f"{path}: a loop config is a mapping")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise LoopConfigError(f"{path}: unknown field(s) {', '.join(unknown)} (fields: {', '.join(sorted(known))})")
        _check_perturb(path, data)
        return cls(**data)

    def path(self, value: str) -> Path:
        p = Path(value)
        return p if p.is_absolute() or p.exists() else ROOT / p


Say = Callable[[str], None]


class Loop:
    def __init__(self, lake_uri: str, config: LoopConfig, say: Say = lambda message: None):
        from datalake.lake import Lake

        self.lake = Lake.open(lake_uri)
        self.config = config
        self.say = say
        self.folder = Path(self.lake.uri) / "loops" / config.name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.state_path = self.folder / "state.json"
        self.rounds = 1  # run(rounds) sets it: the tasks stage fingerprints every planned round's rollouts
        self.state: dict[str, Any] = json.loads(self.state_path.read_text()) if self.state_path.exists() else {}

    def run(self, rounds: int) -> dict[str, Any]:
        self.rounds = rounds
        for k in range(1, rounds + 1):
            done = self.state.setdefault(f"round{k}", {})
            for stage in STAGES:
                if stage in done:
                    self.say(f"round {k} {stage}: done before ({_short(done[stage])})")
                    continue
                self.say(f"round {k} {stage} ...")
                try:
                    result = getattr(self, f"_{stage}")(k, done)
                except Exception as exc:
                    self.state["failed"] = {"round": k, "stage": stage, "error": f"{type(exc).__name__}: {exc}"}
                    self._save()
                    raise StageFailed(f"round {k} {stage} failed: {exc}") from exc
                done[stage] = result
                self.state.pop("failed", None)
                self._save()
                self.say(f"round {k} {stage}: {_short(done[stage])}")
        return self.state

    def status(self) -> list[dict[str, Any]]:
        """Each round's stages in order: done or not, inputs and outputs; the failure if any."""
        failed = self.state.get("failed") or {}
        out = []
        for key in _round_keys(self.state):
            k, done = int(key[5:]), self.state[key]
            for stage in STAGES:
                result = dict(done.get(stage) or {})
                state = "done" if stage in done else \
                    "failed" if (failed.get("round"), failed.get("stage")) == (k, stage) else "pending"
                out.append({"round": k, "stage": stage, "state": state, "inputs": result.pop("inputs", {}),
                            "outputs": result, "error": failed.get("error") if state == "failed" else None})
        return out

    def progress(self) -> list[dict[str, Any]]:
        """Per evaluated round: each policy's success on the ``id`` suite (else on every instance)
        with its Wilson 95% interval, and the paired difference against the round before."""
        out = []
        for key in _round_keys(self.state):
            r = self.state[key]
            if "eval" not in r:
                continue
            names = {r["sft"]["model"]: "sft", r["grpo"]["model"]: "grpo"}
            by_suite = r["eval"].get("by_suite") or {}
            suite = next((s for s in by_suite if s.split("@")[0].endswith("-id")), None)
            cells = by_suite[suite] if suite else (r["eval"].get("overall") or {})
            out.append({"round": int(key[5:]), "suite": suite or "all",
                        "success": {names.get(p, p): c for p, c in cells.items() if c},
                        "vs_previous": r["eval"].get("vs_previous") or {}})
        return out

    def _save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=2, default=str))  # keeps stage order
        tmp.replace(self.state_path)

    def _run_id(self, k: int, stage: str) -> str:
        return f"{self.config.name}/r{k}/{stage}"

    # -- stages ------------------------------------------------------------------------
    def _tasks(self, k: int, done: dict) -> dict:
        """Fingerprint what the loop trains on; build the eval suites; refuse an eval that is not held out."""
        from mockphone.tasks import instances, registry
        from rollout.heldout import EvalOverlap

        if k > 1 and "tasks" in self.state.get("round1", {}):
            first = {key: v for key, v in self.state["round1"]["tasks"].items() if key != "inputs"}
            return {"inputs": {}, **first, "round_overlap": self._check_round(k, first)}
        train = self._training_jobs()
        rows = []
        for task, seed in sorted(train):
            cls = registry.get(task)
            fp, key, steps = instances.describe(cls, seed)
            rows.append({"fingerprint": fp, "template": task, "seed": seed, "locale": "en-US",
                         "episode_key": key, "app": cls.app_names[0] if cls.app_names else "",
                         "apps": ",".join(cls.app_names), "category": cls.category, "optimal_steps": steps})
        trained = {r["fingerprint"]: (r["template"], r["seed"]) for r in rows}
        result: dict[str, Any] = {"inputs": {"suites": self.config.eval.get("suites")},
                                  "training_instances": len(trained)}
        suites = self.config.eval.get("suites")
        if suites:
            result.update(self._suites(suites, rows))
        evaluated = self._evaluated(result.get("suites"))
        shared: dict[str, list] = {}
        for job, fp in evaluated.items():
            if fp in trained:
                shared.setdefault(fp, []).append(job)
        result.update({"eval_instances": len(set(evaluated.values())), "overlap": len(shared)})
        if shared:
            if not self.config.eval.get("allow_overlap"):
                raise EvalOverlap("this loop", ["its collect, rollout and grpo instances"], shared)
            self.say(f"warning: {len(shared)} evaluated instance(s) are also trained on (eval.allow_overlap): "
                     "this eval is not held out")
        return result

    def _evaluated(self, suites: list[str] | None) -> dict[tuple[str, int], str]:
        """The eval's (task, seed) jobs and their fingerprints: the suites' instances, or ``eval.tasks``."""
        from rollout.heldout import job_fingerprints
        from rollout.spec import RolloutSpec, jobs_for

        if suites:
            jobs = {job for ref in suites for job in self._suite_jobs(ref)}
        else:
            spec = RolloutSpec(policy="oracle", **{key: v for key, v in _with_options(self.config.eval).items()
                                                   if key not in ("baselines", "allow_overlap", "allow_partial")})
            jobs = set(jobs_for(spec))
        return job_fingerprints(sorted(jobs), "en-US")

    def _check_round(self, k: int, first: dict) -> int:
        """Round ``k``'s fresh rollout instances against the eval's (the round-1 check saw only the
        rounds planned then): how many are shared; EvalOverlap unless ``eval.allow_overlap``."""
        from rollout.heldout import EvalOverlap, job_fingerprints
        from rollout.spec import jobs_for

        evaluated = set(self._evaluated(first.get("suites")).values())
        mine = job_fingerprints(sorted(jobs_for(self._rollout_spec(k, "oracle"))), "en-US")
        shared: dict[str, list] = {}
        for job, fp in mine.items():
            if fp in evaluated:
                shared.setdefault(fp, []).append(job)
        if shared and not self.config.eval.get("allow_overlap"):
            raise EvalOverlap("this loop", [f"its round {k} rollout instances"], shared)
        return len(shared)

    def _rollout_spec(self, k: int, policy: str):
        """Round ``k``'s rollout: the configured jobs on fresh seeds each round (new training instances,
        new information), round k's seeds shifted by (k-1) x the span of round 1's; ``rollout.fresh: false``
        keeps the same seeds every round."""
        from rollout.spec import RolloutSpec, jobs_for

        options = _with_options(self.config.rollout)
        fresh = options.pop("fresh", True)
        spec = RolloutSpec(policy=policy, round=k, run_id=self._run_id(k, "rollout"), **options)
        if not fresh or k == 1:
            return spec
        seeds = sorted({seed for _, seed in jobs_for(spec)})
        span = seeds[-1] - seeds[0] + 1
        return RolloutSpec(policy=policy, round=k, run_id=self._run_id(k, "rollout"),
                           **{**options, "seeds": tuple(s + (k - 1) * span for s in seeds)})

    def _training_jobs(self) -> set[tuple[str, int]]:
        """Every (task, seed) the loop trains on: demonstrations, rollouts, GRPO's online episodes."""
        from mockphone.tasks import registry
        from rollout.spec import jobs_for
        from training.mock_episodes import ONLINE_SEED

        collect = self.config.collect
        jobs = {(t.name(), s) for t in registry.select(collect.get("tasks", "all")) for s in collect.get("seeds", [0])}
        for k in range(1, self.rounds + 1):  # every planned round's fresh rollout instances
            jobs |= set(jobs_for(self._rollout_spec(k, "oracle")))
        grpo = self.config.grpo
        if grpo.get("env") == "mock":
            names = [t.name() for t in registry.select(grpo.get("tasks", "all"))]
            start = ONLINE_SEED + int(grpo.get("seed", 0))
            jobs |= {(names[i % len(names)], start + i) for i in range(int(grpo.get("online_prompts", 64)))}
        return jobs

    def _suites(self, config: dict, train_rows: list[dict]) -> dict:
        """The loop's task set and its three suites, disjoint from ``train_rows`` by fingerprint and episode."""
        from datalake import tasksets
        from mockphone.tasks import instances, registry
        from phoneloop.cli_tasks import seed_range

        unknown = sorted(set(config) - {"tasks", "seeds", "per_template"})
        if unknown:
            raise LoopConfigError(f"eval.suites: unknown field(s) {', '.join(unknown)} (tasks, seeds, per_template)")
        kept, rejected, _ = instances.generate(registry.select(config.get("tasks", "all")),
                                               seed_range(str(config.get("seeds", "300-305"))),
                                               workers=min(2, os.cpu_count() or 1))
        if not kept:
            raise StageFailed(f"eval.suites: no verified instance ({rejected[:1]})")
        if rejected:
            self.say(f"eval.suites: {len(rejected)} instance(s) rejected, e.g. {rejected[0].reason}")
        world = tasksets.write(self.lake, f"{self.config.name}-world", "taskset", [i.to_row() for i in kept])
        self.lake.invalidate()
        per = config.get("per_template", 3)
        per = per if isinstance(per, dict) else {name: per for name in tasksets.SUITES}
        refs, sizes = [], {}
        for kind, members in tasksets.split_suites(tasksets.read(self.lake, world), train_rows).items():
            capped = tasksets.per_template(members, int(per.get(kind, 3)))
            if capped:
                refs.append(tasksets.write(self.lake, f"{self.config.name}-{kind}", "suite", capped, parent=world))
                sizes[kind] = len(capped)
            else:
                self.say(f"eval.suites: suite {kind} is empty (no instance of eval.suites.tasks falls in it)")
        self.lake.invalidate()
        return {"taskset": world, "suites": refs, "suite_sizes": sizes}

    def _suite_jobs(self, ref: str) -> list[tuple[str, int]]:
        from datalake import tasksets

        return [(r["template"], int(r["seed"])) for r in tasksets.read(self.lake, ref, "suite")]

    def _collect(self, k: int, done: dict) -> dict:
        from collectors.collect import collect
        from mockphone.phone import MockPhone
        from mockphone.tasks import registry
        from phones.episode import OraclePolicy

        selector, seeds = self.config.collect.get("tasks", "all"), self.config.collect.get("seeds", [0])
        tasks = [t.name() for t in registry.select(selector)]
        phone = MockPhone(perturbations=self.config.collect.get("perturb", "none"))
        try:
            report = collect(self.lake, phone, OraclePolicy.factory, tasks, seeds=seeds)
        finally:
            phone.close()
        if report.episodes == 0:
            raise StageFailed(f"collect recorded no episode for {selector!r}: {report.errors[:3]}")
        return {"inputs": {"tasks": selector, "seeds": seeds}, "episodes": report.episodes,
                "written": report.written, "outcomes": report.outcomes}

    def _curate(self, k: int, done: dict) -> dict:
        return self._build(self.config.recipe, "sft")

    def _curate_rollouts(self, k: int, done: dict) -> dict:
        return self._build(self.config.rollout_recipe, "grpo")

    def _build(self, recipe_path: str, kind: str) -> dict:
        """A dataset version of the recipe whose ``kind`` export (what the next stage trains on) has train rows."""
        from curation.build import READ_TABLES, curate
        from curation.recipe import load_recipe
        from curation.versions import list_versions

        self.lake.invalidate()
        recipe = load_recipe(self.config.path(recipe_path))
        current = {t: v for t, v in self.lake.versions().items() if t in READ_TABLES}
        same = [v for v in list_versions(self.lake, recipe.name) if v.table_versions == current]
        dv = same[-1] if same else curate(self.lake, recipe)  # built before a kill: the same data, reuse it
        episodes = dv.counts.get("episodes", 0)
        if not episodes:
            raise StageFailed(f"recipe {recipe.name!r} selected no episode")
        rows = _train_rows(dv, kind)
        return {"inputs": {"recipe": recipe_path, "table_versions": current}, "dataset": dv.ref, "path": dv.path,
                "episodes": episodes, "train_rows": rows, "reused": bool(same)}

    def _sft(self, k: int, done: dict) -> dict:
        from training.sft import SFTRun, run_sft

        options = dict(self.config.sft)
        first = options.pop("model", "tiny")  # round 1 starts here; later rounds from the last GRPO model
        base = self._previous_model(k) or first
        name, dataset = f"{self.config.name}-r{k}-sft", done["curate"]["dataset"]
        entry = self._registered(name) or self._train(name, lambda resume: run_sft(
            self.lake, SFTRun(dataset=dataset, output=name, model=base, resume=resume, **options), echo=self.say))
        return {"inputs": {"model": base, "dataset": dataset}, "model": entry.name, "metrics": entry.metrics}

    def _rollout(self, k: int, done: dict) -> dict:
        from rollout.runner import rollout, summary

        spec = self._rollout_spec(k, done["sft"]["model"])
        report = rollout(self.lake.uri, spec)
        result = summary(self.lake, report.rollout_id)  # what the lake holds: the same after a kill and a rerun
        if result["episodes"] == 0:
            raise StageFailed(f"rollout of {spec.policy} recorded no episode: {report.errors[:3]}")
        return {"inputs": {"policy": spec.policy, "tasks": spec.tasks, "phones": spec.phones}, **result,
                "invalid_steps": report.invalid_steps}

    def _correct(self, k: int, done: dict) -> dict:
        """The round's failed rollouts, corrected (``rollout.corrections``): by the oracle annotator
        (``correct.annotator: oracle``, the embedded default), or only by the corrections people made
        in Label Studio and pulled into the lake (``annotations``); ``none`` skips the stage."""
        from rollout.corrections import correct

        options = dict(self.config.correct)
        annotator = options.pop("annotator", "oracle")
        if options:
            raise LoopConfigError(f"correct: unknown field(s) {', '.join(sorted(options))} (annotator)")
        if annotator not in ("oracle", "annotations", "none"):
            raise LoopConfigError(f"correct.annotator: {annotator!r} is not one of oracle, annotations, none")
        rollout_id = done["rollout"]["rollout_id"]
        inputs = {"annotator": annotator, "rollout_id": rollout_id}
        if annotator == "none":
            return {"inputs": inputs, "corrections": 0, "written": 0}
        if not re.fullmatch(r"[0-9a-f]{12}", rollout_id):
            raise StageFailed(f"correct: rollout id {rollout_id!r} is not one this loop wrote")
        report = correct(self.lake, where=f"json_extract_string(meta_json, '$.rollout_id') = '{rollout_id}'",
                         oracle=annotator == "oracle")
        self.lake.invalidate()
        return {"inputs": inputs, **report.to_dict()}

    def _grpo(self, k: int, done: dict) -> dict:
        from training.grpo import GRPORun, run_grpo

        name, parent, dataset = f"{self.config.name}-r{k}-grpo", done["sft"]["model"], \
            done["curate_rollouts"]["dataset"]
        entry = self._registered(name) or self._train(name, lambda resume: run_grpo(
            self.lake, GRPORun(output=name, model=parent, dataset=dataset, resume=resume, **self.config.grpo),
            echo=self.say))
        return {"inputs": {"model": parent, "dataset": dataset, "env": self.config.grpo.get("env", "none"),
                           "mix": self.config.grpo.get("mix", False)}, "model": entry.name, "metrics": entry.metrics}

    def _eval(self, k: int, done: dict) -> dict:
        from rollout.eval import evaluate, partial_message
        from rollout.spec import RolloutSpec

        options = _with_options(self.config.eval)
        baselines = options.pop("baselines", [])
        allow = bool(options.pop("allow_overlap", False))
        allow_partial = bool(options.pop("allow_partial", False))
        options.pop("suites", None)
        suites = (self.state.get("round1", {}).get("tasks") or {}).get("suites") or None
        policies = [done["sft"]["model"], done["grpo"]["model"], *baselines]
        spec = RolloutSpec(policy=policies[0], round=k, **{"tasks": "all", **options})  # suites replace the tasks
        eval_id = hashlib.sha1(self._run_id(k, "eval").encode()).hexdigest()[:12]
        report = evaluate(self.lake.uri, policies, spec, eval_id=eval_id, name=f"{self.config.name} round {k}",
                          loop=self.config.name, suites=suites, allow_overlap=allow)
        (self.folder / f"round{k}-eval.md").write_text(report.markdown)
        if report.failed:
            raise StageFailed("eval: " + "; ".join(f"{p} did not run: {e}" for p, e in report.failed.items()))
        if report.partial and not allow_partial:  # eval.allow_partial: true keeps it (the rows say status=partial)
            raise StageFailed(f"eval {report.eval_id}: {partial_message(report.partial)}")
        overlap = done.get("tasks", self.state.get("round1", {}).get("tasks", {})).get("overlap")
        result = {"inputs": {"policies": policies, "tasks": options.get("tasks"), "suites": suites},
                  "eval_id": report.eval_id, "folder": report.folder,
                  "held_out": not overlap and not any(report.overlap.values()), "overlap": report.overlap,
                  "by_suite": report.by_suite, "by_category": report.by_category, "overall": report.overall}
        result["vs_previous"] = self._vs_previous(k, done, report.eval_id, suites)
        result["curves"] = str(self._curves({**self.state, f"round{k}": {**done, "eval": result}}))
        return result

    def _vs_previous(self, k: int, done: dict, eval_id: str, suites: list[str] | None) -> dict[str, Any]:
        """Round k's SFT and GRPO models against round k-1's, paired on the instances both evaluated
        (the ``id`` suite when the loop has suites, else every instance): the difference in success
        with its 95% interval (``rollout.eval.paired_difference``)."""
        from rollout.eval import paired_difference

        previous = (self.state.get(f"round{k - 1}") or {})
        if k == 1 or "eval" not in previous:
            return {}
        id_suite = next((ref for ref in suites or [] if ref.split("@")[0].endswith("-id")), None)

        def outcomes(eid: str, policy: str) -> dict[tuple[str, int], bool]:
            rows = self.lake.sql("SELECT results_json FROM evals WHERE eval_id = ? AND policy = ?",
                                 [eid, policy]).column(0).to_pylist()
            jobs = set(self._suite_jobs(id_suite)) if id_suite else None
            return {(r["task"], int(r["seed"])): r["outcome"] == "success" for row in rows
                    for r in json.loads(row or "[]") if jobs is None or (r["task"], int(r["seed"])) in jobs}

        self.lake.invalidate()
        out = {"suite": id_suite or "all"}
        for role in ("sft", "grpo"):
            out[role] = paired_difference(outcomes(previous["eval"]["eval_id"], previous[role]["model"]),
                                          outcomes(eval_id, done[role]["model"]))
            out[role].update(a=previous[role]["model"], b=done[role]["model"])
        return out

    def _curves(self, state: dict) -> Path:
        """``curves.png`` beside the state file: every round's SFT loss and GRPO rewards in sequence, and each
        policy's held-out success per round (the SFT and GRPO models as "sft" and "grpo", baselines by name)."""
        from training.curves import plot_curves

        rounds = [state[key] for key in _round_keys(state) if "eval" in state[key]]
        metrics = [(r["sft"].get("metrics") or {}, r["grpo"].get("metrics") or {}) for r in rounds]
        success: dict[str, list] = {}
        for r in rounds:
            names = {r["sft"]["model"]: "sft", r["grpo"]["model"]: "grpo"}
            for policy, cell in (r["eval"].get("overall") or {}).items():
                success.setdefault(names.get(policy, policy), []).append((cell["rate"], cell["low"], cell["high"]))
        return plot_curves(self.folder / "curves.png", sft_losses=[x for s, _ in metrics for x in s.get("losses", [])],
                           grpo_reward=[x for _, g in metrics for x in g.get("reward", [])],
                           grpo_zero_std=[x for _, g in metrics for x in g.get("frac_reward_zero_std", [])],
                           success=success)

    # -- resuming ----------------------------------------------------------------------
    def _registered(self, name: str):
        """The model a killed run registered before its state was saved (checked to load)."""
        from training.registry import list_models

        self.lake.invalidate()
        entries = list_models(self.lake, name)
        if entries:
            _check_loads(entries[-1], self.lake)
        return entries[-1] if entries else None

    def _train(self, name: str, train: Callable[[bool], Any]):
        from training.registry import checkpoint_dir

        folder = checkpoint_dir(self.lake, name)
        entry = train(folder.exists())  # a half-trained run of this stage: resume (or train again) in place
        _check_loads(entry, self.lake)
        return entry

    def _previous_model(self, k: int) -> str | None:
        previous = self.state.get(f"round{k - 1}", {})
        return (previous.get("grpo") or {}).get("model")


def _round_keys(state: dict[str, Any]) -> list[str]:
    """The state's ``roundK`` keys in round order."""
    return sorted((k for k in state if k.startswith("round")), key=lambda k: int(k[5:]))


def _check_perturb(path: str | Path, data: dict[str, Any]) -> None:
    from mockphone.errors import BadPerturbationProfile
    from mockphone.perturb import load_profile

    for stage in ("collect", "rollout", "eval", "grpo"):
        section = data.get(stage)
        if isinstance(section, dict) and "perturb" in section:
            try:
                load_profile(section["perturb"])
            except BadPerturbationProfile as exc:
                raise LoopConfigError(f"{path}: {stage}.perturb: {exc}") from None


def _train_rows(dv, kind: str) -> int:
    """Rows of the train split of ``dv``'s ``kind`` export; ``StageFailed`` when there are none
    (the selection had episodes, but the split or the export format left nothing to train on)."""
    splits = dv.exports.get("formats", {}).get(kind)
    if splits is None:
        raise StageFailed(f"dataset {dv.ref} has no {kind!r} export, which the next stage trains on: add "
                          f"`- {{format: {kind}}}` to the recipe's exports")
    rows = int((splits.get("train") or {}).get("rows") or 0)
    if rows == 0:
        have = ", ".join(f"{name} {v.get('rows', 0)}" for name, v in sorted(splits.items())) or "no split"
        raise StageFailed(f"dataset {dv.ref} yields 0 training rows: its {kind!r} export's train split is empty "
                          f"({dv.counts.get('episodes', 0)} episode(s) selected; rows by split: {have})")
    return rows


def _check_loads(entry, lake) -> None:
    """A registered model must load the way the next stage loads it (``rollout.model_server``:
    the processor and ``from_pretrained``): a truncated or corrupt weight file fails here.
    A model uploaded to an object-store lake is checked in the copy the next stage loads."""
    from training.errors import TrainingError
    from training.registry import local_path

    try:
        path = Path(local_path(lake, entry))
    except TrainingError as exc:
        raise StageFailed(f"model {entry.name!r} does not load: {exc}") from None
    weights = list(path.glob("*.safetensors")) + list(path.glob("*.bin")) if path.is_dir() else []
    if not (path / "config.json").is_file() or not weights:
        raise StageFailed(f"model {entry.name!r} does not load: {path} has no config.json and weights")
    from rollout.model_server import load_model

    try:
        model, processor = load_model(str(path))
    except Exception as exc:  # whatever transformers or safetensors raise for a broken checkpoint
        raise StageFailed(f"model {entry.name!r} does not load from {path}: {type(exc).__name__}: {exc}") from None
    del model, processor


def _with_options(section: dict[str, Any]) -> dict[str, Any]:
    """A rollout/eval config section with its ``options`` (style, coords, max_tokens...) typed."""
    from rollout.policies import PolicyOptions

    out = dict(section)
    if "options" in out:
        out["options"] = PolicyOptions(**out["options"])
    return out


def _short(result: Any) -> str:
    if isinstance(result, dict):
        keys = ("taskset", "suites", "overlap", "dataset", "model", "rollout_id", "eval_id", "episodes",
                "failed_rollouts", "corrections", "written")
        return ", ".join(f"{key} {result[key]}" for key in keys if key in result) or "ok"
    return str(result)
