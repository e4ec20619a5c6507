"""The side-by-side review: a reviewer's task shows every annotator's answer next to the others.

    push(lake, client, "fix-taps-review", preset="failed", kind="review")   # annotate.push

A review task is a step task (``annotate.tasks.step_tasks``) of a step that annotators have
answered, with:

- ``answers``: one entry per annotator (by e-mail, else Label Studio's user id): their
  corrected action in words, whether they said the recorded step was correct, their note;
  ``answers_html`` shows the same as a table (the interface's ``HyperText``), with the answer
  ``steps_resolved`` holds now (majority, tie, latest) and what it was resolved by: what a
  submit without a verdict keeps;
- one prediction per annotator (``model_version`` = ``annotator:<who>``): their answer drawn
  on the before frame (point, swipe, box) with their type, key, text and yes/no, so the
  reviewer starts from any annotator's answer, never from the recorded action alone;
- ``review: true``: every annotation in a review project is a review row
  (``annotate.convert``), and counts only with an explicit accept / fix / reject: a submit
  without one (the pre-filled form, untouched) is an ``accept`` of the annotators' answer.

Steps nobody has answered are left out (there is nothing to review).
"""

from __future__ import annotations

from html import escape

from annotate.tasks import Signer, in_words, prediction, step_tasks
from datalake.types import Action

PREFIX = "annotator:"  # a review task's prediction per annotator: model_version = PREFIX + who

_ANSWERS = """
    SELECT episode_id, step_index, coalesce(annotator_email, annotator) AS who, action_json, step_correct, note
    FROM annotations_current
    WHERE target = 'step' AND status = 'accepted' AND NOT coalesce(is_review, false)
      AND list_contains(?, episode_id)
    QUALIFY row_number() OVER (PARTITION BY episode_id, step_index, coalesce(annotator_email, annotator)
                               ORDER BY coalesce(ls_updated_at, created_at) DESC, annotation_id) = 1
    ORDER BY episode_id, step_index, who
"""
_RESOLVED = """
    SELECT episode_id, step_index, action_json, resolved_by FROM steps_resolved
    WHERE list_contains(?, episode_id) AND resolved_by IS NOT NULL
"""


def answers(lake, rows: list[dict]) -> dict[tuple, list[dict]]:
    """(episode_id, step_index) -> each annotator's current answer on that step (reviews left out)."""
    episodes = sorted({r["episode_id"] for r in rows})
    out: dict[tuple, list[dict]] = {}
    for a in lake.sql(_ANSWERS, [episodes]).to_pylist():
        out.setdefault((a["episode_id"], a["step_index"]), []).append(a)
    return out


def resolved(lake, rows: list[dict]) -> dict[tuple, dict]:
    episodes = sorted({r["episode_id"] for r in rows})
    return {(r["episode_id"], r["step_index"]): r for r in lake.sql(_RESOLVED, [episodes]).to_pylist()}


def review_tasks(lake, rows: list[dict], frames_url: str, sign: Signer | None = None) -> list[dict]:
    """One side-by-side review task per selected step that annotators answered (module docstring)."""
    given = answers(lake, rows)
    now = resolved(lake, rows)
    rows = [r for r in rows if (r["episode_id"], r["step_index"]) in given]
    tasks = step_tasks(rows, frames_url, sign)
    for row, task in zip(rows, tasks):
        key = (row["episode_id"], row["step_index"])
        recorded = Action.from_json(row["action_json"])
        entries = [_entry(a, recorded) for a in given[key]]
        data = task["data"]
        data["review"] = True
        data["answers"] = entries
        data["answers_html"] = _table(entries, now.get(key))
        task["predictions"] = [{"model_version": PREFIX + a["who"],
                                "result": _drawn(a, recorded, row["frame_width"], row["frame_height"])}
                               for a in given[key]]
    return tasks


def _entry(a: dict, recorded: Action) -> dict:
    action = Action.from_json(a["action_json"]) if a["action_json"] else None
    said = in_words(action) if action else "(kept the recorded action)"
    correct = {True: "yes", False: "no", None: "-"}[a["step_correct"]]
    return {"annotator": a["who"], "answer": said, "recorded_correct": correct, "note": a["note"] or "",
            "action_json": a["action_json"], "same_as_recorded": action is None or action == recorded}


def _table(entries: list[dict], now: dict | None) -> str:
    cells = "".join(f"<tr><td>{escape(e['annotator'])}</td><td>{escape(e['answer'])}</td>"
                    f"<td>{escape(e['recorded_correct'])}</td><td>{escape(e['note'])}</td></tr>" for e in entries)
    if now is None:
        current = "the recorded action"
    else:
        said = in_words(Action.from_json(now["action_json"])) if now.get("action_json") else "the recorded action"
        current = f"{said} ({now['resolved_by']})"
    return ("<table><tr><th>annotator</th><th>answer</th><th>recorded step correct?</th><th>note</th></tr>"
            f"{cells}</table><p>Counts now: {escape(current)}. A submit without a verdict keeps it.</p>")


def _drawn(a: dict, recorded: Action, width: int, height: int) -> list[dict]:
    """The annotator's answer as result items (no verdict: the reviewer chooses one)."""
    action = Action.from_json(a["action_json"]) if a["action_json"] else recorded
    items = prediction(action, width, height)
    if a["step_correct"] is not None:
        items.append({"id": "sc", "type": "choices", "from_name": "step_correct", "to_name": "image",
                      "value": {"choices": ["yes" if a["step_correct"] else "no"]}})
    return items


__all__ = ["PREFIX", "answers", "review_tasks"]
