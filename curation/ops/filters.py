"""Filters: drop episodes or steps that would teach the wrong thing."""

from __future__ import annotations

from io import BytesIO

import numpy as np
from PIL import Image

from curation.formats import ActionParseError, parse_action
from curation.ops.base import Context
from curation.workset import EpisodeRow

_GESTURES = ("tap", "double_tap", "long_press", "swipe", "scroll", "input_text", "key")


def filter_episodes(ws: list[EpisodeRow], ctx: Context, *, outcome: list[str] | None = None,
                    verified_by: list[str] | None = None, source: list[str] | None = None,
                    phone: list[str] | None = None, min_steps: int | None = None,
                    max_steps: int | None = None) -> list[EpisodeRow]:
    """Keep episodes whose outcome / verifier / source / phone are listed and whose step count is in range."""
    def keep(e: EpisodeRow) -> bool:
        return ((outcome is None or e.outcome in outcome)
                and (verified_by is None or e.verified_by in verified_by)
                and (source is None or e.source in source)
                and (phone is None or e.phone in phone)
                and (min_steps is None or len(e.steps) >= min_steps)
                and (max_steps is None or len(e.steps) <= max_steps))
    return [e for e in ws if keep(e)]


def drop_noop_steps(ws: list[EpisodeRow], ctx: Context) -> list[EpisodeRow]:
    """Drop gestures whose next frame is byte-identical to their own: they changed nothing."""
    out = []
    for e in ws:
        steps = [s for i, s in enumerate(e.steps)
                 if not (i + 1 < len(e.steps) and s.action is not None and s.action.type in _GESTURES
                         and e.steps[i + 1].frame_sha == s.frame_sha)]
        out.append(e.with_steps(steps))
    return [e for e in out if e.steps]


def drop_loops(ws: list[EpisodeRow], ctx: Context, *, max_visits: int = 3) -> list[EpisodeRow]:
    """Drop episodes that show the same screen more than ``max_visits`` times (stuck in a loop)."""
    def looping(e: EpisodeRow) -> bool:
        seen: dict[str, int] = {}
        for s in e.steps:
            seen[s.frame_sha] = seen.get(s.frame_sha, 0) + 1
        return max(seen.values(), default=0) > max_visits
    return [e for e in ws if not looping(e)]


def frame_is_bad(png: bytes, min_std: float) -> str | None:
    """'corrupt', 'blank' (nearly uniform, black included) or None."""
    try:
        img = Image.open(BytesIO(png))
        img.load()
    except (OSError, ValueError, SyntaxError):
        return "corrupt"
    small = np.asarray(img.convert("L").reduce(4), dtype=np.float32)
    return "blank" if float(small.std()) < min_std else None


def drop_bad_frames(ws: list[EpisodeRow], ctx: Context, *, min_std: float = 2.0) -> list[EpisodeRow]:
    """Drop steps whose screenshot is corrupt, blank or black (checked once per frame)."""
    verdict: dict[str, str | None] = {}
    shas = sorted({s.frame_sha for e in ws for s in e.steps})
    for i, sha in enumerate(shas):
        verdict[sha] = frame_is_bad(ctx.frame(sha), min_std)
        if ctx.progress:
            ctx.progress("checking frames", i + 1, len(shas))
    ctx.details["bad_frames"] = {k: sum(v == k for v in verdict.values()) for k in ("corrupt", "blank")}
    out = [e.with_steps([s for s in e.steps if verdict[s.frame_sha] is None]) for e in ws]
    return [e for e in out if e.steps]


def drop_out_of_bounds(ws: list[EpisodeRow], ctx: Context) -> list[EpisodeRow]:
    """Drop steps whose (possibly corrected) action touches a point outside its screenshot."""
    def inside(s) -> bool:
        if s.action is None:
            return True  # unparseable is another filter's business
        return all(0 <= x < s.width and 0 <= y < s.height for x, y in s.action.points())
    out = [e.with_steps([s for s in e.steps if inside(s)]) for e in ws]
    return [e for e in out if e.steps]


def drop_unparseable(ws: list[EpisodeRow], ctx: Context, *, style: str | None = None,
                     convention: str = "abs") -> list[EpisodeRow]:
    """Drop steps whose action does not validate, or whose model output (``raw_output``)
    does not parse in ``style`` (json | qwen3vl) when a style is given."""
    def ok(s) -> bool:
        if s.action is None:
            return False
        if style and s.raw_output is not None:
            try:
                parse_action(s.raw_output, style, convention, (s.width, s.height))
            except ActionParseError:
                return False
        return True
    out = [e.with_steps([s for s in e.steps if ok(s)]) for e in ws]
    return [e for e in out if e.steps]
