"""Reading an agent's answer the way a strict grader would: one final answer, one candidate, normalised.

``final_answer`` (in ``base``) returns None when the episode answered zero or several times;
the extractors below pull every value of one kind out of that answer, so a task can demand
exactly one (an answer listing every alarm, hotel or number fails)::

    times("07:50 AM") == times("7:50") == times("0750") == times("7h50") == times("7点50") == ["07:50"]
    numbers("$1,234.50 and 3") == [1234.5, 3.0]
    phone_numbers("(555) 200-1001") == phone_numbers("+1 555-200-1001") == ["15552001001"]
    one_of("It's Hotel Lux, I checked.", ["Hotel Lux", "Hotel Lux Plaza"]) == ["Hotel Lux"]
"""

from __future__ import annotations

import re
from typing import Iterable

_TIME = re.compile(r"(?<![\d/-])(\d{1,2})\s*(?:[:.hH时点])\s*(\d{2})(?![\d/-])分?\s*([ap])?\.?\s*m?\.?", re.IGNORECASE)
_BARE_TIME = re.compile(r"(?<![\d/.:-])([01]\d|2[0-3])([0-5]\d)(?![\d/.:-])\s*(?:h|hrs|hours)?\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_PHONE = re.compile(r"\+?\d[\d\s().-]{5,}\d")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def norm(text: str | None) -> str:
    """Lower-cased, single-spaced, without surrounding quotes or a final full stop."""
    return " ".join((text or "").split()).strip("\"'").rstrip(".").strip().lower()


def times(text: str | None) -> list[str]:
    """Every clock time in ``text`` as HH:MM (24 h), in order, without repeats."""
    out: list[str] = []
    found = _TIME.findall(text or "") or [(h, m, "") for h, m in _BARE_TIME.findall(text or "")]  # "0645"
    for h, m, half in found:
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


def phone_numbers(text: str | None, region: str = "US") -> list[str]:
    """Every phone number in ``text`` as country code + national number digits (python-phonenumbers, with
    ``region`` for numbers written without a country code: "(555) 200-1001" is "15552001001" in the US)."""
    import phonenumbers

    found = [f"{m.number.country_code}{m.number.national_number}"
             for m in phonenumbers.PhoneNumberMatcher(text or "", region, leniency=phonenumbers.Leniency.POSSIBLE)]
    if found:
        return list(dict.fromkeys(found))
    out: list[str] = []
    for raw in _PHONE.findall(text or ""):
        value = "".join(ch for ch in raw if ch.isdigit())
        if value not in out:
            out.append(value)
    return out


def phone_key(number: str) -> tuple[str, str]:
    """A stored number as (its region, country code + national number digits), to compare answers with."""
    import phonenumbers

    try:
        parsed = phonenumbers.parse(number, "US")
    except phonenumbers.NumberParseException:
        return "US", "".join(ch for ch in number if ch.isdigit())
    return (phonenumbers.region_code_for_country_code(parsed.country_code) or "US",
            f"{parsed.country_code}{parsed.national_number}")


def one_of(text: str | None, candidates: Iterable[str]) -> list[str]:
    """The candidates ``text`` names, a candidate inside a longer named one not counted ("Hotel Lux" in
    "Hotel Lux Plaza"): an answer with extra words around one value names exactly that value."""
    named = mentions(text, candidates)
    return [c for c in named if not any(c != o and norm(c) in norm(o) for o in named)]


def names_exactly(text: str | None, want: str, candidates: Iterable[str]) -> bool:
    """The answer is ``want`` exactly, or names ``want`` and no other candidate among words around it."""
    if norm(text) == norm(want):
        return True
    return one_of(text, [*candidates, want]) == [want]


def emails(text: str | None) -> list[str]:
    return list(dict.fromkeys(e.lower() for e in _EMAIL.findall(text or "")))


def mentions(text: str | None, candidates: Iterable[str]) -> list[str]:
    """The candidates that occur in ``text`` (case-insensitive)."""
    low = norm(text)
    return [c for c in dict.fromkeys(candidates) if c and norm(c) in low]


def only(found: list, want) -> bool:
    """Exactly one value was given, and it is the right one."""
    return len(found) == 1 and found[0] == want


# --- one refusal vocabulary for the whole phone, both locales -------------------------------
# A refusal says the task cannot or will not be done; a claim of success says it was done. An answer
# that does both ("Done. I couldn't find it, so I updated another one") is a claim, not a refusal.
_REFUSE = re.compile(
    r"\b(can't|cannot|can not|couldn't|could not|unable|impossible|not possible|isn't possible|infeasible|"
    r"no such|doesn't exist|does not exist|don't exist|do not exist|not exist|not found|couldn't find|could not find|"
    r"there is no|there's no|there are no|isn't available|is not available|not available|not supported|"
    r"doesn't support|does not support|won't|will not|refuse|not safe|unsafe|shouldn't|should not|too risky)\b"
    r"|无法|不能|不存在|找不到|没有找到|没找到|不支持|做不到|办不到|拒绝|不可以|不安全|不应该",
    re.IGNORECASE)
_CLAIM = re.compile(
    r"\b(done|i('ve| have)? (updated|changed|moved|deleted|set|sent|bought|ordered|transferred|paid|turned|"
    r"created|added|removed|unsent|rescheduled|booked)|completed|successfully|all set)\b"
    r"|已将|已为|已把|已完成|已成功|已修改|已删除|已更新|已发送|搞定了|办好了",
    re.IGNORECASE)


def refuses(text: str | None) -> bool:
    """``text`` says the task cannot (or will not) be done, and claims nothing was done."""
    return bool(text) and bool(_REFUSE.search(text)) and not _CLAIM.search(text)


def claims_success(text: str | None) -> bool:
    """``text`` says the task was done (whatever else it says)."""
    return bool(text) and bool(_CLAIM.search(text))
