"""The loop: rounds of collect -> curate -> SFT -> rollout -> curate -> GRPO -> eval.

Round k (``phoneloop loop --rounds R --config loop.yaml``):

1. collect: oracle demonstrations on mock phones (``collect.tasks``, ``collect.seeds``);
   real-phone data enters the lake separately (import, adb collection, annotation).
2. curate: ``recipe`` -> a dataset version with an ``sft`` export.
3. sft: train ``loop-rK-sft`` from the previous round's final model (round 1: ``sft.model``).
4. rollout: the SFT model on mock phones (``rollout.tasks``); verified episodes, source=rollout.
5. curate again: ``rollout_recipe`` (successful rollouts join the demonstrations) -> a
   dataset version with a ``grpo`` export.
6. grpo: ``loop-rK-grpo`` from the SFT model: offline step rewards on that export,
   plus online mock-phone episodes when ``grpo.env: mock`` (``grpo.mix: true`` is the
   Real+Mock recipe).
7. eval: SFT vs GRPO (and ``eval.baselines``) on ``eval.tasks``; the table is saved.

``collect``, ``rollout``, ``eval`` and ``grpo`` (with ``env: mock``) each take
``perturb:`` (a profile of ``mockphone.perturb`` or a YAML of rates; default none),
checked when the config loads.

Every stage's output (dataset refs, model names, rollout and eval ids) is written to
``<lake>/loops/<name>/state.json`` as soon as the stage ends, so an interrupted loop
resumes at the first unfinished stage. Lineage lives in the lake: models record their
parent and dataset fingerprint, datasets record the table versions they read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

import yaml

STAGES = ("collect", "curate", "sft", "rollout", "curate_rollouts", "grpo", "eval")
ROOT = Path(__file__).resolve().parent.parent


class LoopConfigError(ValueError):
    """A loop.yaml that cannot run; the message names the field."""


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
    eval: dict[str, Any] = field(default_factory=lambda: {"tasks": "category:single-app", "episodes": 1,
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
        self.state: dict[str, Any] = json.loads(self.state_path.read_text()) if self.state_path.exists() else {}

    def run(self, rounds: int) -> dict[str, Any]:
        for k in range(1, rounds + 1):
            done = self.state.setdefault(f"round{k}", {})
            for stage in STAGES:
                if stage in done:
                    self.say(f"round {k} {stage}: done before ({_short(done[stage])})")
                    continue
                self.say(f"round {k} {stage} ...")
                done[stage] = getattr(self, f"_{stage}")(k, done)
                self._save()
                self.say(f"round {k} {stage}: {_short(done[stage])}")
        return self.state

    def _save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=2, default=str))  # keeps stage order
        tmp.replace(self.state_path)

    # -- stages ------------------------------------------------------------------------
    def _collect(self, k: int, done: dict) -> dict:
        from collectors import OraclePolicy, collect
        from mockphone.phone import MockPhone
        from mockphone.tasks import registry

        tasks = [t.name() for t in registry.select(self.config.collect.get("tasks", "all"))]
        phone = MockPhone(perturbations=self.config.collect.get("perturb", "none"))
        try:
            report = collect(self.lake, phone, OraclePolicy.factory, tasks, seeds=self.config.collect.get("seeds", [0]))
        finally:
            phone.close()
        return {"episodes": report.episodes, "written": report.written, "outcomes": report.outcomes}

    def _curate(self, k: int, done: dict) -> dict:
        return self._build(self.config.recipe)

    def _curate_rollouts(self, k: int, done: dict) -> dict:
        return self._build(self.config.rollout_recipe)

    def _build(self, recipe_path: str) -> dict:
        from curation.build import curate
        from curation.recipe import load_recipe

        self.lake.invalidate()
        dv = curate(self.lake, load_recipe(self.config.path(recipe_path)))
        return {"dataset": dv.ref, "path": dv.path, "episodes": dv.counts["episodes"]}

    def _sft(self, k: int, done: dict) -> dict:
        from training.sft import SFTRun, run_sft

        options = dict(self.config.sft)
        first = options.pop("model", "tiny")  # round 1 starts here; later rounds from the last GRPO model
        base = self._previous_model(k) or first
        entry = run_sft(self.lake, SFTRun(dataset=done["curate"]["dataset"], output=f"{self.config.name}-r{k}-sft",
                                          model=base, **options), echo=self.say)
        return {"model": entry.name, "metrics": entry.metrics}

    def _rollout(self, k: int, done: dict) -> dict:
        from rollout.runner import RolloutSpec, rollout

        report = rollout(self.lake.uri, RolloutSpec(policy=done["sft"]["model"], round=k,
                                                    **_with_options(self.config.rollout)))
        return {"rollout_id": report.rollout_id, "episodes": report.episodes, "outcomes": report.outcomes,
                "invalid_steps": report.invalid_steps}

    def _grpo(self, k: int, done: dict) -> dict:
        from training.grpo import GRPORun, run_grpo

        entry = run_grpo(self.lake, GRPORun(output=f"{self.config.name}-r{k}-grpo", model=done["sft"]["model"],
                                            dataset=done["curate_rollouts"]["dataset"], **self.config.grpo),
                         echo=self.say)
        return {"model": entry.name, "metrics": entry.metrics}

    def _eval(self, k: int, done: dict) -> dict:
        from rollout.eval import evaluate
        from rollout.runner import RolloutSpec

        options = _with_options(self.config.eval)
        baselines = options.pop("baselines", [])
        policies = [done["sft"]["model"], done["grpo"]["model"], *baselines]
        report = evaluate(self.lake.uri, policies, RolloutSpec(policy=policies[0], **options))
        (self.folder / f"round{k}-eval.md").write_text(report.markdown)
        return {"eval_id": report.eval_id, "folder": report.folder, "by_category": report.by_category}

    def _previous_model(self, k: int) -> str | None:
        previous = self.state.get(f"round{k - 1}", {})
        return (previous.get("grpo") or {}).get("model")


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


def _with_options(section: dict[str, Any]) -> dict[str, Any]:
    """A rollout/eval config section with its ``options`` (style, coords, max_tokens...) typed."""
    from rollout.policies import PolicyOptions

    out = dict(section)
    if "options" in out:
        out["options"] = PolicyOptions(**out["options"])
    return out


def _short(result: Any) -> str:
    if isinstance(result, dict):
        keys = ("dataset", "model", "rollout_id", "eval_id", "episodes")
        return ", ".join(f"{key} {result[key]}" for key in keys if key in result) or "ok"
    return str(result)
