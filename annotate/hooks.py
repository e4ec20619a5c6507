"""Register the phoneloop API's webhook on a Label Studio project (idempotent).

    register(client, "fix-taps", "http://127.0.0.1:8765", secret)

Label Studio then POSTs every ``ANNOTATION_CREATED``/``ANNOTATION_UPDATED``/
``ANNOTATIONS_DELETED`` event to ``<api_url>/webhooks/label-studio`` with
``X-Webhook-Secret: <secret>``; the API stores it in the lake's webhook inbox, answers at
once and writes the annotation row moments later (``annotate.inbox``); a later ``pull``
of the same annotation adds nothing. Delivery is synchronous with a 1 s timeout in
Label Studio, and a local Label Studio must allow private addresses (``annotate.server``
does).
"""

from __future__ import annotations

from annotate.client import LabelStudio

ROUTE = "/webhooks/label-studio"
SECRET_HEADER = "X-Webhook-Secret"


def register(client: LabelStudio, project: str, api_url: str, secret: str) -> dict:
    """The project's webhook to ``api_url`` (created once; an existing one is returned)."""
    proj = client.project(project)
    url = api_url.rstrip("/") + ROUTE
    for hook in client.webhooks(proj["id"]):
        if hook.get("url") == url and hook.get("project") == proj["id"]:
            return hook
    return client.create_webhook(proj["id"], url, headers={SECRET_HEADER: secret})
