"""What every importer shares: the item a converter yields, coordinate conversion, and
the import run (skip what the lake holds, check, batch, commit, quarantine, report).

A converter turns one dataset's files into a stream of ``Item``s, one per source
record (an episode, or for per-step datasets the record that failed). An item carries
either an ``Episode`` or the reason it could not become one, plus where it came from
(file, record number and offset) and the raw bytes, so a rejected record lands in the
lake's quarantine intact. Memory stays bounded: items are written in small batches as
they arrive.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from datalake.errors import InvalidRecord
from datalake.interchange import ImportReport
from datalake.writer import Rejected

BATCH_EPISODES = 32
BATCH_BYTES = 64 * 1024 * 1024


@dataclass
class Item:
    origin: str  # the file (or URL) it was read from
    locator: str  # where in it: "record 3 at byte 5120", "line 7", "episode 12"
    episode_id: str | None
    payload: bytes = b""  # the raw record, kept in quarantine when rejected
    episode: object | None = None  # a datalake.types.Episode when the record converted
    error: str | None = None
    skipped: bool = False  # already in the lake (resume)
    note: str | None = None  # files passed over on purpose (a dataset root's sidecars): reported, not quarantined
    held: int | None = None  # a step record (this step number) kept for an episode a later file completes


@dataclass
class DatasetReport(ImportReport):
    dataset: str = ""
    records: int = 0
    held: int = 0  # step records kept in import_parts for episodes that continue in a file not imported yet
    notes: list[str] = field(default_factory=list)


def held_parts(lake, dataset: str, ids: set[str]) -> dict[str, list[dict]]:
    """The step records earlier imports held for the episodes ``ids`` (lake ids), by episode."""
    if not ids:
        return {}
    rows = lake.sql("SELECT episode_id, part, origin, locator, payload FROM import_parts "
                    "WHERE dataset = ? AND list_contains(?, episode_id) ORDER BY part, created_at",
                    [dataset, sorted(ids)]).to_pylist()
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["episode_id"], []).append(row)
    return out


def _hold(lake, dataset: str, items: list[Item], report: DatasetReport) -> None:
    if not items:
        return
    from datalake.schema import now

    created = now()
    lake.append("import_parts", [{"dataset": dataset, "episode_id": it.episode_id, "part": it.held,
                                  "origin": it.origin, "locator": it.locator, "payload": it.payload,
                                  "created_at": created} for it in items])
    report.held += len(items)
    ids = sorted({it.episode_id for it in items})
    report.notes.append(f"held {len(items)} step records of {len(ids)} episodes that continue in a file not "
                        f"imported yet ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''}): importing that "
                        "file completes them")


def note(origin: str, text: str) -> Item:
    return Item(origin, "folder", None, note=text)


def dataset_files(paths: list[str], *, pattern: str = "*", sidecars: dict[str, str] | None = None,
                  accept: Callable[[Path], str | None] | None = None) -> Iterator[Path | Item]:
    """The files to read under ``paths``: a file as given; a folder's files (sorted, recursively,
    hidden ones left out) matching ``pattern``. Files under a folder named in ``sidecars``
    (name -> what it holds), and files ``accept`` turns down (it returns why), are passed
    over with one note per folder or file, so a dataset's root imports as it ships."""
    sidecars = sidecars or {}
    for p in map(Path, paths):
        if not p.is_dir():
            yield p
            continue
        passed: dict[str, int] = {}
        for path in sorted(f for f in p.rglob(pattern) if f.is_file()):
            parts = path.relative_to(p).parts
            if any(part.startswith(".") for part in parts):
                continue
            side = next((part for part in parts[:-1] if part in sidecars), None)
            if side is not None:
                passed[side] = passed.get(side, 0) + 1
                continue
            why = accept(path) if accept is not None else None
            if why:
                yield note(str(path), f"skipped {path}: {why}")
                continue
            yield path
        for side, n in passed.items():
            yield note(str(p / side), f"skipped {n} files under {p / side}/ ({sidecars[side]})")


def tfrecord_file(path: Path) -> str | None:
    """None when ``path`` looks like a TFRecord file (GZIP, or a sound first record header), else why not."""
    with open(path, "rb") as fh:
        head = fh.read(12)
    if head[:2] == b"\x1f\x8b":
        return None
    from collectors.importers.tfrecord import masked_crc

    if len(head) == 12 and masked_crc(head[:8]) == struct.unpack("<I", head[8:])[0]:
        return None
    return "not a TFRecord file (a dataset's sidecar file?)"


