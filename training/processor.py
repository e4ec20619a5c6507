"""The Qwen3-VL processor without a video processor, and loading a processor for any model.

The stock ``Qwen3VLProcessor`` insists on a video processor, and the Qwen video
processors need torchvision, which cannot be installed next to the CPU torch here.
``ImageOnlyQwen3VLProcessor`` takes images only; it is registered with
``AutoProcessor`` for Qwen3-VL configs (without the registration ``AutoProcessor``
silently falls back to a plain tokenizer). Images use the PIL image processor, so
nothing here needs torchvision either.

The image-size cap is the image processor's ``max_pixels`` (its ``size.longest_edge``):
every screenshot is resized to at most that many pixels before it becomes tokens.
"""

from __future__ import annotations

from pathlib import Path

from transformers import AutoProcessor, AutoTokenizer, Qwen3VLConfig
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor


class ImageOnlyQwen3VLProcessor(Qwen3VLProcessor):
    """Qwen3-VL's processor for images and text (no video)."""

    attributes = ["image_processor", "tokenizer"]

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        kwargs.pop("video_processor", None)
        super().__init__(image_processor, tokenizer, video_processor=None, chat_template=chat_template, **kwargs)

    @classmethod
    def get_attributes(cls):  # transformers 5 reads sub-processors from __init__'s signature
        return ["image_processor", "tokenizer"]

    def apply_chat_template(self, *args, **kwargs):
        """As Qwen3-VL's, with the image fields of a tokenized dict as tensors even without ``return_tensors``
        (TRL 1.16's tool loop calls ``.prod`` on ``image_grid_thw`` after a turn whose tool answers hold no image)."""
        out = super().apply_chat_template(*args, **kwargs)
        if kwargs.get("tokenize") and kwargs.get("return_dict") and hasattr(out, "keys"):
            import torch

            for key in ("pixel_values", "image_grid_thw"):
                if key in out and not isinstance(out[key], torch.Tensor):
                    out[key] = torch.as_tensor(out[key])
        return out


AutoProcessor.register(Qwen3VLConfig, ImageOnlyQwen3VLProcessor, exist_ok=True)


def set_image_cap(processor, max_pixels: int, min_pixels: int | None = None) -> None:
    """Cap every image at ``max_pixels`` (and raise tiny ones to ``min_pixels``)."""
    ip = processor.image_processor
    size = dict(ip.size)
    size["longest_edge"] = int(max_pixels)
    if min_pixels is not None:
        size["shortest_edge"] = int(min_pixels)
    size["shortest_edge"] = min(size.get("shortest_edge", max_pixels), int(max_pixels))
    ip.size = size
    for name, value in (("max_pixels", size["longest_edge"]), ("min_pixels", size["shortest_edge"])):
        if hasattr(ip, name):
            setattr(ip, name, value)


def load_processor(path: str | Path, *, max_pixels: int | None = None, padding_side: str | None = None):
    """The processor of a local folder or Hub id, image-only for Qwen3-VL, with the image cap applied."""
    path = str(path)
    processor = AutoProcessor.from_pretrained(path)
    if not hasattr(processor, "image_processor"):  # a tokenizer came back: build the VL processor by hand
        tokenizer = AutoTokenizer.from_pretrained(path)
        image_processor = Qwen2VLImageProcessorPil.from_pretrained(path)
        processor = ImageOnlyQwen3VLProcessor(image_processor, tokenizer, chat_template=tokenizer.chat_template)
    if max_pixels is not None:
        set_image_cap(processor, max_pixels)
    if padding_side is not None:
        processor.tokenizer.padding_side = padding_side
        processor.padding_side = padding_side
    return processor


def resized_convention(processor) -> str:
    """The ``resized`` coordinate convention of the resize this processor really applies.

    Qwen-VL processors resize every image to sides that are multiples of
    ``patch_size * merge_size`` with the pixel count within the processor's
    ``size`` bounds; the name (``resized:F:MIN:MAX``) carries that geometry to the
    exports, the rewards and the policies."""
    from curation.coords import resized_name

    ip = processor.image_processor
    factor = int(ip.patch_size) * int(getattr(ip, "merge_size", 1) or 1)
    size = dict(ip.size)
    return resized_name(factor, int(size["shortest_edge"]), int(size["longest_edge"]))
