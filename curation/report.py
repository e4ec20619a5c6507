"""The curation report: one self-contained HTML file (plots and thumbnails inlined).

Shows episode lengths and action types of the result, episodes per app and source
after each op, rows in/out per op, near-duplicate examples as thumbnails, and
redaction and safety-tag counts. Thumbnails come from ``frame(sha)``, which gives the
exported (redacted) image or None for frames not in the result; those are not shown.
"""

from __future__ import annotations

import base64
import html
from collections import Counter
from io import BytesIO

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

from curation.workset import EpisodeRow  # noqa: E402


def _png_data_uri(fig) -> str:
    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _thumb(png: bytes, width: int = 120) -> str:
    img = Image.open(BytesIO(png)).convert("RGB")
    img.thumbnail((width, width * 3))
    buf = BytesIO()
    img.save(buf, "JPEG", quality=70)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()


def _bar(counter: dict, title: str):
    fig, ax = plt.subplots(figsize=(5, 2.6))
    keys = list(counter)
    ax.bar(keys, [counter[k] for k in keys], color="#1a73e8")
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=45, labelsize=7)
    return fig


def _per_op(ops_log: list[dict], key: str):
    fig, ax = plt.subplots(figsize=(6, 2.8))
    groups = sorted({g for entry in ops_log for g in entry["out"][key]})
    for g in groups:
        ax.plot([e["op"] for e in ops_log], [e["out"][key].get(g, 0) for e in ops_log], marker="o", label=g)
    ax.set_title(f"episodes per {key.removeprefix('by_')} after each op")
    ax.tick_params(axis="x", rotation=45, labelsize=7)
    if groups:
        ax.legend(fontsize=6)
    return fig


def render_report(ref: str, ws: list[EpisodeRow], ops_log: list[dict], details: dict, frame) -> str:
    lengths = [len(e.steps) for e in ws]
    actions = Counter(s.action.type for e in ws for s in e.steps if s.action is not None)
    fig, ax = plt.subplots(figsize=(5, 2.6))
    ax.hist(lengths, bins=min(30, max(1, len(set(lengths)))), color="#188038")
    ax.set_title("episode length (steps)")
    plots = [_png_data_uri(fig), _png_data_uri(_bar(dict(actions.most_common()), "action types")),
             _png_data_uri(_per_op(ops_log, "by_app")), _png_data_uri(_per_op(ops_log, "by_source"))]
    rows = "".join(
        f"<tr><td>{html.escape(e['op'])}</td><td>{e['line'] or ''}</td><td>{e['in']['episodes']}</td>"
        f"<td>{e['out']['episodes']}</td><td>{e['in']['steps']}</td><td>{e['out']['steps']}</td></tr>"
        for e in ops_log)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(ref)} curation report</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px}img.t{margin:2px;border:1px solid #999}</style></head><body>",
             f"<h1>{html.escape(ref)}</h1><h2>Rows in and out per op</h2><table>"
             "<tr><th>op</th><th>line</th><th>episodes in</th><th>episodes out</th><th>steps in</th>"
             f"<th>steps out</th></tr>{rows}</table><h2>Result</h2>",
             "".join(f"<img src='{p}'>" for p in plots)]
    clusters = (details.get("dedup_frames", {}).get("near_duplicate_clusters", [])
                + details.get("dedup_near", {}).get("near_duplicate_episodes", []))
    if clusters:
        parts.append("<h2>Near-duplicate examples</h2>")
        for cluster in clusters[:8]:
            shown = [png for png in (frame(sha) for sha in cluster[:6]) if png is not None]
            hidden = len(cluster[:6]) - len(shown)
            parts.append("<div>" + "".join(f"<img class='t' src='{_thumb(png)}'>" for png in shown)
                         + (f" +{hidden} dropped (not shown)" if hidden else "") + "</div>")
    for key, title in (("redact", "Redactions"), ("safety_tags", "Safety tags"), ("drop_bad_frames", "Bad frames")):
        info = details.get(key)
        if info:
            table = info.get("redactions") or info.get("safety_tags") or info.get("bad_frames") or {}
            cells = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{v}</td></tr>" for k, v in table.items())
            parts.append(f"<h2>{title}</h2><table>{cells or '<tr><td>none</td></tr>'}</table>")
    parts.append("</body></html>")
    return "".join(parts)
