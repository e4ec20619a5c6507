"""The embedded default: one full loop round on mock phones, a local lake and a tiny offline model.

1. Lake: create ``./lake`` (or open it: the demo is safe to run again).
2. Real side: import the bundled sample of real-phone episodes (interchange format).
3. One round of ``phoneloop loop`` with ``examples/loop.yaml``: oracle demonstrations on
   mock phones across single-app, cross-app and mini-app tasks -> ``default@vN`` -> SFT of
   the tiny Qwen3-VL-architecture model -> its rollouts on mock phones (verified) ->
   ``with-rollouts@vN`` -> GRPO -> evaluation of SFT vs GRPO vs the oracle.
4. Summarise: episodes and success rate per source, phone and category, the datasets and
   models of the round, and the evaluation table.

5. (``experiment=True``, issue 18) the learning experiment: oracle demos of the demo task
   set on training seeds, random vs SFT vs SFT->GRPO on held-out seeds in the element-list
   format, its table and targets printed, ``curves.png`` beside ``report.md`` under
   ``<lake>/experiments/demo`` (``training.experiment``).

A finished round is not run again (the loop's state file says so); delete
``<lake>/loops/demo-loop`` to start over.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from datalake import interchange
from datalake.lake import Lake
from phoneloop.loop import Loop, LoopConfig

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "examples" / "loop.yaml"
SUMMARY = """
SELECT e.source, e.phone, coalesce(e.category, '-') AS category, count(*) AS episodes, sum(s.n)::BIGINT AS steps,
       round(avg(CASE WHEN e.outcome = 'success' THEN 1 ELSE 0 END), 3)::DOUBLE AS success_rate
FROM episodes e JOIN (SELECT episode_id, count(*) AS n FROM steps GROUP BY episode_id) s USING (episode_id)
GROUP BY ALL ORDER BY source, phone, category
"""

Say = Callable[[str], None]


def run(lake_uri: str, *, config: Path = DEFAULT_CONFIG, say: Say = lambda message: None,
        experiment: bool = False) -> dict[str, Any]:
    lake = Lake.init(lake_uri)
    say(f"lake {lake.uri}")
    sample = resources.files("phoneloop") / "sample" / "episodes.jsonl"
    with resources.as_file(sample) as path:
        imported = interchange.import_files(lake, [path])
    say(f"real: imported {imported.written} sample episodes ({imported.skipped} already there)")
    state = Loop(lake.uri, LoopConfig.load(config), say=say).run(1)["round1"]
    lake = Lake.open(lake.uri)
    out = {"lake": lake.uri, "imported": imported.written, "quarantined": imported.quarantined,
           "round": state, "summary": lake.sql(SUMMARY).to_pylist(),
           "eval_markdown": (Path(state["eval"]["folder"]) / "report.md").read_text()}
    # --- issue 18: the measured learning experiment (separate from the loop round) ---
    if experiment:
        out["experiment"] = run_learning_experiment(lake, say)
    # --- end issue 18 ---
    return out


def run_learning_experiment(lake: Lake, say: Say) -> dict[str, Any]:
    """Issue 18's experiment on the demo task set; the report and curves go under ``<lake>/experiments/demo``."""
    from training.experiment import DEMO_TASKS, ExperimentConfig, run_experiment, write_report

    cfg = ExperimentConfig(tasks=DEMO_TASKS, train_seeds=(0, 1), eval_seeds=(100, 101, 102))
    report = run_experiment(lake, cfg, sft_steps=300, echo=say)
    folder = write_report(report, Path(str(lake.uri)) / "experiments" / "demo")
    say(f"experiment table and learning curves: {folder}")
    return {"folder": str(folder), **{k: report[k] for k in ("random", "sft", "grpo", "grpo_vs_sft", "wall_s")}}
