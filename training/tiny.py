"""A tiny, random-weight Qwen3-VL-architecture model, built offline in seconds.

Tests, benchmarks and the demo train this model; nothing in the project downloads
weights at run time. It is the real architecture (``Qwen3VLForConditionalGeneration``:
vision tower with deepstack, interleaved M-RoPE text decoder) at toy sizes, with:

- a byte-level BPE tokenizer trained here with ``tokenizers`` on the texts the
  platform actually shows a model (system prompts, task instructions, action
  formats in every coordinate convention) plus Qwen's special tokens;
- Qwen3-VL's own chat template (the copy TRL ships), which has tool calling, so
  multi-turn tool environments work;
- a PIL image processor with Qwen3-VL's geometry (patch 16, merge 2) and a small
  image-size cap.

``tiny_model(lake_uri)`` builds it once under ``<lake>/models/_tiny/<build id>`` and
reuses it; the build id changes whenever the recipe below does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

TINY = "tiny"
TINY_MAX_PIXELS = 64 * 64 * 2  # 8 image tokens per screenshot at Qwen3-VL's 32 px per token
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
           "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
           "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
ADDED = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
TEXT = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=32, max_position_embeddings=4096,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [8, 4, 4],
                             "mrope_interleaved": True})
VISION = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=16, spatial_merge_size=2,
              temporal_patch_size=2, out_hidden_size=128, num_position_embeddings=256, deepstack_visual_indexes=[1])
VOCAB = 2048
RECIPE_VERSION = 5  # 5: seek-bar taps keep their point in the element listings the tokenizer learns


def build_id() -> str:
    """Changes whenever the tiny recipe changes, so a stale cache is never reused."""
    spec = json.dumps({"v": RECIPE_VERSION, "text": TEXT, "vision": VISION, "vocab": VOCAB, "special": SPECIAL,
                       "added": ADDED, "max_pixels": TINY_MAX_PIXELS}, sort_keys=True)
    return hashlib.sha256(spec.encode()).hexdigest()[:12]


def tiny_model(lake_uri: str | os.PathLike) -> Path:
    """The folder of the tiny model cached under the lake, built on first use."""
    root = Path(str(lake_uri))
    if "://" in str(lake_uri):
        root = Path(tempfile.gettempdir()) / "phoneloop-tiny"
    folder = root / "models" / "_tiny" / build_id()
    if not (folder / "config.json").is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
        build_tiny(staging)
        try:
            staging.rename(folder)
        except OSError:  # another process built it first
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def is_tiny(path: str | os.PathLike) -> bool:
    """Whether a local folder holds a tiny model build."""
    meta = Path(str(path)) / "phoneloop_model.json"
    return meta.is_file() and json.loads(meta.read_text()).get("kind") == "tiny"


def corpus() -> list[str]:
    """What the tokenizer learns from: the words and formats models see on this platform."""
    from curation.coords import CONVENTIONS
    from curation.exports import COORDS_TEXT, SYSTEM
    from curation.formats import format_action
    from datalake.types import Action
    from mockphone.tasks.registry import REGISTRY

    texts = [SYSTEM[s].format(coords=COORDS_TEXT[c]) for s in SYSTEM for c in COORDS_TEXT]
    texts += [cls.template for cls in REGISTRY.values()] + [cls.name() for cls in REGISTRY.values()]
    actions = [Action("tap", x=540, y=1200), Action("long_press", x=10, y=20, duration_ms=800),
               Action("swipe", x=1, y=2, x2=300, y2=400), Action("scroll", direction="down"),
               Action("input_text", text="hello world"), Action("key", key="back"), Action("key", key="home"),
               Action("key", key="enter"), Action("open_app", app="Settings"), Action("wait", seconds=1),
               Action("answer", text="done"), Action("terminate", status="success"),
               Action("terminate", status="infeasible"), Action("double_tap", x=5, y=6)]
    for style in ("json", "qwen3vl"):
        for conv in CONVENTIONS:
            texts += [format_action(a, style, conv, (1080, 2400)) for a in actions]
    texts += ["Task: ", "Previous actions:", "user", "assistant", "system", "tool", "<tool_response>",
              "Picture 1:", "You are a helpful assistant.", "mobile_use", '"arguments"', '"coordinate"']
    texts += [" ".join(str(n) for n in range(k, 1001, 7)) for k in range(7)]
    from transformers.utils import get_json_schema

    from training.env import MockPhoneEnv

    texts.append(json.dumps(get_json_schema(MockPhoneEnv.__new__(MockPhoneEnv).mobile_use)))  # as templates show it
    return texts + screen_listings()


def screen_listings() -> list[str]:
    """What the demo's oracle sees on seed 0 of every demo template: its instructions, the element lists
    (``curation.elements``) of every screen it passes, and its element-number actions. Class names, app
    and element words and box numbers become whole tokens, so element-list prompts stay short and a
    small model can match an instruction's words to an element's text token by token. (The oracle's
    episodes as ``training.mock_episodes.oracle_demo`` records them, read from UI trees only: no PNG.)"""
    from datalake.types import Action
    from mockphone.tasks.oracle import UI
    from mockphone.tasks.sets import DEMO_TASKS
    from training.mock_episodes import start

    out = []
    for task_name in DEMO_TASKS:
        phone, task = start(task_name, 0)
        size = (phone.device().width, phone.device().height)
        out.append(task.goal)
        actions = []
        for action in task.oracle(UI(phone)):
            actions.append(action)
            out += _listing(phone.ui_tree(), action, size)
            phone.act(action)
        if not actions or actions[-1].type != "terminate":
            out += _listing(phone.ui_tree(), Action("terminate", status="success"), size)
    return out


def _listing(tree: str, action, size: tuple[int, int]) -> list[str]:
    from curation.elements import format_with_marks, marks, render_marks

    items = marks(tree, size)
    return [render_marks(items, "rel1000", size), format_with_marks(action, "json", "rel1000", size, items)]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen3_vl_chat_template

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus() * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL[1:], model_max_length=32768)
    fast.add_tokens(ADDED)  # like Qwen's: whole tokens, but not special (decoding keeps them)
    fast.chat_template = qwen3_vl_chat_template
    return fast


def build_tiny(folder: str | os.PathLike, seed: int = 0) -> Path:
    """Build and save the tiny model, tokenizer and processor into ``folder`` (offline, ~1 s)."""
    import torch
    from transformers import GenerationConfig, Qwen3VLConfig, Qwen3VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from training.processor import ImageOnlyQwen3VLProcessor

    folder = Path(folder)
    tokenizer = build_tokenizer()
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL}
    image_processor = Qwen2VLImageProcessorPil(patch_size=16, merge_size=2, temporal_patch_size=2,
                                               min_pixels=32 * 32, max_pixels=TINY_MAX_PIXELS,
                                               image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    processor = ImageOnlyQwen3VLProcessor(image_processor, tokenizer, chat_template=tokenizer.chat_template)
    config = Qwen3VLConfig(
        text_config=dict(TEXT, vocab_size=len(tokenizer), pad_token_id=ids["<|endoftext|>"]),
        vision_config=VISION, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False)
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config)
    model.generation_config = GenerationConfig(eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
                                               do_sample=False)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "phoneloop_model.json").write_text(json.dumps(
        {"kind": "tiny", "build_id": build_id(), "architecture": "Qwen3VLForConditionalGeneration",
         "parameters": sum(p.numel() for p in model.parameters())}, indent=2))
    return folder
