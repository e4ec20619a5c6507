"""Label Studio webhook payloads -> one ``annotations`` row each.

``ingest(lake, payload)`` accepts ``ANNOTATION_CREATED`` and ``ANNOTATION_UPDATED``
events; the conversion (which result items are read, percent -> device px, the row's
id) lives in ``annotate.convert`` and is shared with ``annotate.pull``, so the webhook
and a pull of the same annotation write one row. A redelivered webhook writes nothing
new; anything invalid raises ``InvalidPayload`` and writes nothing.
"""

from __future__ import annotations

from typing import Any

from annotate.convert import ACTIONS, to_row
from annotate.errors import InvalidPayload

__all__ = ["ACTIONS", "InvalidPayload", "ingest", "to_row"]


def ingest(lake, payload: Any) -> dict[str, Any]:
    """Validate ``payload``, append its annotation row (unless already there) and return the row."""
    row = to_row(lake, payload)
    if row["annotation_id"] not in lake.column_values("annotations", "annotation_id"):
        lake.append("annotations", [row])
    return row
