"""The dataset card: README.md with YAML metadata (configs per export), counts, lineage, recipe.

Deterministic: no timestamps, so rebuilding a version gives the same card apart from its name.
The recipe is shown with its SQL's literals replaced by ``?`` (a ``WHERE instruction LIKE
'%Priya%'`` would publish what it names)."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml


def render_card(ref: str, recipe, fingerprint: str, table_versions: dict, counts: dict, exports: dict,
                parents: list[str], ops_log: list[dict]) -> str:
    configs = []
    for fmt, splits in sorted(exports.items()):
        configs.append({"config_name": fmt,
                        "data_files": [{"split": split, "path": f"{fmt}/{split}-*.parquet"} for split in sorted(splits)]})
    meta: dict[str, Any] = {"configs": configs, "tags": ["phone-use", "gui-agent", "android", "phoneloop"],
                            "task_categories": ["image-text-to-text"], "pretty_name": ref}
    lines = ["---", yaml.safe_dump(meta, sort_keys=False).rstrip(), "---", "", f"# {ref}", ""]
    if recipe.description:
        lines += [recipe.description, ""]
    lines += ["Built by phoneloop from a lake of phone-use trajectories.", "",
              "## Counts", "", "| | episodes | steps |", "|---|---|---|"]
    for split, n in sorted(counts.get("splits", {}).items()):
        lines.append(f"| {split} | {n['episodes']} | {n['steps']} |")
    lines += ["", "| export | split | rows | files |", "|---|---|---|---|"]
    for fmt, splits in sorted(exports.items()):
        for split, info in sorted(splits.items()):
            lines.append(f"| {fmt} | {split} | {info['rows']} | {len(info['files'])} |")
    lines += ["", "## Curation steps", "", "| op | episodes in | episodes out | steps in | steps out |",
              "|---|---|---|---|---|"]
    for entry in ops_log:
        lines.append(f"| {entry['op']} | {entry['in']['episodes']} | {entry['out']['episodes']} | "
                     f"{entry['in']['steps']} | {entry['out']['steps']} |")
    lines += ["", "## Lineage", "", f"- fingerprint: `{fingerprint}`",
              f"- parents: {', '.join(parents) if parents else 'none'}",
              f"- lake table versions read: `{json.dumps(table_versions, sort_keys=True)}`", "",
              "## Recipe", "", "SQL literals are shown as `?`.", "", "```yaml", public_recipe(recipe.text).rstrip(),
              "```", ""]
    return "\n".join(lines)


_LITERAL = re.compile(r"(?:[EeXx]|[Uu]&)?'(?:[^']|'')*'|\$\$.*?\$\$|(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])",
                      re.S)


def mask_sql(sql: str) -> str:
    """``sql`` with every string and number literal replaced by ``?``; identifiers
    (double-quoted too) and keywords stay."""
    out, pos = [], 0
    for m in re.finditer(r'"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/', sql, re.S):  # quoted names and comments
        out.append(_LITERAL.sub("?", sql[pos:m.start()]))
        out.append(m.group() if m.group().startswith('"') else "")
        pos = m.end()
    out.append(_LITERAL.sub("?", sql[pos:]))
    return "".join(out)


def public_recipe(text: str) -> str:
    """The recipe YAML as published (the card's recipe section, and ``recipe.yaml`` in the
    version folder): its ``select`` SQL masked, each ``names`` entry of a ``redact`` op (the
    people it must hide) replaced by ``?``, and comments dropped (they may quote either).
    The lake's ``datasets`` row keeps the full text: rebuilds read that, never the file."""
    data = yaml.safe_load(text) or {}
    if isinstance(data, dict) and isinstance(data.get("select"), str):
        data["select"] = mask_sql(data["select"])
    ops = data.get("ops") if isinstance(data, dict) else None
    for op in ops if isinstance(ops, list) else ():
        if isinstance(op, dict) and op.get("op") == "redact" and isinstance(op.get("names"), list):
            op["names"] = ["?"] * len(op["names"])
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=120)


class _BlockDumper(yaml.SafeDumper):
    """Multi-line strings (the SQL) as ``|`` blocks, as people write them."""


def _str(dumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_BlockDumper.add_representer(str, _str)
