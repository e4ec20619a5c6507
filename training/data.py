"""From a dataset version to what a trainer reads: the export, checked, with capped images.

``open_export(lake, "default@v3", "sft")`` finds the version, checks that it has an
``sft`` export with rows in the split, and loads it with ``datasets`` (the Parquet
shards carry their features). All of that happens before any model is loaded, so a
bad ``--dataset`` fails in a second with a message naming the version and kind.

A version stored on object storage (an ``s3://`` lake: its folder is in the bucket) is
downloaded once, through the lake's ``storage_options`` (the same credentials as its
tables), into a local cache (``$PHONELOOP_CACHE``, default ``~/.cache/phoneloop``):
``datasets/<name>-v<N>-<fingerprint>``, the version's card and every export's files (the
card's configs name them all, and ``datasets`` resolves them all), written to a staging
folder and renamed into place when complete, so a half download is never read and a
second run reads the cache. A version is immutable (its fingerprint names it), so the
cache never goes stale.

``cap_images`` shrinks every screenshot to at most ``max_pixels`` once (``datasets``
caches the result), so the loader hands the trainer small images instead of decoding
full-resolution PNGs every epoch. The processor applies the same cap, so the model
sees the same thing either way.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.errors import CurationError, DatasetNotFound
from curation.versions import get_version
from training.errors import BadTrainingConfig, TrainingError, WrongExportKind

KINDS = ("sft", "grpo")


@dataclass(frozen=True)
class Export:
    ref: str  # name@vN
    fingerprint: str
    kind: str
    split: str
    rows: int
    path: str
    recipe: str = ""  # the version's recipe text (its export params are the prompt format)

    def load(self):
        import datasets

        return datasets.load_dataset(self.path, self.kind, split=self.split)


def open_export(lake, ref: str, kind: str, split: str = "train") -> Export:
    """The ``kind`` export of dataset version ``ref``; raises before any compute if it cannot be trained on."""
    if kind not in KINDS:
        raise BadTrainingConfig(f"unknown export kind {kind!r} (training reads: {', '.join(KINDS)})")
    if not ref or "@v" not in ref:
        raise BadTrainingConfig(f"--dataset must name a version, NAME@vN (got {ref!r}); see `phoneloop datasets list`")
    try:
        dv = get_version(lake, ref)
    except DatasetNotFound as exc:
        raise TrainingError(str(exc)) from None
    except CurationError as exc:
        raise BadTrainingConfig(str(exc)) from None
    formats = dv.exports.get("formats", {})
    if kind not in formats:
        have = ", ".join(sorted(formats)) or "none"
        raise WrongExportKind(f"dataset {dv.ref} has no {kind!r} export (it has: {have}); add "
                              f"`- {{format: {kind}}}` to the recipe's exports and curate a new version")
    splits = formats[kind]
    if split not in splits or not splits[split].get("rows"):
        have = ", ".join(f"{s} ({v.get('rows', 0)} rows)" for s, v in sorted(splits.items())) or "none"
        raise WrongExportKind(f"dataset {dv.ref} has no rows in the {kind!r} export's {split!r} split (has: {have})")
    path = _local_copy(lake, dv) if "://" in dv.path else dv.path
    return Export(ref=dv.ref, fingerprint=dv.fingerprint, kind=kind, split=split, rows=splits[split]["rows"],
                  path=path, recipe=dv.recipe)


def cache_root() -> Path:
    """Where files from object storage are kept on this machine (``$PHONELOOP_CACHE``)."""
    return Path(os.environ.get("PHONELOOP_CACHE") or Path.home() / ".cache" / "phoneloop").expanduser()


def _local_copy(lake, dv) -> str:
    """A local folder with version ``dv``'s card and export files, downloaded once from the bucket."""
    from datalake.storage import filesystem, inside

    final = cache_root() / "datasets" / f"{dv.name}-v{dv.version}-{dv.fingerprint[:16]}"
    if (final / "README.md").is_file():
        return str(final)
    files = sorted({str(rel) for splits in dv.exports["formats"].values() for info in splits.values()
                    for rel in info.get("files", [])})
    if not all(inside(rel) for rel in files):
        raise BadTrainingConfig(f"dataset {dv.ref} names a file outside its folder; rebuild it with `phoneloop curate`")
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=final.parent))
    try:
        fs, root = filesystem(dv.path, lake.storage_options)
        for rel in ["README.md", *files]:
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            with fs.open_input_stream(f"{root}/{rel}") as src, open(staging / rel, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        staging.rename(final)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if (final / "README.md").is_file():  # another process finished the same download first
            return str(final)
        raise TrainingError(f"dataset {dv.ref}: cannot download {dv.path} to {final}: {exc}") from None
    return str(final)


def lake_key(uri: str) -> str:
    """A short, stable folder name for a lake URI (local copies of one lake's files stay apart)."""
    return hashlib.sha256(uri.encode()).hexdigest()[:16]


def capped_size(width: int, height: int, max_pixels: int) -> tuple[int, int]:
    """The largest size with the same aspect ratio and at most ``max_pixels`` pixels (never upscales)."""
    if width * height <= max_pixels:
        return width, height
    scale = math.sqrt(max_pixels / (width * height))
    return max(1, int(width * scale)), max(1, int(height * scale))


BALANCE = ("task", "app")


def balanced_indices(episode_ids: list[str], groups: dict[str, str], seed: int = 0) -> list[int]:
    """Row indices in which every group (a task or an app) counts as many episodes as the largest.

    ``episode_ids[i]`` is row i's episode, ``groups`` maps an episode to its group. A group of n
    episodes, with the largest holding N, repeats each of its episodes N // n times and N % n of
    them (a seeded choice) once more; an episode's rows always travel together, so steps keep
    their weight within an episode. Why: the lake keeps one copy of identical episodes, so a
    template whose seeds all produce the same demonstration ("Turn on Wi-Fi.") has one episode
    beside templates with eight, and a small model then opens the majority's app for it."""
    from curation.ops.base import seeded_order

    members: dict[str, list[str]] = {}
    for eid in dict.fromkeys(episode_ids):
        members.setdefault(groups[eid], []).append(eid)
    largest = max((len(m) for m in members.values()), default=0)
    copies: dict[str, int] = {}
    for episodes in members.values():
        base, extra = divmod(largest, len(episodes))
        for k, i in enumerate(seeded_order(episodes, seed)):
            copies[episodes[i]] = base + (k < extra)
    rows: dict[str, list[int]] = {}
    for i, eid in enumerate(episode_ids):
        rows.setdefault(eid, []).append(i)
    return [i for eid, idx in rows.items() for _ in range(copies[eid]) for i in idx]


def balance_rows(lake, ds, by: str, seed: int = 0):
    """``ds`` (an sft or grpo export) with rows repeated by ``balanced_indices``; groups come from
    the lake's episodes (``task``: the template, compared as curation compares it; ``app``)."""
    from types import SimpleNamespace

    from curation.ops.base import group_key

    if by not in BALANCE:
        raise BadTrainingConfig(f"balance must be one of {', '.join(BALANCE)} (got {by!r})")
    if "episode_id" not in ds.column_names:
        raise BadTrainingConfig("this export has no episode_id column to balance by; curate a new version")
    ids = ds["episode_id"]
    wanted = sorted(set(ids))
    lake.invalidate()
    rows = lake.sql("SELECT episode_id, task, app, instruction FROM episodes WHERE list_contains(?, episode_id)",
                    params=[wanted]).to_pylist()
    key = {r["episode_id"]: group_key(SimpleNamespace(**r), by) for r in rows}
    missing = [eid for eid in wanted if eid not in key]
    if missing:
        raise TrainingError(f"{len(missing)} episode(s) of this export are not in the lake (e.g. {missing[0]}): "
                            "cannot balance by " + by)
    return ds.select(balanced_indices(ids, key, seed))


def cap_image(image, max_pixels: int):
    from PIL import Image

    size = capped_size(image.width, image.height, max_pixels)
    if size != image.size:  # a 1080x2400 screen to 60x134: reducing first halves the time (26 -> 14 ms)
        image = image.resize(size, Image.Resampling.BILINEAR, reducing_gap=3.0)
    return image.convert("RGB")


def cap_images(ds, max_pixels: int, num_proc: int | None = None):
    """A copy of ``ds`` whose ``images`` are at most ``max_pixels`` each (computed once, cached)."""
    def cap(batch: dict[str, list]) -> dict[str, Any]:
        return {"images": [[cap_image(img, max_pixels) for img in images] for images in batch["images"]]}

    return ds.map(cap, batched=True, batch_size=32, num_proc=num_proc, desc=f"capping images at {max_pixels} px")


def with_tool_schema(ds, processor, tools: list, column: str = "messages"):
    """Rows whose system prompt also lists ``tools``, rendered exactly as the chat template renders them.

    Online GRPO prompts carry the ``mobile_use`` tool's schema (TRL renders the
    environment's tools into the system turn); SFT with the same schema lets a policy
    meet online episodes in the form it was trained on."""
    cache: dict[str, str] = {}

    def render(system: str) -> str:
        if system not in cache:
            text = processor.apply_chat_template(
                [{"role": "system", "content": [{"type": "text", "text": system}]},
                 {"role": "user", "content": [{"type": "text", "text": "-"}]}], tools=tools, tokenize=False)
            start, end = "<|im_start|>system\n", "<|im_end|>"
            if start not in text:
                raise BadTrainingConfig("--tools needs a ChatML (Qwen-family) chat template")
            cache[system] = text.split(start, 1)[1].split(end, 1)[0]
        return cache[system]

    def add(row: dict) -> dict:
        messages = []
        for m in row[column]:
            if m["role"] == "system":
                text = "".join(p["text"] or "" for p in m["content"] if p["type"] == "text")
                m = {**m, "content": [{"type": "text", "text": render(text)}]}
            messages.append(m)
        return {column: messages}

    return ds.map(add, desc="adding the tool schema")
