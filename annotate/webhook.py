"""Label Studio webhook payloads -> one ``annotations`` row each.

The API does not call this while Label Studio waits: it stores the delivery in the
lake's webhook inbox and acknowledges (``annotate.inbox.receive``), and the background
ingest (``annotate.inbox.drain``) turns each delivery into its row with ``to_row``.

``ingest(lake, payload)`` accepts ``ANNOTATION_CREATED`` and ``ANNOTATION_UPDATED``
events; the conversion (which result items are read, percent -> device px, the row's
id) lives in ``annotate.convert`` and is shared with ``annotate.pull``, so the webhook
and a pull of the same annotation write one row. Label Studio sends ``completed_by`` as
a bare user id: the person is resolved through the lake's Label Studio users API
(``annotate.people.directory``), as ``pull`` does. A redelivered webhook writes nothing
new, and deliveries in any order give the same rows (each carries Label Studio's
``updated_at``, which orders them); anything invalid raises ``InvalidPayload`` and
writes nothing.
"""

from __future__ import annotations

from typing import Any

from annotate.convert import ACTIONS, to_row
from annotate.errors import InvalidPayload
from annotate.people import People, directory, warm

__all__ = ["ACTIONS", "InvalidPayload", "ingest", "to_row", "warm"]


def ingest(lake, payload: Any, people: People | None = None) -> dict[str, Any]:
    """Validate ``payload``, append its annotation row (unless already there) and return the row."""
    if people is None:
        annotation = payload.get("annotation") if isinstance(payload, dict) else None
        who = annotation.get("completed_by") if isinstance(annotation, dict) else None
        people = directory(lake.uri).people(who)
    row = to_row(lake, payload, people)
    if row["annotation_id"] not in lake.column_values("annotations", "annotation_id"):
        lake.append("annotations", [row])
    return row
