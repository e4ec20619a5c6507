"""`phoneloop demo --round experiment`: the measured experiment (random vs SFT vs SFT->GRPO on held-out seeds)."""

import json

import pytest
from typer.testing import CliRunner

from phoneloop.cli import app


@pytest.mark.slow  # > 20 s on 2 cores
def test_demo_prints_the_experiment_table_and_saves_the_curves_beside_it(tmp_path):
    from PIL import Image

    lake = str(tmp_path / "lake")
    result = CliRunner().invoke(app, ["demo", "--round", "experiment", "--quick", "--lake", lake])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for line in ("policy   success  95% interval", "random ", "sft ", "grpo ", "sft_vs_random: paired difference",
                 "grpo_vs_sft: paired difference", "GRPO groups with non-zero reward variance"):
        assert line in text, text
    folder = tmp_path / "lake" / "experiments" / "demo"
    assert (folder / "report.md").read_text().strip("`\n") in text
    assert Image.open(folder / "curves.png").size[0] > 800
    report = json.loads((folder / "report.json").read_text())
    assert report["sft"]["episodes"] == report["random"]["episodes"] == 6  # 3 templates x 2 held-out seeds
    assert report["grpo_vs_sft"]["n"] == 6
    # the json learner's GRPO: whole-action step rewards on the SFT prompts, and online mock episodes played to
    # the end and scored by their verifiers (the Real+Mock mix)
    sources = report["grpo_rewards"]
    assert "rewards/argument_reward/mean" in sources and "rewards/location_reward/mean" in sources, sources
    assert any(v is not None for v in sources["rewards/episode_reward/mean"]), sources
    assert report["grpo_groups_with_variance"] is not None and report["cpu_s"] > 0
    # GRPO's offline step rewards score the sample's real-phone steps (its 2 successful real episodes) too
    from datalake.lake import Lake
    from training.data import open_export

    assert report["grpo_real_episodes"] == 2 and report["grpo_dataset"].startswith("demo-rl@")
    rows = open_export(Lake.open(lake), report["grpo_dataset"], "grpo").load()
    assert set(rows["phone"]) == {"real", "mock"}, set(rows["phone"])

    again = CliRunner().invoke(app, ["demo", "--round", "experiment", "--quick", "--lake", lake, "--json"])
    out = json.loads(again.stdout)
    assert out["imported"] == 0 and out["experiment"]["wall_s"] == report["wall_s"]  # nothing ran twice
    oracle = [r for r in out["summary"] if r["source"] == "oracle"]
    assert sum(r["episodes"] for r in oracle) >= 6 and all(r["success_rate"] == 1.0 for r in oracle)  # 3 x 2 seeds + sample
