"""Finding personal data in text and replacing it with consistent, plausible fakes.

Detection uses maintained libraries where they exist:

- phone numbers: ``phonenumbers.PhoneNumberMatcher`` (Google's libphonenumber) at
  ``Leniency.VALID`` for numbers written internationally (any region) and nationally in
  ``REGIONS`` with at least ``MIN_NATIONAL_DIGITS`` digits (libphonenumber accepts
  "1640" as a German number); dates and times ("2024-05-01 10:30", "7:30") are not
  valid numbers;
- card numbers: 13-19 digits passing ``stdnum.luhn``;
- national ids: Chinese resident ids (``stdnum.cn.ric``: birth date and check digit)
  and US social security numbers (``stdnum.us.ssn``);
- emails: a pattern (no library does better for free text).

``Pseudonyms`` replaces each value with a fake of the same kind and layout (same
separators, same length, still a valid number / Luhn / check digit), the same fake
for the same value everywhere in one episode, so "type the number the instruction
names" stays the right action. A fake depends only on the episode id, the kind and
the order values were first seen, never on the value itself, so it cannot be used to
guess the value; rebuilding gives the same fakes.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field

import phonenumbers
from stdnum import luhn
from stdnum.cn import ric
from stdnum.us import ssn

REGIONS = ("US", "CN", "GB", "IN", "DE", "FR", "JP", "BR")
KINDS = ("EMAIL", "ID", "CARD", "PHONE")
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_CN_ID = re.compile(r"(?<!\d)\d{17}[\dXx](?![\dA-Za-z])")
_SSN = re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_DIGITS = re.compile(r"\d")
MIN_NATIONAL_DIGITS = 8  # a number written without +country needs its area code to count as a phone


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str  # EMAIL | ID | CARD | PHONE
    key: str  # the canonical value (E.164, digits, lowercase email): equal values, equal keys


def find_pii(text: str | None) -> list[Span]:
    """Non-overlapping PII spans in ``text``, strongest evidence first (email, id, card, phone)."""
    if not text:
        return []
    found: list[Span] = []

    def add(start: int, end: int, kind: str, key: str) -> None:
        if all(end <= s.start or start >= s.end for s in found):
            found.append(Span(start, end, kind, key))

    if "@" in text:
        for m in EMAIL.finditer(text):
            add(m.start(), m.end(), "EMAIL", m.group().lower())
    if len(_DIGITS.findall(text)) < 7:
        return sorted(found, key=lambda s: s.start)
    for m in _CN_ID.finditer(text):
        if ric.is_valid(m.group()):
            add(m.start(), m.end(), "ID", m.group().upper())
    for m in _SSN.finditer(text):
        if ssn.is_valid(m.group()):
            add(m.start(), m.end(), "ID", m.group().replace("-", ""))
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            add(m.start(), m.end(), "CARD", digits)
    for region in REGIONS:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            if not m.raw_string.startswith("+") and len(_DIGITS.findall(m.raw_string)) < MIN_NATIONAL_DIGITS:
                continue  # "1640", "3103314": valid short numbers somewhere, but mostly PINs, times, order ids
            add(m.start, m.end, "PHONE", phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164))
    _split_runs(text, found, add)
    return sorted(found, key=lambda s: s.start)


_RUN = re.compile(r"\+?\d+(?:[ -]\d+)+")
_GROUP = re.compile(r"\+?\d+")
_MAX_GROUPS = 8


def _split_runs(text: str, found: list[Span], add) -> None:
    """Values written next to each other ("+1 415 555 0106 4539 1488 0603 4368"): the
    greedy patterns above see one long number that is neither; try every window of digit
    groups not yet covered, longest first, for a card, then an international (+...) phone
    number (dates and times such as "2024-05-01 10:30" are never phone numbers here)."""
    for run in _RUN.finditer(text):
        groups = [g for g in _GROUP.finditer(text, run.start(), run.end())
                  if all(g.end() <= s.start or g.start() >= s.end for s in found)]
        i = 0
        while i < len(groups):
            i = _window_at(text, groups, i, add)


def _window_at(text: str, groups: list, i: int, add) -> int:
    for j in range(min(len(groups), i + _MAX_GROUPS) - 1, i - 1, -1):
        start, end = groups[i].start(), groups[j].end()
        digits = re.sub(r"\D", "", text[start:end])
        if 13 <= len(digits) <= 19 and not text[start].startswith("+") and luhn.is_valid(digits):
            add(start, end, "CARD", digits)
            return j + 1
        if 7 <= len(digits) <= 15 and text[start] == "+":  # national numbers: the matcher above
            for region in REGIONS:
                try:
                    number = phonenumbers.parse(text[start:end], region)
                except phonenumbers.NumberParseException:
                    continue
                if phonenumbers.is_valid_number(number):
                    add(start, end, "PHONE", phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))
                    return j + 1
    return i + 1


def has_pii(text: str | None) -> bool:
    return bool(find_pii(text))


@dataclass
class Pseudonyms:
    """Consistent fakes for one episode (see the module docstring)."""

    episode_id: str
    fakes: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, key) -> fake canonical value

    def replace(self, text: str | None) -> tuple[str | None, list[str]]:
        """``text`` with every PII value replaced by its fake, and the kinds replaced."""
        spans = find_pii(text)
        if not spans:
            return text, []
        out, pos = [], 0
        for span in spans:
            out.append(text[pos:span.start])
            out.append(self._render(span, text[span.start:span.end]))
            pos = span.end
        out.append(text[pos:])
        return "".join(out), [s.kind for s in spans]

    def _rng(self, kind: str, n: int, attempt: int = 0) -> random.Random:
        seed = hashlib.sha256(f"{self.episode_id}\0{kind}\0{n}\0{attempt}".encode()).digest()
        return random.Random(seed)

    def _fake(self, kind: str, key: str) -> str:
        if (kind, key) not in self.fakes:
            n = sum(k == kind for k, _ in self.fakes)
            self.fakes[(kind, key)] = _MAKERS[kind](self, key, n)
        return self.fakes[(kind, key)]

    def _render(self, span: Span, raw: str) -> str:
        fake = self._fake(span.kind, span.key)
        if span.kind == "EMAIL":
            return fake
        if span.kind == "PHONE":
            fake = fake.lstrip("+")
        return _relayout(raw, fake)

    def _phone(self, key: str, n: int) -> str:
        number = phonenumbers.parse(key)
        national = str(number.national_number)
        keep = min(3, len(national) - 4)  # the area / mobile prefix stays: a plausible number of that region
        for attempt in range(200):
            rng = self._rng("PHONE", n, attempt)
            digits = national[:keep] + "".join(str(rng.randrange(10)) for _ in national[keep:])
            candidate = phonenumbers.parse(f"+{number.country_code}{digits}")
            if digits != national and phonenumbers.is_valid_number(candidate):
                return phonenumbers.format_number(candidate, phonenumbers.PhoneNumberFormat.E164)
        return f"+{number.country_code}{national[:keep]}{'0' * (len(national) - keep)}"

    def _card(self, key: str, n: int) -> str:
        rng = self._rng("CARD", n)
        body = key[0] + "".join(str(rng.randrange(10)) for _ in key[1:-1])
        return body + luhn.calc_check_digit(body)

    def _id(self, key: str, n: int) -> str:
        rng = self._rng("ID", n)
        if len(key) == 9:  # a US SSN: area 100-665, group and serial non-zero
            return f"{rng.randrange(100, 666)}{rng.randrange(1, 100):02d}{rng.randrange(1, 10000):04d}"
        body = f"110101{rng.randrange(1960, 2005)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}" \
               f"{rng.randrange(1000):03d}"
        return body + ric.calc_check_digit(body + "0")  # stdnum wants a placeholder check digit

    def _email(self, key: str, n: int) -> str:
        return f"user{self._rng('EMAIL', n).randrange(16 ** 6):06x}@example.com"


_MAKERS = {"PHONE": Pseudonyms._phone, "CARD": Pseudonyms._card, "ID": Pseudonyms._id, "EMAIL": Pseudonyms._email}


def _relayout(raw: str, fake: str) -> str:
    """``fake``'s characters in ``raw``'s layout: the last len(fake) digits (and X check
    characters) of ``raw`` are replaced in order, separators and prefixes stay."""
    slots = [i for i, ch in enumerate(raw) if ch.isdigit() or ch in "Xx"]
    chars = list(raw)
    for i, ch in zip(slots[len(slots) - len(fake):] if len(fake) <= len(slots) else slots, fake[-len(slots):]):
        chars[i] = ch
    return "".join(chars)
