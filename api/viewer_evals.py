"""Evaluation pages: the list, one evaluation (table, chart, per-task results), a compare view.

The numbers are the ``evals`` table's (api/evals.py documents the JSON shape); the chart
is an SVG drawn here from the same cells: one bar per policy and group, with its interval.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse

from api import evals
from api.viewer import templates

router = APIRouter(include_in_schema=False)
COLOURS = ("#2f6fdf", "#e5484d", "#30a46c", "#f5a524", "#8e4ec6", "#12a594")
Text = Annotated[str, Query(min_length=1, max_length=500)]
EvalId = Annotated[str, PathParam(min_length=1, max_length=200)]  # as the JSON route: no long echo


@router.get("/evals", response_class=HTMLResponse)
def evals_page(request: Request) -> HTMLResponse:
    """Every evaluation, and a form comparing any two (evaluation, policy) on the seeds both ran."""
    rows = evals.list_evals(request.app.state.browser.sql)
    policies = sorted({p["policy"] for ev in rows for p in ev["policies"]})
    return templates.TemplateResponse(request, "evals.html", {"evals": rows, "policies": policies})


@router.get("/evals/compare", response_class=HTMLResponse)
def compare_page(request: Request, left: Text, left_policy: Text, right: Text, right_policy: Text,
                 task: Annotated[str | None, Query(max_length=500)] = None,
                 seed: Annotated[str | None, Query(max_length=100)] = None) -> HTMLResponse:
    """Which tasks each policy solved on the shared seeds; with task+seed, both episodes side by side."""
    result = evals.compare(request.app.state.browser.sql, (left, left_policy), (right, right_policy))
    chosen = None
    if task is not None and seed is not None:
        chosen = next((p for p in result["pairs"] if p["task"] == task and str(p["seed"]) == seed), None)
    return templates.TemplateResponse(request, "compare.html", {"c": result, "chosen": chosen})


@router.get("/evals/{eval_id}", response_class=HTMLResponse)
def eval_page(request: Request, eval_id: EvalId) -> HTMLResponse:
    detail = evals.eval_detail(request.app.state.browser.sql, eval_id)
    colours = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(detail["policies"])}
    return templates.TemplateResponse(request, "eval.html", {
        "ev": detail, "colours": colours, "chart": chart(detail["table"], detail["policies"], colours)})


def chart(table: list[dict[str, Any]], policies: list[str], colours: dict[str, str]) -> dict[str, Any]:
    """Bars (x, y, w, h in a 0..1000 x 0..300 box) with interval whiskers, one group per table row."""
    rows = [r for r in table if any(c and c.get("rate") is not None for c in r["cells"].values())]
    width, height, top, left_axis = 1000, 300, 20, 40
    slot = (width - left_axis) / max(1, len(rows))
    bar = min(40.0, slot * 0.8 / max(1, len(policies)))
    bars, labels = [], []
    for i, row in enumerate(rows):
        left = left_axis + i * slot + (slot - bar * len(policies)) / 2
        labels.append({"x": left_axis + i * slot + slot / 2, "text": f"{row['by']}: {row['group']}"[:28]})
        for j, p in enumerate(policies):
            cell = row["cells"].get(p)
            if not cell or cell.get("rate") is None:
                continue
            y = lambda v: top + (1 - v) * (height - top)  # noqa: E731
            bars.append({"x": left + j * bar, "y": y(cell["rate"]), "w": bar * 0.9, "h": height - y(cell["rate"]),
                         "cx": left + j * bar + bar * 0.45, "lo": y(cell.get("low", cell["rate"])),
                         "hi": y(cell.get("high", cell["rate"])), "colour": colours[p],
                         "title": f"{p} · {row['group']}: {cell['successes']}/{cell['n']}"})
    grid = [{"y": top + (1 - v) * (height - top), "label": f"{100 * v:.0f}%"} for v in (0, 0.5, 1)]
    return {"width": width, "height": height, "bars": bars, "labels": labels, "grid": grid}
