"""Inference with a registered (or any local) checkpoint: prompt messages + screenshots -> action text.

    policy = load_checkpoint(lake, "sft-a")
    text = policy.generate(row["prompt"], row["images"])        # greedy by default
    action = parse_action(text, "qwen3vl", "rel1000", (w, h))   # curation.formats
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from training.registry import resolve_model


@dataclass
class CheckpointPolicy:
    model: Any
    processor: Any
    path: str

    def generate(self, messages: list[dict], images: list, *, max_new_tokens: int = 64, do_sample: bool = False,
                 temperature: float = 1.0) -> str:
        import torch

        text = self.processor.apply_chat_template(_plain(messages), add_generation_prompt=True, tokenize=False)
        inputs = self.processor(text=[text], images=[[img.convert("RGB") for img in images]] if images else None,
                                return_tensors="pt").to(self.model.device)
        with torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=do_sample,
                                      temperature=temperature if do_sample else None, top_p=None, top_k=None)
        return self.processor.batch_decode(out[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)[0]


def load_path(path: str, max_pixels: int | None = None) -> CheckpointPolicy:
    from transformers import AutoModelForImageTextToText

    from training.processor import load_processor

    processor = load_processor(path, max_pixels=max_pixels)
    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    return CheckpointPolicy(model, processor, path)


def load_checkpoint(lake, ref: str, max_pixels: int | None = None) -> CheckpointPolicy:
    """A registered model name, ``tiny``, a local folder or a Hub id, ready for ``generate``."""
    return load_path(resolve_model(lake, ref).path, max_pixels)


def _plain(messages: list[dict]) -> list[dict]:
    """Drop the ``text: None`` the exports' image parts carry (Arrow structs have every field)."""
    out = []
    for m in messages:
        content = m["content"]
        if isinstance(content, list):
            content = [{k: v for k, v in part.items() if v is not None} for part in content]
        out.append({**m, "content": content})
    return out
