import json

import pytest

from curation.formats import parse_action
from tests.training.conftest import MEMO, H, W
from training.errors import BadTrainingConfig, TrainingError, WrongExportKind
from training.registry import get_model
from training.sft import SFTRun, run_sft


def test_sft_loss_falls_on_a_small_repeated_dataset(sft_model):
    losses = sft_model.metrics["losses"]
    assert len(losses) == 60
    assert sum(losses[-5:]) / 5 < 0.25 * sum(losses[:5]) / 5


def test_trained_model_emits_the_target_action_greedily(train_lake, sft_model):
    import datasets

    from training.infer import load_checkpoint

    policy = load_checkpoint(train_lake, "memo-sft")
    rows = datasets.load_dataset(get_version_path(train_lake, "memo@v1"), "grpo", split="train")
    assert len(rows) == len(MEMO)
    for row in rows:
        text = policy.generate(row["prompt"], row["images"])
        instruction = row["prompt"][1]["content"][-1]["text"].removeprefix("Task: ")
        action = parse_action(text, "qwen3vl", "rel1000", (W, H))
        target = MEMO[instruction]
        assert action.type == target.type, text
        if target.type == "tap":
            assert abs(action.x - target.x) <= 2 and abs(action.y - target.y) <= 2
        else:
            assert action.text == target.text


def test_sft_registers_checkpoint_with_lineage_and_config(train_lake, sft_model):
    entry = get_model(train_lake, "memo-sft")
    version = _version(train_lake, "memo@v1")
    assert entry.base_model == "tiny" and entry.parent is None
    assert entry.dataset == "memo@v1" and entry.dataset_fingerprint == version.fingerprint
    assert entry.config["learning_rate"] == 5e-3 and entry.config["max_pixels_used"] > 0
    assert entry.metrics["steps"] == 60
    logged = json.loads((sft_model_folder(entry) / "phoneloop_config.json").read_text())
    assert logged["dataset"] == "memo@v1" and logged["stage"] == "sft"


def test_registered_checkpoint_loads_for_inference(train_lake, sft_model):
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from training.processor import ImageOnlyQwen3VLProcessor

    entry = get_model(train_lake, "memo-sft")
    model = AutoModelForImageTextToText.from_pretrained(entry.path)
    processor = AutoProcessor.from_pretrained(entry.path)
    assert isinstance(processor, ImageOnlyQwen3VLProcessor)
    assert model.config.model_type == "qwen3_vl"


def test_sft_continues_a_registered_model_and_records_its_parent(train_lake, sft_model):
    entry = run_sft(train_lake, SFTRun(dataset="memo@v1", output="memo-sft-more", model="memo-sft", max_steps=2,
                                       batch_size=2, learning_rate=1e-4))
    assert entry.parent == "memo-sft" and entry.base_model == "tiny"


def test_sft_with_lora_saves_a_merged_model(train_lake, tiny_path):
    from transformers import AutoModelForImageTextToText

    entry = run_sft(train_lake, SFTRun(dataset="memo@v1", output="memo-lora", max_steps=2, batch_size=2,
                                       lora=True, lora_r=4, lora_alpha=8, learning_rate=1e-3))
    model = AutoModelForImageTextToText.from_pretrained(entry.path)
    assert not any("lora" in name for name, _ in model.named_parameters())


def test_sft_resumes_from_its_last_checkpoint(train_lake, tiny_path, monkeypatch):
    from training import common
    from training.registry import checkpoint_dir

    def crash(*args, **kwargs):
        raise RuntimeError("crashed after training, before registration")

    run = SFTRun(dataset="memo@v1", output="memo-resume", max_steps=2, batch_size=2, save_steps=2)
    with monkeypatch.context() as patch:
        patch.setattr(common, "register", crash)
        with pytest.raises(RuntimeError):
            run_sft(train_lake, run)
    assert common.last_checkpoint(checkpoint_dir(train_lake, "memo-resume")).endswith("checkpoint-2")
    with pytest.raises(BadTrainingConfig, match="--resume"):
        run_sft(train_lake, run)
    entry = run_sft(train_lake, SFTRun(dataset="memo@v1", output="memo-resume", max_steps=4, batch_size=2,
                                       save_steps=2, resume=True))
    assert entry.config["resumed_from"].endswith("checkpoint-2")
    assert entry.metrics["steps"] == 4


@pytest.mark.parametrize("dataset, error, message", [
    ("nosuch@v1", TrainingError, "no dataset 'nosuch@v1'"),
    ("memo@v9", TrainingError, "no dataset 'memo@v9'"),
    ("memo", BadTrainingConfig, "NAME@vN"),
    ("eponly@v1", WrongExportKind, "has no 'sft' export"),
])
def test_bad_dataset_fails_before_any_compute(train_lake, monkeypatch, dataset, error, message):
    from training import common

    monkeypatch.setattr(common, "load_policy", _no_compute)
    with pytest.raises(error, match=message):
        run_sft(train_lake, SFTRun(dataset=dataset, output="never"))


def test_bad_options_fail_before_any_compute(train_lake, monkeypatch):
    from training import common

    monkeypatch.setattr(common, "load_policy", _no_compute)
    with pytest.raises(BadTrainingConfig, match="batch_size"):
        run_sft(train_lake, SFTRun(dataset="memo@v1", output="never", batch_size=0))
    with pytest.raises(BadTrainingConfig, match="not a valid model name"):
        run_sft(train_lake, SFTRun(dataset="memo@v1", output="Bad Name"))
    with pytest.raises(TrainingError, match="not 'tiny', a registered model"):
        run_sft(train_lake, SFTRun(dataset="memo@v1", output="never", model="./no/such/dir"))


def test_registered_names_are_immutable(train_lake, sft_model, monkeypatch):
    from training import common

    monkeypatch.setattr(common, "load_policy", _no_compute)
    with pytest.raises(BadTrainingConfig, match="already registered"):
        run_sft(train_lake, SFTRun(dataset="memo@v1", output="memo-sft"))


def _no_compute(*args, **kwargs):
    raise AssertionError("a model was loaded before the config was checked")


def _version(lake, ref):
    from curation.versions import get_version

    return get_version(lake, ref)


def get_version_path(lake, ref):
    return _version(lake, ref).path


def sft_model_folder(entry):
    from pathlib import Path

    return Path(entry.path).parent
