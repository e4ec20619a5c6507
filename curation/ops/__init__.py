"""The op registry: every op a recipe can name, with its parameters read from its signature.

An op is ``fn(ws, ctx, *, param=default, ...) -> ws``; its docstring is its help and
its keyword-only parameters (with type hints) are what a recipe may set.
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable

from curation.ops.balance import balance, mix
from curation.ops.dedup import dedup_exact, dedup_frames, dedup_near
from curation.ops.filters import (
    drop_bad_frames, drop_loops, drop_noop_steps, drop_out_of_bounds, drop_unparseable, filter_episodes,
)
from curation.ops.pairing import drop_flagged_steps
from curation.ops.redact import redact
from curation.ops.safety import safety_tags


@dataclass(frozen=True)
class OpDef:
    name: str
    fn: Callable
    params: dict[str, tuple[Any, Any]]  # name -> (type hint, default)

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.fn) or ""

    def check(self, params: dict[str, Any]) -> list[tuple[str, str]]:
        """Problems with ``params`` (unknown names, wrong types) as (field, message) pairs."""
        problems = []
        for key, value in params.items():
            if key not in self.params:
                known = ", ".join(self.params) or "none"
                problems.append((key, f"op {self.name!r} has no parameter {key!r} (parameters: {known})"))
            elif not _fits(value, self.params[key][0]):
                problems.append((key, f"op {self.name!r}: {key} = {value!r} is not {_describe(self.params[key][0])}"))
        return problems


def _fits(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _describe(hint: Any) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false", type(None): "null"}
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_describe(h) for h in typing.get_args(hint))
    if typing.get_origin(hint) is list:
        return f"a list of {_describe(typing.get_args(hint)[0]).removeprefix('a ').removeprefix('an ')}s"
    return names.get(hint, str(hint))


def _opdef(name: str, fn: Callable) -> OpDef:
    hints = typing.get_type_hints(fn)
    params = {p.name: (hints[p.name], p.default) for p in inspect.signature(fn).parameters.values()
              if p.kind is inspect.Parameter.KEYWORD_ONLY}
    return OpDef(name, fn, params)


OPS: dict[str, OpDef] = {name: _opdef(name, fn) for name, fn in sorted({
    "filter": filter_episodes,
    "drop_noop_steps": drop_noop_steps,
    "drop_loops": drop_loops,
    "drop_bad_frames": drop_bad_frames,
    "drop_out_of_bounds": drop_out_of_bounds,
    "drop_unparseable": drop_unparseable,
    "drop_flagged_steps": drop_flagged_steps,
    "dedup_exact": dedup_exact,
    "dedup_near": dedup_near,
    "dedup_frames": dedup_frames,
    "redact": redact,
    "safety_tags": safety_tags,
    "balance": balance,
    "mix": mix,
}.items())}
