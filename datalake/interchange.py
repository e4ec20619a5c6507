"""The interchange format (docs/interchange.md): JSONL, one episode per line, PNGs beside it.

``import_jsonl`` reads a file line by line; a line that cannot become a valid
Episode (bad JSON, non-UTF-8 bytes, missing field, unknown action, off-screen tap,
unreadable PNG, oversized UI tree, ...) goes to quarantine with its raw bytes and
the reason, and the import goes on. ``export_jsonl`` writes the canonical form:
``episodes.jsonl`` plus ``frames/<sha256>.png``; exporting what an import of a
canonical file wrote gives the same bytes back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from datalake.errors import InvalidRecord
from datalake.types import Action, Device, Episode, Observation, Step
from datalake.writer import DEFAULT_MAX_UI_TREE_BYTES, Rejected, WriteReport, dumps, episode_to_dict

DEFAULT_BATCH_EPISODES = 64
DEFAULT_BATCH_BYTES = 256 * 1024 * 1024
_EPISODE_KEYS = {"episode_id", "instruction", "source", "app", "category", "task", "device", "outcome",
                 "verified_by", "policy", "round", "meta", "steps", "purpose", "failure_reason", "score"}
_STEP_KEYS = {"screenshot", "ui_tree", "package", "activity", "action", "thought", "raw_output", "meta"}

Progress = Callable[[int], None]  # called with the number of lines just processed


@dataclass
class ImportReport(WriteReport):
    lines: int = 0
    files: list[str] = field(default_factory=list)


def read_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes) for every non-blank line."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if raw.strip():
                yield number, raw.rstrip(b"\r\n")


def parse_record(raw: bytes, base: Path) -> Episode:
    """One JSONL line -> Episode, or InvalidRecord naming what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRecord(f"line is not valid UTF-8 (byte {exc.start}: {exc.reason})") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRecord(f"line is not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(record, dict):
        raise InvalidRecord(f"an episode must be a JSON object, got {type(record).__name__}")
    return episode_from_record(record, base)


def _require(obj: dict, key: str, where: str):
    if key not in obj or obj[key] is None:
        raise InvalidRecord(f"{where} is missing required field {key!r}")
    return obj[key]


def episode_from_record(record: dict, base: Path) -> Episode:
    unknown = sorted(set(record) - _EPISODE_KEYS)
    if unknown:
        raise InvalidRecord(f"unknown episode field(s): {', '.join(unknown)}")
    steps_in = _require(record, "steps", "episode")
    if not isinstance(steps_in, list):
        raise InvalidRecord("episode.steps must be a list")
    meta = record.get("meta") or {}
    if not isinstance(meta, dict):
        raise InvalidRecord("episode.meta must be an object")
    return Episode(
        episode_id=record.get("episode_id") or "",
        instruction=_require(record, "instruction", "episode"),
        source=_require(record, "source", "episode"),
        device=Device.from_dict(_require(record, "device", "episode")),
        steps=tuple(_step_from_record(i, s, base) for i, s in enumerate(steps_in)),
        app=record.get("app"), category=record.get("category"), task=record.get("task"),
        outcome=record.get("outcome", "unknown"), verified_by=record.get("verified_by", "none"),
        policy=record.get("policy"), round=record.get("round"), meta=meta,
        purpose=record.get("purpose") or "train", failure_reason=record.get("failure_reason"),
        score=record.get("score"),
    )


def _step_from_record(i: int, step: dict, base: Path) -> Step:
    where = f"step {i}"
    if not isinstance(step, dict):
        raise InvalidRecord(f"{where} must be an object")
    unknown = sorted(set(step) - _STEP_KEYS)
    if unknown:
        raise InvalidRecord(f"{where}: unknown field(s): {', '.join(unknown)}")
    try:
        png = _read_screenshot(_require(step, "screenshot", where), base)
        action = Action.from_dict(_require(step, "action", where))
        obs = Observation(screenshot=png, ui_tree=step.get("ui_tree"), package=step.get("package"),
                          activity=step.get("activity"))
        return Step(observation=obs, action=action, thought=step.get("thought"), raw_output=step.get("raw_output"),
                    meta=step.get("meta") or {})
    except InvalidRecord as exc:
        if str(exc).startswith(where):
            raise
        raise InvalidRecord(f"{where}: {exc}") from None


def _read_screenshot(rel: str, base: Path) -> bytes:
    if not isinstance(rel, str) or not rel:
        raise InvalidRecord("screenshot must be a relative path string")
    if os.path.isabs(rel) or "\\" in rel:
        raise InvalidRecord(f"screenshot path {rel!r} must be relative to the JSONL file")
    root = base.resolve()
    path = (root / rel).resolve()
    if not path.is_relative_to(root):
        raise InvalidRecord(f"screenshot path {rel!r} leaves the folder of the JSONL file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InvalidRecord(f"screenshot {rel!r} cannot be read: {exc.strerror}") from None


def import_jsonl(lake, path: str | os.PathLike, *, batch_episodes: int = DEFAULT_BATCH_EPISODES,
                 max_ui_tree_bytes: int = DEFAULT_MAX_UI_TREE_BYTES, progress: Progress | None = None) -> ImportReport:
    """Import one JSONL file; bad lines go to quarantine, good ones in batched commits."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    origin = str(path)
    writer = lake.writer(max_ui_tree_bytes=max_ui_tree_bytes)
    report = ImportReport(files=[origin])
    batch: list[Episode] = []
    batch_bytes = 0
    rejected: list[Rejected] = []
    seen: set[str] = set()

    def flush() -> None:
        nonlocal batch, batch_bytes
        if batch:
            report.add(writer.write(batch, origin=origin, checked=True))
        batch, batch_bytes = [], 0

    for number, raw in read_lines(path):
        report.lines += 1
        try:
            ep = parse_record(raw, path.parent)
            writer.prepare([ep])
            writer.check(ep)
            if ep.episode_id in seen:
                raise InvalidRecord(f"episode_id {ep.episode_id!r} appears more than once in this file")
        except InvalidRecord as exc:
            rejected.append(Rejected(str(exc), raw, origin, locator=f"line {number}",
                                     episode_id=_peek_id(raw)))
        else:
            seen.add(ep.episode_id)
            batch.append(ep)
            batch_bytes += sum(len(s.observation.screenshot) for s in ep.steps)
            if len(batch) >= batch_episodes or batch_bytes >= DEFAULT_BATCH_BYTES:
                flush()
        if progress is not None:
            progress(1)
    flush()
    if rejected:
        writer.quarantine(rejected)
        report.quarantined += len(rejected)
        report.reasons.extend(f"{r.locator}: {r.reason}" for r in rejected)
    return report


def _peek_id(raw: bytes) -> str | None:
    try:
        value = json.loads(raw).get("episode_id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def export_jsonl(lake, out_dir: str | os.PathLike, *, where: str | None = None,
                 progress: Progress | None = None) -> int:
    """Write the episodes matching ``where`` (SQL over the episodes view) in canonical form."""
    out = Path(out_dir)
    (out / "frames").mkdir(parents=True, exist_ok=True)
    query = "SELECT episode_id FROM episodes"
    if where:
        query += f" WHERE {where}"
    query += " ORDER BY created_at, batch_id, batch_seq"
    ids = lake.sql(query).column(0).to_pylist()
    tmp = out / "episodes.jsonl.tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        for episode_id in ids:
            ep = lake.episode(episode_id)
            for step in ep.steps:
                target = out / "frames" / f"{step.observation.sha256}.png"
                if not target.exists():
                    target.write_bytes(step.observation.screenshot)
            fh.write(dumps(episode_to_dict(ep, lambda sha: f"frames/{sha}.png")) + "\n")
            if progress is not None:
                progress(1)
    tmp.replace(out / "episodes.jsonl")
    return len(ids)


def _import_in_worker(uri: str, path: str, options: dict) -> ImportReport:
    from datalake.lake import Lake

    return import_jsonl(Lake.open(uri), path, **options)


def import_files(lake, paths: list[str | os.PathLike], *, workers: int = 1,
                 progress: Progress | None = None, **options) -> ImportReport:
    """Import several JSONL files; with ``workers > 1`` one spawned process per file."""
    total = ImportReport()
    if workers <= 1 or len(paths) <= 1:
        for path in paths:
            _merge(total, import_jsonl(lake, path, progress=progress, **options))
        return total
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from datalake.lake import spawn_context

    with ProcessPoolExecutor(max_workers=workers, mp_context=spawn_context()) as pool:
        futures = [pool.submit(_import_in_worker, lake.uri, str(p), options) for p in paths]
        for future in as_completed(futures):
            part = future.result()
            _merge(total, part)
            if progress is not None:
                progress(part.lines)
    lake.invalidate()
    return total


def _merge(total: ImportReport, part: ImportReport) -> None:
    total.add(part)
    total.lines += part.lines
    total.files.extend(part.files)
