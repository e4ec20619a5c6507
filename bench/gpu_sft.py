"""GPU check: SFT throughput of a real-size Qwen3-VL architecture with random weights (no Hub weights).

    python bench/gpu_sft.py --size 2b --max-steps 300          # on a GPU machine
    python bench/gpu_sft.py --size tiny --max-steps 3 --allow-cpu   # smoke run of this script on a CPU

Builds the model from a config (Qwen3-VL-2B or -4B geometry: vision tower with deepstack,
interleaved M-RoPE decoder), the tokenizer the tiny model uses (trained locally) and a
generated export (phone-like screenshots with a button to tap, the action as the
assistant turn, as ``curation``'s sft export writes it), then trains with TRL's
``SFTTrainer`` (assistant-only loss, bf16) and prints tokens/s, samples/s and peak GPU
memory. It never runs in CI and exits with 2 when no GPU is visible (unless --allow-cpu).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SIZES = {
    "tiny": None,  # training.tiny's toy sizes
    "2b": dict(text=dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=28, num_attention_heads=16,
                         num_key_value_heads=8, head_dim=128),
               vision=dict(depth=24, hidden_size=1024, intermediate_size=4096, num_heads=16, out_hidden_size=2048,
                           num_position_embeddings=2304, deepstack_visual_indexes=[5, 11, 17])),
    "4b": dict(text=dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=128),
               vision=dict(depth=24, hidden_size=1024, intermediate_size=4096, num_heads=16, out_hidden_size=2560,
                           num_position_embeddings=2304, deepstack_visual_indexes=[5, 11, 17])),
}
MROPE = {"rope_type": "default", "rope_theta": 5_000_000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True}


def build_model(size: str, folder: Path, max_pixels: int) -> None:
    import torch
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    from training import tiny

    if SIZES[size] is None:
        tiny.build_tiny(folder)
        return
    tiny.build_tiny(folder)  # tokenizer, processor, chat template; the weights are replaced below
    tokenizer_len = json.loads((folder / "config.json").read_text())["text_config"]["vocab_size"]
    ids = json.loads((folder / "config.json").read_text())
    spec = SIZES[size]
    config = Qwen3VLConfig(
        text_config=dict(spec["text"], vocab_size=max(151_936, tokenizer_len), max_position_embeddings=32768,
                         rope_parameters=MROPE, pad_token_id=ids["text_config"].get("pad_token_id")),
        vision_config=dict(spec["vision"], patch_size=16, spatial_merge_size=2, temporal_patch_size=2),
        image_token_id=ids["image_token_id"], video_token_id=ids["video_token_id"],
        vision_start_token_id=ids["vision_start_token_id"], vision_end_token_id=ids["vision_end_token_id"],
        tie_word_embeddings=True)
    torch.manual_seed(0)
    model = Qwen3VLForConditionalGeneration(config).to(torch.bfloat16)
    model.save_pretrained(folder)
    processor_cfg = folder / "preprocessor_config.json"
    if processor_cfg.is_file():
        body = json.loads(processor_cfg.read_text())
        body["max_pixels"] = max_pixels
        processor_cfg.write_text(json.dumps(body))
    print(f"model: Qwen3-VL {size} geometry, {sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters")


def make_rows(n: int, width: int, height: int):
    """SFT rows shaped like curation's sft export: messages (image + task) and the screenshot."""
    from PIL import Image, ImageDraw

    from curation.formats import format_action
    from datalake.types import Action

    rng = random.Random(0)
    rows = []
    for i in range(n):
        img = Image.new("RGB", (width, height), "white")
        draw = ImageDraw.Draw(img)
        x0, y0 = rng.randrange(0, width - 300), rng.randrange(200, height - 200)
        draw.rectangle([x0, y0, x0 + 280, y0 + 120], fill=(30, 120, 220))
        draw.text((x0 + 20, y0 + 40), f"Button {i % 17}", fill="white")
        buf = BytesIO()
        img.save(buf, "PNG")
        action = Action("tap", x=x0 + 140, y=y0 + 60)
        rows.append({
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "You operate an Android phone."}]},
                {"role": "user", "content": [{"type": "image"},
                                             {"type": "text", "text": f"Task: tap Button {i % 17}"}]},
                {"role": "assistant", "content": [{"type": "text", "text": format_action(
                    action, "qwen3vl", "rel1000", (width, height))}]}],
            "images": [{"bytes": buf.getvalue(), "path": None}],
        })
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="2b")
    parser.add_argument("--max-steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--max-pixels", type=int, default=401_408)
    parser.add_argument("--allow-cpu", action="store_true", help="run without a GPU (smoke test of this script)")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available() and not args.allow_cpu:
        print("gpu_sft: no GPU visible; this check runs on a GPU machine only (or pass --allow-cpu)")
        return 2
    from datasets import Dataset, Image as ImageFeature
    from trl import SFTConfig, SFTTrainer

    from training.processor import load_processor
    from transformers import AutoModelForImageTextToText

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        build_model(args.size, folder, args.max_pixels)
        data = Dataset.from_list(make_rows(args.rows, 1080, 2400)).cast_column("images", [ImageFeature()])
        processor = load_processor(str(folder), max_pixels=args.max_pixels)
        gpu = torch.cuda.is_available()
        model = AutoModelForImageTextToText.from_pretrained(folder, dtype=torch.bfloat16 if gpu else torch.float32)
        config = SFTConfig(output_dir=str(Path(tmp) / "out"), max_steps=args.max_steps,
                           per_device_train_batch_size=args.batch_size, learning_rate=1e-5, logging_steps=10,
                           save_strategy="no", assistant_only_loss=True, max_length=None, bf16=gpu,
                           use_cpu=not gpu, report_to="none", gradient_checkpointing=gpu,
                           dataloader_num_workers=2 if gpu else 0)
        trainer = SFTTrainer(model=model, args=config, train_dataset=data, processing_class=processor)
        if gpu:
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        result = trainer.train()
        seconds = time.perf_counter() - start
        tokens = max((float(h.get("num_tokens", 0)) for h in trainer.state.log_history), default=0) or None
        samples = args.max_steps * args.batch_size
        print(f"steps {args.max_steps}, batch {args.batch_size}, {seconds:.1f} s")
        print(f"  samples/s        {samples / seconds:10.2f}")
        if tokens:
            print(f"  tokens/s         {tokens / seconds:10.0f}   ({tokens:.0f} tokens seen)")
        print(f"  train loss       {result.training_loss:10.4f}")
        if gpu:
            print(f"  peak GPU memory  {torch.cuda.max_memory_allocated() / 2**30:10.2f} GiB"
                  f"   on {torch.cuda.get_device_name()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
