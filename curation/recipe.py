"""Recipes: a YAML file that says how to turn the lake into a dataset version.

    name: default                      # dataset name; versions are name@v1, name@v2, ...
    description: successful real + mock episodes
    select: |                          # SQL over the lake's views; must return episode_id
      SELECT episode_id FROM episodes_resolved WHERE outcome = 'success'
    include_eval: false                # episodes recorded by `phoneloop eval` are left out unless true
    verified_by: [human, verifier]     # optional: keep episodes whose (resolved) verdict came from these
    exclude: [human_rejected]          # optional: drop episodes a person judged a failure
    ops:                               # applied in order; see `phoneloop curate --list-ops`
      - op: filter
        min_steps: 2
      - op: dedup_exact
    split: {by: task, seed: 0, fractions: {train: 0.8, val: 0.1, test: 0.1}}
    exports:
      - {format: sft, coords: rel1000, action_format: qwen3vl, history: 4}
      - {format: grpo}
      - {format: episodes}

Every problem is reported with the line it is on.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from curation.coords import CONVENTIONS, check_convention  # noqa: F401
from curation.errors import RecipeError
from curation.formats import STYLES
from curation.ops import OPS

EXPORT_FORMATS = ("sft", "grpo", "episodes")
EXPORT_PARAMS: dict[str, dict[str, Any]] = {
    "sft": {"coords": "rel1000", "action_format": "qwen3vl", "history": 4, "previous_screenshot": False,
            "thought": False, "elements": False},
    "grpo": {"coords": "rel1000", "action_format": "qwen3vl", "history": 4, "elements": False},
    "episodes": {},
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_TOP = {"name", "description", "select", "include_eval", "verified_by", "exclude", "ops", "split", "exports"}
VERIFIED_BY = ("verifier", "human", "judge", "none")  # episodes_resolved.verified_by after human judgement
EXCLUDES = {"human_rejected": "human_rejected"}  # name -> boolean column of episodes_resolved


@dataclass(frozen=True)
class Step:
    name: str
    params: dict[str, Any]
    line: int


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    select: str
    ops: tuple[Step, ...]
    split: dict[str, Any]
    exports: tuple[Step, ...]
    text: str
    source: str = "recipe"
    include_eval: bool = False
    verified_by: tuple[str, ...] = ()  # empty: any
    exclude: tuple[str, ...] = ()

    def canonical(self) -> dict[str, Any]:
        """Everything that decides the output, as plain data (no line numbers, no comments)."""
        extra = {**({"include_eval": True} if self.include_eval else {}),
                 **({"verified_by": list(self.verified_by)} if self.verified_by else {}),
                 **({"exclude": list(self.exclude)} if self.exclude else {})}
        return {"name": self.name, "select": self.select.strip(), **extra,
                "ops": [{"op": s.name, **s.params} for s in self.ops], "split": self.split,
                "exports": [{"format": s.name, **s.params} for s in self.exports]}

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.canonical(), sort_keys=True).encode()).hexdigest()


def load_recipe(path: str | Path) -> Recipe:
    path = Path(path)
    if not path.is_file():
        raise RecipeError(f"no recipe file {path}", source=str(path))
    return parse_recipe(path.read_text(encoding="utf-8"), source=str(path))


def parse_recipe(text: str, source: str = "recipe") -> Recipe:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RecipeError(f"not valid YAML: {getattr(exc, 'problem', exc)}",
                          line=mark.line + 1 if mark else None, source=source) from None
    if not isinstance(data, dict):
        raise RecipeError("a recipe must be a mapping with name, select, ops, split and exports", source=source)
    lines = _key_lines(node)

    def fail(message: str, *path) -> None:
        raise RecipeError(message, line=lines.get(path) or lines.get(path[:1]), source=source)

    for key in data:
        if key not in _TOP:
            fail(f"unknown field {key!r} (fields: {', '.join(sorted(_TOP))})", key)
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        fail("name must be lowercase letters, digits, '.', '_' or '-' (at most 64)", "name")
    select = data.get("select")
    if isinstance(select, dict):
        select = select.get("sql")
    if not isinstance(select, str) or not select.strip():
        fail("select must be a SQL query returning episode_id", "select")
    include_eval = data.get("include_eval", False)
    if not isinstance(include_eval, bool):
        fail("include_eval must be true or false", "include_eval")
    verified_by = _names(data.get("verified_by"), VERIFIED_BY, "verified_by", fail)
    exclude = _names(data.get("exclude"), tuple(EXCLUDES), "exclude", fail)
    ops = tuple(_op(i, item, lines, fail) for i, item in enumerate(data.get("ops") or []))
    split = _split(data.get("split") or {}, fail)
    exports = tuple(_export(i, item, lines, fail) for i, item in enumerate(data.get("exports") or []))
    if not exports:
        fail("a recipe needs at least one export (sft, grpo or episodes)", "exports")
    return Recipe(name=name, description=str(data.get("description") or ""), select=select, ops=ops,
                  split=split, exports=exports, text=text, source=source, include_eval=include_eval,
                  verified_by=verified_by, exclude=exclude)


def _names(value: Any, valid: tuple[str, ...], key: str, fail) -> tuple[str, ...]:
    """A name or a list of names, each one of ``valid``."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        fail(f"{key} must be a name or a list of names ({', '.join(valid)})", key)
    for v in items:
        if v not in valid:
            fail(f"{key}: unknown {v!r} (valid: {', '.join(valid)})", key)
    return tuple(items)


