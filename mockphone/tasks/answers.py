"""Reading an agent's answer the way a strict grader would: one final answer, one candidate, normalised.

``final_answer`` (in ``base``) returns None when the episode answered zero or several times;
the extractors below pull every value of one kind out of that answer, so a task can demand
exactly one (an answer listing every alarm, hotel or number fails)::

    times("07:50 AM") == times("7:50") == ["07:50"]
    numbers("$1,234.50 and 3") == [1234.5, 3.0]
"""

from __future__ import annotations

import re
from typing import Iterable

_TIME = re.compile(r"(?<!\d)(\d{1,2})[:.](\d{2})(?!\d)\s*([ap])?\.?\s*m?\.?", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_PHONE = re.compile(r"\+?\d[\d\s().-]{5,}\d")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def norm(text: str | None) -> str:
    """Lower-cased, single-spaced, without surrounding quotes or a final full stop."""
    return " ".join((text or "").split()).strip("\"'").rstrip(".").strip().lower()


def times(text: str | None) -> list[str]:
    """Every clock time in ``text`` as HH:MM (24 h), in order, without repeats."""
    out: list[str] = []
    for h, m, half in _TIME.findall(text or ""):
        hour = int(h) % 12 + (12 if half.lower() == "p" else 0) if half else int(h)
        value = f"{hour:02d}:{int(m):02d}"
        if hour < 24 and int(m) < 60 and value not in out:
            out.append(value)
    return out


def numbers(text: str | None) -> list[float]:
    """Every number in ``text`` (thousands separators allowed), in order, without repeats."""
    out: list[float] = []
    for raw in _NUMBER.findall(text or ""):
        value = float(raw.replace(",", ""))
        if value not in out:
            out.append(value)
    return out


def phone_numbers(text: str | None) -> list[str]:
    """Every phone number in ``text`` as its digits."""
    out: list[str] = []
    for raw in _PHONE.findall(text or ""):
        value = "".join(ch for ch in raw if ch.isdigit())
        if value not in out:
            out.append(value)
    return out


def emails(text: str | None) -> list[str]:
    return list(dict.fromkeys(e.lower() for e in _EMAIL.findall(text or "")))


def mentions(text: str | None, candidates: Iterable[str]) -> list[str]:
    """The candidates that occur in ``text`` (case-insensitive)."""
    low = norm(text)
    return [c for c in dict.fromkeys(candidates) if c and norm(c) in low]


def only(found: list, want) -> bool:
    """Exactly one value was given, and it is the right one."""
    return len(found) == 1 and found[0] == want