def episode_id(dataset: str, original) -> str:
    """The lake id of an imported episode: stable, so a rerun skips what it already wrote."""
    return f"{dataset}-{original}"


def dataset_meta(dataset: str, split: str | None, **ids) -> dict:
    out = {"name": dataset, "split": split}
    out.update({k: v for k, v in ids.items() if v is not None})
    return out


def check_unit(value, where: str) -> float:
    """A normalised coordinate in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise InvalidRecord(f"{where} = {value!r} is outside [0, 1]")
    return float(value)


def unit_to_px(value: float, size: int) -> int:
    """A coordinate in [0, 1] -> the pixel it falls in (1.0 is the last pixel)."""
    return min(int(round(value * size)), size - 1)


def rel1000_to_px(value, size: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1000:
        raise InvalidRecord(f"{where} = {value!r} is outside 0-1000")
    return unit_to_px(value / 1000, size)


def abs_px(value, size: int, where: str) -> int | float:
    """An absolute pixel coordinate that must lie on a screen of ``size`` pixels."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value < size:
        raise InvalidRecord(f"{where} = {value!r} is outside the screen (0-{size - 1})")
    return int(value) if float(value).is_integer() else float(value)


def run_import(lake, dataset: str, items: Callable[[set[str]], Iterator[Item]], *,
               batch_episodes: int = BATCH_EPISODES, progress: Callable[[int], None] | None = None
               ) -> DatasetReport:
    """Write every converted item; quarantine the rest with dataset, file, locator and reason.

    Converting and checking a batch overlaps with writing the previous one (one write in
    flight on a helper thread, so at most two batches are in memory): the Delta/Parquet
    writes, hashing and inflating all release the GIL.
    """
    known = lake.column_values("episodes", "episode_id")
    writer = lake.writer(known_ids=known)
    report = DatasetReport(dataset=dataset)
    pending: list[tuple[Item, object]] = []
    rejected: list[Rejected] = []
    held: list[Item] = []
    pending_bytes = 0

    def reject(item: Item, reason: str) -> None:
        rejected.append(Rejected(f"{dataset}: {reason}", item.payload, item.origin, locator=item.locator,
                                 episode_id=item.episode_id))
        report.reasons.append(f"{item.origin} {item.locator}: {reason}")

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-writer") as pool:
        in_flight: Future | None = None

        def flush() -> None:
            nonlocal in_flight, pending, pending_bytes
            good = _checked(writer, pending, reject)
            pending, pending_bytes = [], 0
            if in_flight is not None:
                report.add(in_flight.result())
                in_flight = None
            if len(rejected) >= 256:
                _quarantine(writer, rejected, report)
            if good:
                in_flight = pool.submit(writer.write, good, dataset, checked=True)

        for item in items(set(known)):
            if item.note is not None:
                report.notes.append(item.note)
                continue
            if item.held is not None:
                held.append(item)
                continue
            report.records += 1
            report.lines += 1
            if item.skipped:
                report.skipped += 1
            elif item.error is not None:
                reject(item, item.error)
            else:
                pending.append((item, item.episode))
                pending_bytes += sum(len(s.observation.screenshot) for s in item.episode.steps)
                if len(pending) >= batch_episodes or pending_bytes >= BATCH_BYTES:
                    flush()
            if progress is not None:
                progress(1)
        flush()
        if in_flight is not None:
            report.add(in_flight.result())
    _quarantine(writer, rejected, report)
    _hold(lake, dataset, held, report)
    return report


def _checked(writer, pending: list[tuple[Item, object]], reject) -> list:
    """The episodes of ``pending`` that pass the lake's checks (frames hashed in one pass)."""
    writer.prepare([ep for _, ep in pending])
    good, seen = [], set()
    for item, ep in pending:
        try:
            writer.check(ep)
            if ep.episode_id in seen:
                raise InvalidRecord(f"episode_id {ep.episode_id!r} appears twice in this import")
        except InvalidRecord as exc:
            reject(item, str(exc))
            writer.forget([ep])
        else:
            seen.add(ep.episode_id)
            good.append(ep)
    return good


def _quarantine(writer, rejected: list[Rejected], report: DatasetReport) -> None:
    if rejected:
        writer.quarantine(list(rejected))
        report.quarantined += len(rejected)
        rejected.clear()
