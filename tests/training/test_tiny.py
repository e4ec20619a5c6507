import json

from PIL import Image

from training.tiny import TINY_MAX_PIXELS, build_id, tiny_model


def test_tiny_model_is_built_once_and_cached_under_the_lake(train_lake, tiny_path):
    assert str(tiny_path).startswith(str(train_lake.uri))
    assert tiny_path.name == build_id()
    before = (tiny_path / "model.safetensors").stat().st_mtime_ns
    assert tiny_model(train_lake.uri) == tiny_path
    assert (tiny_path / "model.safetensors").stat().st_mtime_ns == before
    meta = json.loads((tiny_path / "phoneloop_model.json").read_text())
    assert meta["architecture"] == "Qwen3VLForConditionalGeneration" and meta["parameters"] < 1_000_000


def test_tiny_processor_loads_through_auto_processor_and_caps_images(tiny_path):
    from transformers import AutoProcessor

    from training.processor import ImageOnlyQwen3VLProcessor

    processor = AutoProcessor.from_pretrained(tiny_path)
    assert isinstance(processor, ImageOnlyQwen3VLProcessor)
    out = processor.image_processor(images=[Image.new("RGB", (1080, 2400), "white")], return_tensors="pt")
    t, h, w = out["image_grid_thw"][0].tolist()
    assert h * w * 16 * 16 <= TINY_MAX_PIXELS  # patches of 16 px, within the cap


def test_tiny_tokenizer_keeps_tool_call_tags_whole_and_visible(tiny_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    ids = tokenizer('<tool_call>\n{"name": "mobile_use"}\n</tool_call>')["input_ids"]
    assert tokenizer.convert_tokens_to_ids("<tool_call>") == ids[0]
    assert tokenizer.decode(ids, skip_special_tokens=True).startswith("<tool_call>")
