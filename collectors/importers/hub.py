"""Datasets phoneloop pushed to the Hugging Face Hub: ``hf://datasets/ORG/NAME[@REVISION]``.

Reads the version's ``episodes`` export (``episodes/<split>-NNNNN-of-MMMMM.parquet``,
one row per episode: ids, instruction, outcome, actions as JSON in device pixels,
screenshots as ``Image`` bytes; see curation/exports.py) shard by shard, row group by
row group, so memory stays bounded. Episodes keep their ids, source, outcome and
verifier, so lake -> Hub -> another lake gives the same episodes; ``meta.dataset``
records the repo, the resolved commit, the split and the shard, unless the episode came
from a public dataset: then ``meta.dataset`` stays that dataset's provenance and the Hub
origin is nested beside it, as ``meta.dataset.hub``.

Endpoint and token come from ``HF_ENDPOINT`` and ``HF_TOKEN`` (read at call time);
a Hub without Xet (a mirror, the tests' loopback Hub) also needs ``HF_HUB_DISABLE_XET=1``
before huggingface_hub is imported.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator

import pyarrow.parquet as pq

from collectors.importers.base import Item
from datalake.errors import InvalidRecord
from datalake.types import Action, Device, Episode, Observation, Step, png_size

NAME = "hub"
_URL = re.compile(r"^hf://datasets/(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<rev>[\w./-]+))?/?$")


def parse_url(url: str) -> tuple[str, str]:
    match = _URL.match(url)
    if not match:
        raise InvalidRecord(f"{url!r} is not hf://datasets/ORG/NAME[@REVISION]")
    return match["repo"], match["rev"] or "main"


def _api():
    from huggingface_hub import HfApi

    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    return HfApi(endpoint=endpoint, token=os.environ.get("HF_TOKEN") or None), endpoint


def episode_from_row(row: dict, repo: str, commit: str, shard: str) -> Episode:
    """One export row -> Episode. The ``record`` column (exports since schema v2) carries
    the device, trees, thoughts, model outputs, meta, purpose and score; older exports
    give the ids, instruction, outcome, actions and screenshots only."""
    actions, images = row.get("actions") or [], row.get("images") or []
    if not actions or len(actions) != len(images):
        raise InvalidRecord(f"{len(actions)} actions for {len(images)} images")
    record = _record(row)
    extra_steps = record.get("steps") or [{}] * len(actions)
    if len(extra_steps) != len(actions):
        raise InvalidRecord(f"record has {len(extra_steps)} steps for {len(actions)} actions")
    steps = []
    for i, (action, image, extra) in enumerate(zip(actions, images, extra_steps)):
        png = (image or {}).get("bytes")
        if not png:
            raise InvalidRecord(f"step {i}: image has no bytes")
        try:
            obs = Observation(png, ui_tree=extra.get("ui_tree"), package=extra.get("package"),
                              activity=extra.get("activity"))
            steps.append(Step(obs, Action.from_json(action), thought=extra.get("thought"),
                              raw_output=extra.get("raw_output"), meta=extra.get("meta") or {}))
        except (InvalidRecord, ValueError, AttributeError) as exc:
            raise InvalidRecord(f"step {i}: {exc}") from None
    width, height = png_size(steps[0].observation.screenshot)
    device = Device.from_dict(record["device"]) if "device" in record else \
        Device(width, height, kind=row.get("phone") or "real")
    meta = dict(record.get("meta") or {})
    hub = {"name": f"hf://datasets/{repo}", "revision": commit, "split": row.get("split"), "file": shard}
    source = meta.get("dataset")  # an episode imported from a public dataset keeps that provenance
    meta["dataset"] = {**source, "hub": hub} if isinstance(source, dict) and source.get("name") else hub
    return Episode(instruction=row["instruction"], source=row["source"], episode_id=row["episode_id"],
                   device=device, steps=tuple(steps), app=row.get("app"), category=row.get("category"),
                   task=row.get("task"), outcome=row.get("outcome") or "unknown",
                   verified_by=row.get("verified_by") or "none", policy=record.get("policy"),
                   round=record.get("round"), purpose=record.get("purpose") or "train",
                   failure_reason=record.get("failure_reason"), score=record.get("score"), meta=meta)


def _record(row: dict) -> dict:
    text = row.get("record")
    if not text:
        return {}
    try:
        record = json.loads(text)
    except ValueError as exc:
        raise InvalidRecord(f"record column is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise InvalidRecord("record column must be a JSON object")
    return record


def items(urls: list[str], known: set[str], split: str | None = None) -> Iterator[Item]:
    from huggingface_hub import hf_hub_download

    api, endpoint = _api()
    for url in urls:
        repo, revision = parse_url(url)
        info = api.dataset_info(repo, revision=revision)
        shards = sorted(f.rfilename for f in info.siblings or []
                        if f.rfilename.startswith("episodes/") and f.rfilename.endswith(".parquet"))
        if not shards:
            yield Item(url, "repo", None, error=f"{repo}@{revision} has no episodes/*.parquet export")
            continue
        for shard in shards:
            if split and not shard.split("/")[-1].startswith(f"{split}-"):
                continue
            local = hf_hub_download(repo, shard, repo_type="dataset", revision=info.sha, endpoint=endpoint,
                                    token=api.token)
            yield from _shard_items(pq.ParquetFile(local), f"{url}/{shard}", known, repo, info.sha, shard)


def _shard_items(file: pq.ParquetFile, origin: str, known: set[str], repo: str, commit: str,
                 shard: str) -> Iterator[Item]:
    number = 0
    for batch in file.iter_batches(batch_size=16):
        for row in batch.to_pylist():
            locator, lake_id = f"row {number}", row.get("episode_id")
            number += 1
            if lake_id in known:
                yield Item(origin, locator, lake_id, skipped=True)
                continue
            try:
                yield Item(origin, locator, lake_id, episode=episode_from_row(row, repo, commit, shard))
            except (InvalidRecord, KeyError, TypeError) as exc:
                yield Item(origin, locator, lake_id, repr(row)[:100000].encode(), error=str(exc))
