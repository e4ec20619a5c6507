"""The embedded default learns: SFT on oracle demos (element-list format) beats random on held-out seeds."""

import pytest

from mockphone.tasks.sets import DEMO_TASKS
from training.experiment import ExperimentConfig, evaluate, paired, random_actor, summary, wilson

pytestmark = pytest.mark.slow  # > 20 s on 2 cores: `scripts/test.sh -m "not slow"` leaves it out

# SettingsDarkThemeOn is a declared-fixed template (one episode on every seed: the memorised half); MailStar
# draws another inbox on every seed, so its held-out seeds are instances the model never saw.
TASKS = ("SettingsDarkThemeOn", "MailStar")
CFG = ExperimentConfig(tasks=TASKS, train_seeds=(0, 1, 2, 3), eval_seeds=(100, 101, 102))


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    """(random results, SFT results) on the held-out seeds, after 150 SFT steps (batch 4) on the training seeds' demos,
    balanced by task as the experiment is (SettingsDarkThemeOn's seeds are one identical episode in the lake,
    MailStar's four); one torch thread, so the result does not depend on the machine's thread count."""
    from datalake.lake import Lake
    from training.experiment import checkpoint_actor, curate_demos, write_demonstrations
    from training.infer import load_checkpoint
    from training.sft import SFTRun, run_sft

    import torch

    lake = Lake.init(tmp_path_factory.mktemp("learn") / "lake")
    write_demonstrations(lake, CFG)
    ref = curate_demos(lake, CFG, "demo")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_sft(lake, SFTRun(dataset=ref, output="demo-sft", model="tiny", max_steps=300, batch_size=4,
                             learning_rate=3e-3, warmup_steps=5, lr_scheduler="cosine", save_steps=10_000,
                             balance="task"))
        policy = load_checkpoint(lake, "demo-sft")
        trained = evaluate(checkpoint_actor(policy), CFG, seeds=CFG.train_seeds)
        held_out = evaluate(checkpoint_actor(policy), CFG)
    finally:
        torch.set_num_threads(threads)
    LEARNED["train"] = trained
    return evaluate(random_actor(CFG, seed=0), CFG), held_out, lake, ref


LEARNED: dict = {}


def test_sft_policy_replays_its_own_demonstrations(learned):
    """The memorisation check: greedy decoding on the training seeds reproduces the oracle's episodes (a
    prompt that differs between training and inference, a lost end-of-turn token or a broken mask fails it)."""
    trained = LEARNED["train"]
    assert summary(trained)["success"] >= 0.75, [(r.task, r.seed, r.replies) for r in trained]


def test_sft_beats_random_on_held_out_seeds(learned):
    rnd, sft, _, _ = learned
    assert {r.seed for r in sft} == set(CFG.eval_seeds)  # never a training seed
    assert summary(sft)["success"] >= 0.5, [(r.task, r.seed, r.replies) for r in sft]
    assert summary(sft)["successes"] > summary(rnd)["successes"]
    assert paired(rnd, sft)["diff"] > 0


def test_trained_policy_outputs_parse(learned):
    _, sft, _, _ = learned
    # measured 0.77-1.0: an unseen title in the instruction ("Parking permit renewal") can still derail one
    # episode, and a derailed episode spends its whole budget on unparseable replies
    assert summary(sft)["parse_rate"] >= 0.7, [r.replies for r in sft]
    assert sum(r.parsed == r.steps for r in sft) >= len(sft) - 2  # every reply parsed in most episodes


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


def test_checkpoint_records_the_element_format_it_was_trained_on(learned):
    from pathlib import Path

    from training.prompt_format import FORMAT_FILE, read_format
    from training.registry import get_model

    _, _, lake, _ = learned
    entry = get_model(lake, "demo-sft")
    expected = {"action_format": CFG.action_format, "coords": CFG.coords, "history": CFG.history, "elements": True}
    assert entry.config["prompt_format"] == expected
    assert read_format(entry.path) == expected and (Path(entry.path) / FORMAT_FILE).is_file()


def test_rollout_of_an_element_checkpoint_builds_its_prompt_and_parses_its_replies(learned):
    """`phoneloop rollout --policy demo-sft` on mock phones: the policy picks the element format up from the
    checkpoint (the CLI's default --style/--coords say otherwise), lists the elements, maps numbers to pixels."""
    import json

    from typer.testing import CliRunner

    from phoneloop.cli import app

    _, _, lake, _ = learned
    result = CliRunner().invoke(app, ["rollout", "--policy", "demo-sft", "--tasks", "SettingsDarkThemeOn", "--phones",
                                      "mock:1", "--episodes", "2", "--max-steps", "4", "--style", "json",
                                      "--coords", "abs", "--max-tokens", "48", "--lake", str(lake.uri), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    from datalake.lake import Lake

    steps = Lake.open(lake.uri).sql("SELECT s.thought, s.raw_output, s.action_json FROM steps s JOIN episodes e USING (episode_id) "
                     "WHERE json_extract_string(e.meta_json, '$.rollout_id') = ?", [report["rollout_id"]]).to_pylist()
    assert steps and report["invalid_steps"] == sum((r["thought"] or "").startswith("invalid:") for r in steps)
    parse_rate = 1 - report["invalid_steps"] / len(steps)
    assert parse_rate >= 0.9, [r["raw_output"] for r in steps]
    named = [r for r in steps if '"element"' in (r["raw_output"] or "")]
    assert named, [r["raw_output"] for r in steps]  # the model named elements by number ...
    assert all(json.loads(r["action_json"]).get("element") for r in named)  # ... recorded with their target


def test_models_without_a_recorded_format_keep_the_options_given(learned, tmp_path):
    from rollout.policies import PolicyOptions, trained_options

    _, _, lake, _ = learned
    given = PolicyOptions(style="json", coords="abs")
    assert trained_options(str(tmp_path), given, str(lake.uri)) == given  # a folder with no record
    assert trained_options("no-such-model", given, str(lake.uri)) == given
    assert trained_options("demo-sft", given, str(lake.uri)).elements is True


@pytest.mark.parametrize("task", DEMO_TASKS)
def test_the_oracle_replayed_through_the_element_format_succeeds_on_a_held_out_seed(task):
    """The evaluation loop itself: the oracle's actions, written as element-number replies and parsed back
    against each screen's list, solve every demo template (terminate and answer reach the phone's log)."""
    from curation.elements import format_with_marks, marks
    from training.experiment import oracle_demo, run_episode

    cfg = ExperimentConfig(tasks=(task,))
    demo = oracle_demo(task, 100)
    size = (demo.device.width, demo.device.height)
    replies = iter([format_with_marks(s.action, cfg.action_format, cfg.coords, size, marks(s.observation.ui_tree, size))
                    for s in demo.steps])
    result = run_episode(lambda messages, images, items, size: next(replies), cfg.format, task, 100,
                         len(demo.steps))
    assert result.success and result.parsed == result.steps == len(demo.steps), result.replies
