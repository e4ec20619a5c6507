"""Keep the lake's annotations in step with Label Studio: healed identities, retractions.

    heal(lake, people)                         # rows stored under a bare user id get their person
    retract(lake, stored_rows, current_origins)  # annotations deleted in Label Studio stop counting

Raw rows are never changed: a repair is a new row that ``replaces`` the old one, and a
deletion is a row with status ``retracted`` that names the annotation's newest row; the
view ``annotations_current`` (``datalake.query``) leaves both the replaced row and every
version of a retracted annotation out, so ``steps_resolved`` and ``episodes_resolved``
follow.

- **Healing.** When Label Studio's users cannot be listed (a stale token, another host),
  a row keeps the bare user id (``annotator`` = the id, no email, never a review). Once
  the users list again (a pull, the webhook's next listing, ``annotate users list``), each
  such row that still counts gets a healed copy: the email, the role from the team file
  (a reviewer's row becomes a review row with the verdict it chose, ``accept`` when it
  chose none: an accept keeps no answer).
- **Retraction.** ``annotate.pull`` compares the project's export with what the lake
  holds for that project: an annotation the lake counts that Label Studio no longer has
  is retracted.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

from annotate.convert import annotation_id
from annotate.people import People
from datalake import schema as S

_LIVE = """
    SELECT * FROM annotations_current
    WHERE coalesce(origin, '') LIKE 'label-studio:%' AND annotator_email IS NULL AND annotator_id IS NOT NULL
"""


def heal(lake, people: People) -> int:
    """Write a healed copy of every counting row stored under a bare user id that ``people``
    now knows; returns how many. Nothing is written when the users could not be listed."""
    if not people.listed or not people.users:
        return 0
    healed = []
    for row in lake.sql(_LIVE).to_pylist():
        uid = int(row["annotator_id"]) if str(row["annotator_id"]).isdigit() else None
        if uid not in people.users:
            continue
        email = people.users[uid].get("email")
        if not email:
            continue
        new = {**row, "annotator": email, "annotator_email": email, "replaces": row["annotation_id"],
               "created_at": S.now()}
        if people.role(email) == "reviewer":
            new["is_review"] = True
            new["review_verdict"] = row["review_verdict"] or "accept"
            if new["review_verdict"] == "accept":  # an accept keeps no answer of its own
                new.update(action_json=None, step_correct=None, outcome=None)
        new["annotation_id"] = annotation_id(new)
        healed.append(new)
    if healed:
        lake.append("annotations", healed)
    return len(healed)


def retract(lake, project_id: int, current: set[str]) -> int:
    """Retract every annotation of the project the lake counts whose origin Label Studio no
    longer lists (``current``: the origins of the project's annotations now); returns how many."""
    live = lake.sql("SELECT * FROM annotations_current WHERE origin LIKE ?",
                    [f"label-studio:{project_id}/%"]).to_pylist()
    rows = [retraction(row) for row in live if row["origin"] not in current]
    if rows:
        lake.append("annotations", rows)
    return len(rows)


def retraction(row: dict[str, Any]) -> dict[str, Any]:
    """The row that retracts an annotation (its newest row ``row``): same target, person and origin."""
    digest = hashlib.sha256(f"retracted:{row['origin']}:{row['annotation_id']}".encode()).digest()
    keep = ("target", "episode_id", "step_index", "annotator", "annotator_id", "annotator_email", "origin",
            "ls_project_id", "ls_task_id", "ls_annotation_id", "is_review")
    return {**{k: row[k] for k in keep}, "annotation_id": str(uuid.UUID(bytes=digest[:16], version=5)),
            "status": "retracted", "replaces": row["annotation_id"], "created_at": S.now(),
            "note": "deleted in Label Studio: no longer in the project's annotations"}