def _op(i: int, item: Any, lines: dict, fail) -> Step:
    if not isinstance(item, dict) or "op" not in item:
        fail(f"ops[{i}] must be a mapping with an 'op' field", "ops", i)
    params = {k: v for k, v in item.items() if k != "op"}
    opdef = OPS.get(item["op"])
    if opdef is None:
        fail(f"unknown op {item['op']!r} (ops: {', '.join(OPS)})", "ops", i, "op")
    for key, problem in opdef.check(params):
        fail(problem, "ops", i, key)
    return Step(item["op"], params, lines.get(("ops", i, "op"), 0))


def _export(i: int, item: Any, lines: dict, fail) -> Step:
    if not isinstance(item, dict) or item.get("format") not in EXPORT_FORMATS:
        fail(f"exports[{i}] needs format: one of {', '.join(EXPORT_FORMATS)}", "exports", i)
    fmt = item["format"]
    allowed = EXPORT_PARAMS[fmt]
    params = dict(allowed)
    for key, value in item.items():
        if key == "format":
            continue
        if key not in allowed:
            fail(f"export {fmt!r} has no option {key!r} (options: {', '.join(allowed) or 'none'})", "exports", i, key)
        if type(value) is not type(allowed[key]):
            fail(f"export {fmt!r}: {key} must be a {type(allowed[key]).__name__}", "exports", i, key)
        params[key] = value
    if "coords" in params and not _known_convention(params["coords"]):
        fail(f"coords must be one of {', '.join(CONVENTIONS)}", "exports", i, "coords")
    if "action_format" in params and params["action_format"] not in STYLES:
        fail(f"action_format must be one of {', '.join(STYLES)}", "exports", i, "action_format")
    if params.get("history", 0) < 0:
        fail("history must not be negative", "exports", i, "history")
    return Step(fmt, params, lines.get(("exports", i, "format"), 0))


def _split(split: Any, fail) -> dict[str, Any]:
    if not isinstance(split, dict):
        fail("split must be a mapping (by, seed, fractions)", "split")
    unknown = set(split) - {"by", "seed", "fractions"}
    if unknown:
        fail(f"unknown split field(s): {', '.join(sorted(unknown))}", "split")
    by = split.get("by", "task")
    if by not in ("task", "app", "episode"):
        fail("split.by must be task, app or episode", "split", "by")
    seed = split.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        fail("split.seed must be an integer", "split", "seed")
    fractions = split.get("fractions", {"train": 0.8, "val": 0.1, "test": 0.1})
    if (not isinstance(fractions, dict) or not fractions
            or not all(isinstance(v, (int, float)) and v > 0 for v in fractions.values())
            or not all(isinstance(k, str) and _NAME.match(k) for k in fractions)):
        fail("split.fractions must map split names to positive numbers", "split", "fractions")
    return {"by": by, "seed": seed, "fractions": fractions}


def _key_lines(node, path: tuple = ()) -> dict[tuple, int]:
    """(path of keys / list indexes) -> 1-based line, from the YAML node tree."""
    out: dict[tuple, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            p = path + (key.value,)
            out[p] = key.start_mark.line + 1
            out.update(_key_lines(value, p))
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            out[path + (i,)] = value.start_mark.line + 1
            out.update(_key_lines(value, path + (i,)))
    return out


def _known_convention(convention) -> bool:
    try:
        return bool(check_convention(str(convention)))
    except ValueError:
        return False
