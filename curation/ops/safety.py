"""Safety tagging: mark episodes that touch money, delete things or message new people.

Heuristics over the app, the instruction, typed text and the UI text the agent tapped:
- ``payment``: payment/bank/shop apps at checkout, or words like pay, transfer, checkout;
- ``deletion``: delete, remove, erase, clear all, uninstall;
- ``new_recipient``: sending (send/share/email/message) to a phone number or email typed
  in the episode rather than picked from contacts.
Tags go into every export row; ``drop`` removes episodes carrying any listed tag. They
are computed on the episode as recorded (``unredacted``) whether ``redact`` ran before
or after, so op order does not change them.
"""

from __future__ import annotations

import re

from curation.ops.base import Context
from curation.pii import find_pii
from curation.workset import EpisodeRow

TAGS = ("payment", "deletion", "new_recipient")
_PAY = re.compile(r"\b(pay|payment|transfer|checkout|check out|place order|buy|purchase|send money)\b", re.I)
_DELETE = re.compile(r"\b(delete|remove|erase|clear all|uninstall|wipe)\b", re.I)
_SEND = re.compile(r"\b(send|share|email|message|text)\b", re.I)
_PAY_APPS = {"bank", "payments", "pay", "wallet"}


def tags_for(e: EpisodeRow) -> list[str]:
    e = e.unredacted or e
    typed = " ".join(s.action.text or "" for s in e.steps if s.action is not None and s.action.type == "input_text")
    tapped = " ".join((s.action.element.text or "") for s in e.steps
                      if s.action is not None and s.action.element is not None)
    words = f"{e.instruction} {tapped}"
    tags = []
    if (e.app or "") in _PAY_APPS or _PAY.search(words):
        tags.append("payment")
    if _DELETE.search(words):
        tags.append("deletion")
    if _SEND.search(e.instruction) and any(s.kind in ("EMAIL", "PHONE") for s in find_pii(typed)):
        tags.append("new_recipient")
    return tags


def safety_tags(ws: list[EpisodeRow], ctx: Context, *, drop: list[str] | None = None) -> list[EpisodeRow]:
    """Tag payment / deletion / new-recipient episodes; drop those with a tag in ``drop``."""
    for tag in drop or []:
        if tag not in TAGS:
            raise ValueError(f"unknown safety tag {tag!r} (known: {', '.join(TAGS)})")
    out = []
    counts = dict.fromkeys(TAGS, 0)
    for e in ws:
        tags = sorted(set(e.tags) | set(tags_for(e)))
        for t in tags:
            counts[t] = counts.get(t, 0) + 1
        if drop and set(tags) & set(drop):
            continue
        e.tags = tags
        out.append(e)
    ctx.details["safety_tags"] = counts
    return out
