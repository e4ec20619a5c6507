"""The dataset card: README.md with YAML metadata (configs per export), counts, lineage, recipe.

Deterministic: no timestamps, so rebuilding a version gives the same card apart from its name."""

from __future__ import annotations

import json
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
              "## Recipe", "", "```yaml", recipe.text.rstrip(), "```", ""]
    return "\n".join(lines)
