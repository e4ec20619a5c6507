"""The embedded default learns: SFT on oracle demos (element-list format) beats random on held-out seeds."""

import pytest

from training.experiment import ExperimentConfig, evaluate, paired, random_actor, summary, wilson

TASKS = ("SettingsWifiOn", "MailStar")
CFG = ExperimentConfig(tasks=TASKS, train_seeds=(0, 1), eval_seeds=(100, 101, 102))


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """(random results, SFT results) on the held-out seeds, after 100 SFT steps on the training seeds' demos."""
    from datalake.lake import Lake
    from training.experiment import checkpoint_actor, curate_demos, write_demonstrations
    from training.infer import load_checkpoint
    from training.sft import SFTRun, run_sft

    lake = Lake.init(tmp_path_factory.mktemp("learn") / "lake")
    write_demonstrations(lake, CFG)
    ref = curate_demos(lake, CFG, "demo")
    run_sft(lake, SFTRun(dataset=ref, output="demo-sft", model="tiny", max_steps=100, batch_size=4,
                         learning_rate=3e-3, save_steps=10_000))
    policy = load_checkpoint(lake, "demo-sft")
    return evaluate(random_actor(CFG, seed=0), CFG), evaluate(checkpoint_actor(policy), CFG), lake, ref


def test_sft_beats_random_on_held_out_seeds(learned):
    rnd, sft, _, _ = learned
    assert {r.seed for r in sft} == set(CFG.eval_seeds)  # never a training seed
    assert summary(sft)["successes"] > summary(rnd)["successes"]
    assert paired(rnd, sft)["diff"] > 0


def test_trained_policy_outputs_parse(learned):
    _, sft, _, _ = learned
    assert summary(sft)["parse_rate"] >= 0.9, [r.replies for r in sft]


def test_evaluation_seeds_must_be_held_out():
    with pytest.raises(ValueError, match="held out"):
        ExperimentConfig(tasks=TASKS, train_seeds=(0, 1), eval_seeds=(1, 2))


def test_wilson_interval_and_paired_difference():
    low, high = wilson(0, 12)
    assert low == 0.0 and 0.2 < high < 0.3
    low, high = wilson(6, 12)
    assert low < 0.5 < high
    from training.experiment import EpisodeResult

    a = [EpisodeResult("t", s, False, 1, 1) for s in range(10)]
    b = [EpisodeResult("t", s, s < 8, 1, 1) for s in range(10)]
    out = paired(a, b)
    assert out["n"] == 10 and out["diff"] == pytest.approx(0.8) and 0.4 <= out["low"] <= out["diff"] <= out["high"]
    assert paired(b, b)["diff"] == 0.0


def test_random_baseline_replies_parse_and_rarely_succeed():
    results = evaluate(random_actor(CFG, seed=1), CFG, seeds=(200,))
    assert summary(results)["parse_rate"] == 1.0
    assert all(r.steps >= 1 for r in results)


def test_grpo_after_sft_sees_reward_variance_in_its_groups(learned):
    """Sampled element-number answers of the SFT policy differ in reward (the oracle's actions are the targets)."""
    from training.grpo import GRPORun, run_grpo

    _, _, lake, ref = learned
    entry = run_grpo(lake, GRPORun(dataset=ref, output="demo-grpo", model="demo-sft", max_steps=2,
                                   num_generations=4, batch_size=8, temperature=1.5, learning_rate=1e-5,
                                   max_completion_tokens=24, seed=0))
    assert entry.metrics["steps"] == 2
    assert any(std > 0 for std in entry.metrics["reward_std"]), entry.metrics
    assert "rewards/argument_reward/mean" in entry.metrics


def test_report_prints_the_targets_and_saves_curves_beside_the_table(learned, tmp_path):
    from PIL import Image

    from training.experiment import write_report

    rnd, sft, _, _ = learned
    report = {"random": summary(rnd), "sft": summary(sft), "grpo": summary(sft),
              "sft_vs_random": paired(rnd, sft), "grpo_vs_sft": paired(sft, sft), "grpo_groups_with_variance": 0.25,
              "sft_losses": [3.0, 1.0, 0.5], "grpo_reward": [0.5, 0.6], "grpo_frac_zero_std": [0.75, 0.75],
              "wall_s": 400.0}
    folder = write_report(report, tmp_path / "exp")
    text = (folder / "report.md").read_text()
    assert "target >= 50% GRPO groups with reward variance: NOT met" in text
    assert "target demo <= 6 minutes: NOT met" in text
    assert f"sft      {summary(sft)['successes']:3}/" in text
    assert Image.open(folder / "curves.png").size[0] > 800
