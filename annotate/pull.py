"""Label Studio annotations -> ``annotations`` rows (raw steps are never touched).

    report = pull(lake, client, "fix-taps")

Reads the project's JSON export through the SDK (annotated tasks with their
annotations), turns every submitted annotation into a row with
``annotate.convert.to_row`` (the webhook's conversion: percent -> device px, the person
resolved through the users API as the webhook does, ``origin`` =
``label-studio:<project>/<task>/<annotation>``), and appends the new rows in one
commit. Row ids come from the origin, the content and Label Studio's ``updated_at``, so
pulling twice, or after the webhook delivered the same annotation, adds nothing.
``steps_resolved`` and ``episodes_resolved`` then apply the resolution rule.

A pull also reconciles (``annotate.reconcile``): an edited annotation's current version
is written (the newest version counts), one deleted in Label Studio is retracted (a row
with status ``retracted``), and a row stored under a bare user id (the users could not be
listed when it arrived) is written again with its person (``replaces`` names the old
row). When the users cannot be listed the report carries a warning naming the cause.

An annotation that cannot become a row (a corrupt or foreign result item, a task whose
episode is not in the lake) goes to the lake's quarantine with the reason and the raw
annotation, once per annotation content: on the next pull it counts as
``already_quarantined``, not as a new failure.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from annotate import reconcile
from annotate.client import LabelStudio
from annotate.convert import IDENTITY, origin, to_row
from annotate.errors import InvalidPayload
from annotate.people import People
from datalake.writer import Rejected

QUARANTINE_ORIGIN = "label-studio:pull"


@dataclass
class PullReport:
    project_id: int
    project: str
    annotations: int = 0  # submitted annotations seen
    written: int = 0
    skipped: int = 0  # already in the lake
    cancelled: int = 0  # skipped tasks in Label Studio
    quarantined: int = 0  # new failures, sent to the quarantine now
    already_quarantined: int = 0  # failed before, already in the quarantine
    healed: int = 0  # rows stored under a bare user id, written again with their person
    retracted: int = 0  # annotations deleted in Label Studio since they were stored
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. the users could not be listed


def pull(lake, client: LabelStudio, project: str) -> PullReport:
    proj = client.project(project)
    report = PullReport(project_id=proj["id"], project=project)
    people = People.load(client, lake.uri)
    if people.warning:
        report.warnings.append(people.warning)
    known = lake.column_values("annotations", "annotation_id")
    stored = _stored_versions(lake, proj["id"])
    current: set[str] = set()
    seen_bad = set(lake.sql("SELECT locator FROM quarantine WHERE origin = ?", [QUARANTINE_ORIGIN]).column(0)
                   .to_pylist())
    rows, rejected = [], []
    for task in client.export(proj["id"]):
        for ann in task.get("annotations") or []:
            if ann.get("was_cancelled"):
                report.cancelled += 1
                continue
            report.annotations += 1
            event = _event(proj["id"], task, ann)
            try:
                row = to_row(lake, event, people)
            except InvalidPayload as exc:
                raw = json.dumps(event, sort_keys=True, default=str).encode()
                locator = f"{origin(proj['id'], task.get('id'), ann.get('id'))}#{hashlib.sha256(raw).hexdigest()[:16]}"
                if locator in seen_bad:
                    report.already_quarantined += 1
                else:
                    report.quarantined += 1
                    report.reasons.append(f"{locator}: {exc}")
                    seen_bad.add(locator)
                    rejected.append(Rejected(reason=str(exc), payload=raw, origin=QUARANTINE_ORIGIN, locator=locator,
                                             episode_id=_episode_id(task)))
                continue
            current.add(row["origin"])
            prior = stored.get((row["origin"], row["ls_updated_at"]))
            if row["annotation_id"] in known or (prior is not None and not _better(row, prior, people)):
                report.skipped += 1  # already there (or stored with a person this listing cannot improve)
                continue
            if prior is not None:  # the same saved version, stored under a bare id: heal it
                row["replaces"] = prior["annotation_id"]
                report.healed += 1
            known.add(row["annotation_id"])
            rows.append(row)
    if rows:
        lake.append("annotations", rows)
    lake.quarantine(rejected)
    report.written = len(rows) - report.healed
    report.retracted = reconcile.retract(lake, proj["id"], current)
    report.healed += reconcile.heal(lake, people)  # other bare rows (webhook deliveries, other projects)
    return report


def _stored_versions(lake, project_id: int) -> dict[tuple, dict]:
    """(origin, updated_at) -> the counting row of each stored version of the project's annotations."""
    rows = lake.sql("""
        SELECT * FROM annotations
        WHERE origin LIKE ? AND coalesce(status, '') <> 'retracted'
          AND annotation_id NOT IN (SELECT replaces FROM annotations WHERE replaces IS NOT NULL)
    """, [f"label-studio:{project_id}/%"]).to_pylist()
    return {(r["origin"], r["ls_updated_at"]): r for r in rows}


def _better(row: dict, prior: dict, people: People) -> bool:
    """Whether ``row`` knows the person better than the stored ``prior`` of the same version."""
    if not people.listed or all(row[k] == prior[k] for k in IDENTITY):
        return False
    return row["annotator_email"] is not None


def _event(project_id: int, task: dict, ann: dict) -> dict:
    updated = ann.get("updated_at") and ann.get("updated_at") != ann.get("created_at")
    keep = ("id", "completed_by", "result", "created_at", "updated_at", "lead_time")
    return {"action": "ANNOTATION_UPDATED" if updated else "ANNOTATION_CREATED", "project": {"id": project_id},
            "task": {"id": task.get("id"), "data": task.get("data")},
            "annotation": {k: ann.get(k) for k in keep}}


def _episode_id(task: dict) -> str | None:
    data = task.get("data")
    value = data.get("episode_id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
