"""The embedded default: one measured round on mock phones, a local lake and a tiny offline model.

1. Lake: create ``./lake`` (or open it: the demo is safe to run again).
2. Real side: import the bundled sample of real-phone episodes (interchange format).
3. The round. ``loop`` (the default): one round of ``phoneloop loop`` with ``examples/loop.yaml``:
   oracle demonstrations of the demo task set (16 templates: single-app, cross-app and
   mini-app) on training seeds 0-7 -> the ``elements`` dataset version (element-list
   exports) -> SFT of the tiny Qwen3-VL-architecture model, balanced by template -> its
   rollouts on mock phones -> the dataset again, with the verified rollouts -> GRPO (offline
   step rewards on real and mock steps, mixed with online mock-phone episodes scored by
   their verifiers: the Real+Mock recipe) -> SFT, GRPO, the oracle and random on *held-out*
   seeds 100-102, with 95% intervals and paired McNemar tests (``<lake>/evals/<id>``).
   ``experiment`` (``training.experiment``): the same recipe measured in-process against the
   issue's targets: random vs SFT vs SFT->GRPO with intervals and paired differences;
   ``report.md``, ``report.json`` and the learning curves ``curves.png`` under
   ``<lake>/experiments/demo``. ``quick``: ``examples/loop_quick.yaml`` or a 3-template
   experiment, about a minute each.
4. Summarise: episodes and success rate per source, phone and category.

A finished round is not run again: the experiment's ``report.json`` (or the loop's state
file) says so; delete ``<lake>/experiments/demo`` (or ``<lake>/loops/<name>``) to start over.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from datalake import interchange
from datalake.lake import Lake

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEFAULT_CONFIG = EXAMPLES / "loop.yaml"  # the loop round that learns: ~5 minutes on 2 cores (294 s measured)
QUICK_CONFIG = EXAMPLES / "loop_quick.yaml"  # 3 templates, 150 SFT steps: about a minute
ROUNDS = ("experiment", "loop")
SUMMARY = """
SELECT e.source, e.phone, coalesce(e.category, '-') AS category, count(*) AS episodes, sum(s.n)::BIGINT AS steps,
       round(avg(CASE WHEN e.outcome = 'success' THEN 1 ELSE 0 END), 3)::DOUBLE AS success_rate
FROM episodes e JOIN (SELECT episode_id, count(*) AS n FROM steps GROUP BY episode_id) s USING (episode_id)
GROUP BY ALL ORDER BY source, phone, category
"""

Say = Callable[[str], None]


def import_sample(lake) -> interchange.ImportReport:
    """The bundled real-phone sample into ``lake`` (episodes already there are skipped)."""
    with resources.as_file(resources.files("phoneloop") / "sample" / "episodes.jsonl") as path:
        return interchange.import_files(lake, [path])


def run(lake_uri: str, *, config: Path | None = None, say: Say = lambda message: None,
        round: str = "loop", quick: bool = False) -> dict[str, Any]:
    """Import the sample, run the round (``experiment`` or ``loop``; ``quick``: their small versions),
    summarise the lake. ``config``: another loop.yaml for the loop round."""
    if round not in ROUNDS:
        raise ValueError(f"round must be one of {', '.join(ROUNDS)}, not {round!r}")
    lake = Lake.init(lake_uri)
    say(f"lake {lake.uri}")
    imported = import_sample(lake)
    say(f"real: imported {imported.written} sample episodes ({imported.skipped} already there)")
    out: dict[str, Any] = {"lake": lake.uri, "imported": imported.written, "quarantined": imported.quarantined}
    if round == "loop":
        from phoneloop.loop import Loop, LoopConfig

        path = config or (QUICK_CONFIG if quick else DEFAULT_CONFIG)
        state = Loop(lake.uri, LoopConfig.load(path), say=say).run(1)["round1"]
        out.update(round=state, eval_markdown=(Path(state["eval"]["folder"]) / "report.md").read_text())
    else:
        out["experiment"] = run_learning_experiment(lake, say, quick=quick)
    out["summary"] = Lake.open(lake.uri).sql(SUMMARY).to_pylist()
    return out


def experiment_config(quick: bool = False):
    """The demo's experiment: the demo task set, 4 training seeds, 3 held-out seeds (quick: 3 templates)."""
    from mockphone.tasks.sets import DEMO_TASKS
    from training.experiment import ExperimentConfig

    if quick:
        return ExperimentConfig(tasks=("SettingsWifiOn", "MailStar", "ClockCancelTimer"), train_seeds=(0, 1),
                                eval_seeds=(100, 101)), {"sft_steps": 150, "grpo_steps": 4, "online_prompts": 4,
                                                                "offline_prompts": 4}
    return ExperimentConfig(tasks=DEMO_TASKS), {"sft_steps": 800, "grpo_steps": 6, "online_prompts": 32,
                                                  "offline_prompts": 32}


def run_learning_experiment(lake: Lake, say: Say, quick: bool = False) -> dict[str, Any]:
    """Issue 18's experiment as the demo's round; the report and curves go under ``<lake>/experiments/demo``."""
    from training.experiment import report_lines, run_experiment, write_report

    folder = Path(str(lake.uri)) / "experiments" / "demo"
    if (folder / "report.json").is_file():  # a finished round is not run again
        report = json.loads((folder / "report.json").read_text())
        say(f"the experiment already ran (delete {folder} to run it again):")
        for line in report_lines(report):
            say(line)
    else:
        cfg, sizes = experiment_config(quick)
        report = run_experiment(lake, cfg, echo=say, **sizes)
        write_report(report, folder)
    say(f"experiment table and learning curves: {folder}")
    keys = ("random", "sft", "grpo", "sft_vs_random", "grpo_vs_sft", "grpo_groups_with_variance", "wall_s")
    return {"folder": str(folder), "curves": str(folder / "curves.png"),
            "markdown": (folder / "report.md").read_text(), **{k: report[k] for k in keys}}
