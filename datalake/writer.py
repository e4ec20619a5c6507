"""Writing episodes into the lake: validation, quarantine, frame dedup, commit order.

One call to ``EpisodeWriter.write`` is one batch, committed as (at most) three Delta
commits in this order: new frames, then steps, then episodes. Readers only see
steps whose (episode_id, batch_id) has an episode row (see ``query.py``), so a
writer killed before its episodes commit leaves nothing visible: orphan steps are
never shown and orphan frames are harmless (content-addressed, reusable).

On a local lake a batch's frames are hashed and checked in chunks on a thread pool
while the new, valid frames of earlier chunks are already being written into the
batch's frames file (``framefile.FrameFile``); the file is committed only if the batch
has an episode to write. Every check (PNG structure, screenshot size against the
device's, UI tree) still decides per episode before anything is committed.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa
from deltalake import ColumnProperties, DeltaTable, WriterProperties, write_deltalake

from datalake import schema as S
from datalake.errors import InvalidRecord
from datalake.framefile import ROW_GROUP_ROWS, FrameFile
from datalake.png import check_png
from datalake.types import ACTION_VERSION, Episode, Observation
from datalake.uitree import parse_ui_tree

DEFAULT_MAX_UI_TREE_BYTES = 2 * 1024 * 1024

# PNG bytes are already compressed; small row groups keep a single-frame read small.
# No dictionary or min/max statistics for the PNG column: both cost a pass over every
# 135 KB blob and help no query; the sha column keeps its statistics for pruning.
FRAME_PROPS_ROWS = ROW_GROUP_ROWS
FRAME_CHUNK = 64  # frames hashed and checked per task while earlier chunks are written
FRAME_PROPS = WriterProperties(
    max_row_group_size=FRAME_PROPS_ROWS, compression="UNCOMPRESSED",
    column_properties={"png": ColumnProperties(dictionary_enabled=False, statistics_enabled="NONE",
                                               encoding="PLAIN")},
)
ROW_PROPS = WriterProperties(compression="ZSTD")

CommitHook = Callable[[str, int], None]  # (table name, rows committed)


@dataclass
class Rejected:
    """A record that goes to quarantine: the reason, where it came from, the raw payload."""

    reason: str
    payload: bytes
    origin: str
    locator: str | None = None
    episode_id: str | None = None


@dataclass
class WriteReport:
    written: int = 0
    skipped: int = 0  # already in the lake
    quarantined: int = 0
    steps: int = 0
    new_frames: int = 0
    reasons: list[str] = field(default_factory=list)

    def add(self, other: WriteReport) -> None:
        self.written += other.written
        self.skipped += other.skipped
        self.quarantined += other.quarantined
        self.steps += other.steps
        self.new_frames += other.new_frames
        self.reasons.extend(other.reasons)


def episode_to_dict(ep: Episode, frame_ref: Callable[[str], str] = lambda sha: sha) -> dict:
    """The interchange form of an episode; ``frame_ref`` maps a frame sha to its reference."""
    out: dict = {"episode_id": ep.episode_id, "instruction": ep.instruction, "source": ep.source}
    for name in ("app", "category", "task"):
        if getattr(ep, name) is not None:
            out[name] = getattr(ep, name)
    out["device"] = ep.device.to_dict()
    out["outcome"] = ep.outcome
    out["verified_by"] = ep.verified_by
    for name in ("policy", "round"):
        if getattr(ep, name) is not None:
            out[name] = getattr(ep, name)
    if ep.purpose != "train":
        out["purpose"] = ep.purpose
    for name in ("failure_reason", "score"):
        if getattr(ep, name) is not None:
            out[name] = getattr(ep, name)
    if ep.meta:
        out["meta"] = ep.meta
    out["steps"] = [_step_to_dict(step, frame_ref) for step in ep.steps]
    return out


def _step_to_dict(step, frame_ref) -> dict:
    obs = step.observation
    out: dict = {"screenshot": frame_ref(obs.sha256)}
    for name in ("ui_tree", "package", "activity"):
        if getattr(obs, name) is not None:
            out[name] = getattr(obs, name)
    out["action"] = step.action.to_dict()
    for name in ("thought", "raw_output"):
        if getattr(step, name) is not None:
            out[name] = getattr(step, name)
    if step.meta:
        out["meta"] = step.meta
    return out


def perturbation_name(value) -> str | None:
    """The perturbation profile recorded in episode meta (a name, or {"profile": name, ...})."""
    if isinstance(value, dict):
        value = value.get("profile")
    return _text_or_none(value)


def _text_or_none(value) -> str | None:
    return None if value is None else str(value)


def dumps(record: dict) -> str:
    """Canonical JSON for the interchange format (UTF-8, no spaces, keys as given)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=max(2, min(8, os.cpu_count() or 2)), thread_name_prefix="frames")
    return _POOL


class EpisodeWriter:
    """Appends validated episodes to a lake; rejects go to quarantine with a reason."""

    def __init__(self, lake, *, max_ui_tree_bytes: int = DEFAULT_MAX_UI_TREE_BYTES,
                 on_commit: CommitHook | None = None, known_ids: set[str] | None = None):
        self.lake = lake
        self.max_ui_tree_bytes = max_ui_tree_bytes
        self.on_commit = on_commit
        # What the lake already holds, loaded once and kept current by this writer's own
        # commits. A concurrent writer may commit the same id meanwhile: the views keep
        # the first commit of an id, so a race costs space, never correctness.
        self._known_frames: set[str] | None = None
        self._known_ids: set[str] | None = None if known_ids is None else set(known_ids)
        self._checked_frames: dict[str, tuple[int, int]] = {}
        self._tables: dict[str, DeltaTable] = {}

    # -- validation -----------------------------------------------------------------
    def prepare(self, episodes: list[Episode]) -> None:
        """Hash and check the frames of ``episodes`` on the thread pool, one chunk per thread
        (hashlib and zlib release the GIL on large buffers; one future per frame would not
        scale). ``check`` then finds every result cached."""
        todo = list({id(s.observation): s.observation for ep in episodes for s in ep.steps}.values())
        if len(todo) < 8:
            return
        threads = _pool()._max_workers

        def work(chunk) -> None:
            for obs in chunk:
                try:
                    self._frame_size(obs)
                except InvalidRecord:
                    pass  # reported with its step number by check()

        list(_pool().map(work, [todo[i::threads] for i in range(threads)]))

    def _frame_size(self, obs) -> tuple[int, int]:
        """(width, height) of a structurally sound screenshot; checked once per sha."""
        size = self._checked_frames.get(obs.sha256)
        if size is None:
            size = self._checked_frames[obs.sha256] = check_png(obs.screenshot)
        return size

    def check(self, ep: Episode) -> None:
        """Checks beyond the types' own: PNG structure, screenshot size against the device's
        (as given or rotated), UI tree size and syntax."""
        device = (ep.device.width, ep.device.height)
        for i, step in enumerate(ep.steps):
            obs = step.observation
            try:
                size = self._frame_size(obs)
            except InvalidRecord as exc:
                raise InvalidRecord(f"step {i}: {exc}") from None
            if size != device and size[::-1] != device:
                raise InvalidRecord(f"step {i}: screenshot is {size[0]}x{size[1]}, but the episode's device is "
                                    f"{device[0]}x{device[1]} (neither as given nor rotated)")
            if obs.ui_tree is not None:
                size = len(obs.ui_tree.encode("utf-8"))
                if size > self.max_ui_tree_bytes:
                    raise InvalidRecord(
                        f"step {i}: ui tree is {size} bytes, over the {self.max_ui_tree_bytes}-byte limit")
                try:
                    parse_ui_tree(obs.ui_tree)
                except InvalidRecord as exc:
                    raise InvalidRecord(f"step {i}: {exc}") from None

    def forget(self, episodes: Iterable[Episode]) -> None:
        """Drop the cached frame checks of ``episodes`` (only needed within a batch). Entries
        of other episodes stay: a caller may be checking the next batch on another thread."""
        for ep in episodes:
            for step in ep.steps:
                self._checked_frames.pop(step.observation.sha256, None)

    # -- writing --------------------------------------------------------------------
    def write(self, episodes: Iterable[Episode], origin: str = "api", *, checked: bool = False) -> WriteReport:
        """Write one batch. ``checked=True`` skips ``check`` for episodes the caller already checked."""
        report = WriteReport()
        episodes = list(episodes)
        created, streamed = S.now(), None
        if not checked and "://" not in self.lake.uri:
            streamed = self._stream_frames(episodes, created)  # hashes, checks and writes new frames
        elif not checked:
            self.prepare(episodes)
        good: list[Episode] = []
        rejected: list[Rejected] = []
        seen: set[str] = set()
        for ep in episodes:
            try:
                if not checked:
                    self.check(ep)
            except InvalidRecord as exc:
                rejected.append(Rejected(str(exc), dumps(episode_to_dict(ep)).encode(), origin,
                                         episode_id=ep.episode_id))
                continue
            if ep.episode_id in seen:
                rejected.append(Rejected(f"duplicate episode_id {ep.episode_id!r} in one batch",
                                         dumps(episode_to_dict(ep)).encode(), origin, episode_id=ep.episode_id))
                continue
            seen.add(ep.episode_id)
            good.append(ep)
        if self._known_ids is None:
            self._known_ids = self.lake.column_values("episodes", "episode_id")
        report.skipped = sum(ep.episode_id in self._known_ids for ep in good)
        good = [ep for ep in good if ep.episode_id not in self._known_ids]
        if good:
            self._commit(good, report, created, streamed)
        elif streamed is not None:
            streamed.discard()
        self.forget(episodes)
        if rejected:
            self.quarantine(rejected)
            report.quarantined = len(rejected)
            report.reasons = [r.reason for r in rejected]
        return report

    def _commit(self, episodes: list[Episode], report: WriteReport, created=None,
                streamed: FrameFile | None = None) -> None:
        """Frames, then steps, then episodes: readers see an episode only once all of it is in."""
        batch_id = uuid.uuid4().hex
        created = created or S.now()
        if streamed is not None:
            self._commit_frame_file(streamed)
            report.new_frames = streamed.rows
        else:
            frames = self._new_frames(episodes, created)
            if frames is not None:
                self._append_frames(frames)
                report.new_frames = frames.num_rows
        steps = self._step_rows(episodes, batch_id)
        self._append("steps", steps, ROW_PROPS)
        self._append("episodes", self._episode_rows(episodes, batch_id, created), ROW_PROPS)
        self._known_ids.update(ep.episode_id for ep in episodes)
        report.written = len(episodes)
        report.steps = steps.num_rows

    def _table(self, name: str) -> DeltaTable:
        """This writer's handle on a table, kept between batches (loading the log costs
        ~3 ms). A stale handle is safe for appends: delta-rs retries the commit at the
        next free version when another writer got there first."""
        dt = self._tables.get(name)
        if dt is None:
            dt = self._tables[name] = DeltaTable(self.lake.table_uri(name), storage_options=self.lake.storage_options)
        return dt

    def _append(self, table: str, data: pa.Table, props: WriterProperties) -> None:
        write_deltalake(self._table(table), data, mode="append", writer_properties=props)
        self.lake.invalidate()
        if self.on_commit is not None:
            self.on_commit(table, data.num_rows)

    def _append_frames(self, data: pa.Table) -> None:
        uri = self.lake.table_uri("frames")
        if "://" in uri:
            self._append("frames", data, FRAME_PROPS)
            self._known_frames.update(data.column("sha256").to_pylist())
            return
        file = FrameFile(uri)
        file.append(data)
        self._commit_frame_file(file)

    def _commit_frame_file(self, file: FrameFile) -> None:
        action = file.close()
        if action is None:
            return
        self._table("frames").create_write_transaction([action], mode="append", schema=S.FRAMES)
        self.lake.invalidate()
        self._known_frames.update(file.shas)
        if self.on_commit is not None:
            self.on_commit("frames", file.rows)

    def _stream_frames(self, episodes: list[Episode], created) -> FrameFile:
        """Hash and check the frames of ``episodes`` in chunks on the pool while writing the
        new, valid ones of earlier chunks into one frames file (committed by ``_commit``, or
        discarded). Frames of episodes rejected later are harmless orphans (content-addressed)."""
        if self._known_frames is None:
            self._known_frames = self.lake.column_values("frames", "sha256")
        todo = list({id(s.observation): s.observation for ep in episodes for s in ep.steps}.values())
        chunks = [todo[i:i + FRAME_CHUNK] for i in range(0, len(todo), FRAME_CHUNK)]
        futures = [_pool().submit(self._check_frames, chunk) for chunk in chunks]
        file = FrameFile(self.lake.table_uri("frames"))
        written: set[str] = set()
        try:
            for chunk, future in zip(chunks, futures):
                future.result()
                new = {}
                for obs in chunk:
                    sha = obs.sha256
                    if sha not in self._known_frames and sha not in written and sha in self._checked_frames:
                        new[sha] = obs
                table = self._frames_table(new, created)
                if table is not None:
                    file.append(table)
                    written.update(new)
        except BaseException:
            for future in futures:
                future.cancel()
            file.discard()
            raise
        return file

    def _check_frames(self, chunk) -> None:
        for obs in chunk:
            try:
                self._frame_size(obs)
            except InvalidRecord:
                pass  # reported with its step number by check()

    def _new_frames(self, episodes: list[Episode], created) -> pa.Table | None:
        if self._known_frames is None:
            self._known_frames = self.lake.column_values("frames", "sha256")
        batch: dict[str, Observation] = {}
        for ep in episodes:
            for step in ep.steps:
                sha = step.observation.sha256
                if sha not in self._known_frames and sha not in batch:
                    batch[sha] = step.observation
        return self._frames_table(batch, created)

    def _frames_table(self, batch: dict[str, Observation], created) -> pa.Table | None:
        if not batch:
            return None
        shas = sorted(batch)  # sorted shas give selective row-group statistics
        sizes = [self._frame_size(batch[sha]) for sha in shas]
        return pa.table({
            "sha256": shas,
            "png": pa.array([batch[sha].screenshot for sha in shas], pa.binary()),
            "width": pa.array([w for w, _ in sizes], pa.int32()),
            "height": pa.array([h for _, h in sizes], pa.int32()),
            "nbytes": pa.array([len(batch[sha].screenshot) for sha in shas], pa.int64()),
            "created_at": pa.array([created] * len(shas), S.FRAMES.field("created_at").type),
        }, schema=S.FRAMES)

    @staticmethod
    def _step_rows(episodes: list[Episode], batch_id: str) -> pa.Table:
        rows = []
        for ep in episodes:
            for i, step in enumerate(ep.steps):
                obs, act = step.observation, step.action
                width, height = obs.size
                rows.append({
                    "episode_id": ep.episode_id, "batch_id": batch_id, "step_index": i,
                    "frame_sha": obs.sha256, "frame_width": width, "frame_height": height,
                    "ui_tree": obs.ui_tree, "package": obs.package, "activity": obs.activity,
                    "action_type": act.type, "action_json": act.to_json(), "action_version": ACTION_VERSION,
                    "x": None if act.x is None else float(act.x), "y": None if act.y is None else float(act.y),
                    "thought": step.thought, "raw_output": step.raw_output,
                    "meta_json": dumps(step.meta) if step.meta else None,
                    "pairing": _text_or_none(step.meta.get("pairing")),
                })
        return pa.Table.from_pylist(rows, schema=S.STEPS)

    @staticmethod
    def _episode_rows(episodes: list[Episode], batch_id: str, created) -> pa.Table:
        rows = []
        for seq, ep in enumerate(episodes):
            rows.append({
                "episode_id": ep.episode_id, "batch_id": batch_id, "batch_seq": seq,
                "instruction": ep.instruction, "source": ep.source, "app": ep.app,
                "category": ep.category, "task": ep.task, "phone": ep.device.kind,
                "device_width": ep.device.width, "device_height": ep.device.height,
                "device_json": dumps(ep.device.to_dict()), "outcome": ep.outcome,
                "verified_by": ep.verified_by, "policy": ep.policy, "round": ep.round,
                "num_steps": len(ep.steps), "meta_json": dumps(ep.meta) if ep.meta else None,
                "created_at": created, "purpose": ep.purpose, "failure_reason": ep.failure_reason,
                "score": ep.score, "perturbation": perturbation_name(ep.meta.get("perturbation")),
                "instance": ep.meta.get("instance") if isinstance(ep.meta.get("instance"), str) else None,
            })
        return pa.Table.from_pylist(rows, schema=S.EPISODES)

    # -- quarantine -----------------------------------------------------------------
    def quarantine(self, records: list[Rejected]) -> None:
        if not records:
            return
        created = S.now()
        table = pa.Table.from_pylist([{
            "quarantine_id": uuid.uuid4().hex, "origin": r.origin, "locator": r.locator,
            "episode_id": r.episode_id, "reason": r.reason, "payload": r.payload, "created_at": created,
        } for r in records], schema=S.QUARANTINE)
        self._append("quarantine", table, ROW_PROPS)
