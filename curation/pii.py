"""Finding personal data in text (English and Chinese).

Every class Microsoft Presidio's default recognisers cover for these locales, matched
with the same libraries Presidio itself calls for the checksums (presidio-analyzer is not
used: its default engine needs a spaCy model that is a download, see docs/redaction.md):

- ``EMAIL``: a Unicode pattern, so a non-ASCII local part (``josé.müller@…``,
  ``张伟@…``) is one whole address;
- ``PHONE``: ``phonenumbers.PhoneNumberMatcher`` (Google's libphonenumber) at
  ``Leniency.VALID`` for numbers written internationally (every region) and nationally in
  ``REGIONS`` with at least ``MIN_NATIONAL_DIGITS`` digits; dates and times are never
  valid numbers;
- ``CARD``: 13-19 digits passing ``stdnum.luhn``;
- ``IBAN``: ``stdnum.iban`` (country format and mod-97 check);
- ``ID``: national ids: CN resident id (``stdnum.cn.ric``), US SSN (``stdnum.us.ssn``),
  UK National Insurance number (HMRC's prefix rules), IN Aadhaar (``stdnum.in_.aadhaar``,
  Verhoeff) and PAN (``stdnum.in_.pan``), and EU ones: DE tax id (``stdnum.de.idnr``), FR
  NIR (``stdnum.fr.nir``), ES DNI / NIE (``stdnum.es``), IT codice fiscale
  (``stdnum.it.codicefiscale``), NL BSN (``stdnum.nl.bsn``, only after "BSN");
- ``ADDRESS``, ``NAME``, ``HANDLE``: rule sets in ``curation.pii_rules`` (street
  patterns, surname and given-name lists with context words, QQ / WeChat ids), plus the
  names a caller knows (the lake's own contacts: ``Detector(names=...)``).

``find_pii(text)`` returns non-overlapping spans, strongest evidence first. Fakes are
made by ``curation.fakes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import phonenumbers
from stdnum import iban, luhn
from stdnum.cn import ric
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.in_ import aadhaar, pan
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.us import ssn

from curation import pii_rules

REGIONS = ("US", "CN", "GB", "IN", "DE", "FR", "JP", "BR")
KINDS = ("EMAIL", "IBAN", "ID", "CARD", "PHONE", "HANDLE", "ADDRESS", "NAME")
EMAIL = re.compile(r"[\w.%+\-]+@[\w\-]+(?:\.[\w\-]+)*\.[^\W\d_]{2,}")
_CN_ID = re.compile(r"(?<!\d)\d{17}[\dXx](?![\dA-Za-z])")
_SSN = re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)|(?i:ssn)\W{0,3}(?P<v>\d{9})(?!\d)")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}")
_NINO = re.compile(r"\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_AADHAAR = re.compile(r"(?<![\d][ -])(?<!\d)[2-9]\d{3}([ -])\d{4}\1\d{4}(?![ -]?\d)|(?i:aadhaar|uidai?|आधार)\W{0,3}(?P<v>[2-9]\d{11})(?!\d)")
_PAN = re.compile(r"\b[A-Z]{3}[ABCFGHLJPT][A-Z]\d{4}[A-Z]\b")
_DE_IDNR = re.compile(r"(?i:idnr|steuer-?id|steuerliche identifikationsnummer|tax id)\W{0,3}(?P<v>\d{2} ?\d{3} ?\d{3} ?\d{3})(?!\d)")
_FR_NIR = re.compile(r"(?<!\d)[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?!\d)")
_ES_DNI = re.compile(r"\b(?:\d{8}|[XYZ]\d{7})-?[A-Z]\b")
_IT_CF = re.compile(r"\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b")
_NL_BSN = re.compile(r"(?i:bsn)\W{0,3}(?P<v>\d{9})(?!\d)")
_DIGITS = re.compile(r"\d")
MIN_NATIONAL_DIGITS = 8  # a number written without +country needs its area code to count as a phone


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str  # one of KINDS
    key: str  # the canonical value (E.164, digits, lowercase email): equal values, equal keys


class _Found:
    def __init__(self) -> None:
        self.spans: list[Span] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= s.start or start >= s.end for s in self.spans)

    def add(self, start: int, end: int, kind: str, key: str) -> None:
        if end > start and self.free(start, end):
            self.spans.append(Span(start, end, kind, key))


def _compact(value: str) -> str:
    return re.sub(r"[\s\-]", "", value).upper()


def _cn_id_valid(value: str) -> bool:
    """Birth date and check digit (not stdnum's area list, which lacks districts made
    since it was compiled: 440305 Nanshan ids are real)."""
    value = value.upper()
    try:
        ric.get_birth_date(value)
    except Exception:  # noqa: BLE001 - stdnum's ValidationError, ValueError from a bad date
        return False
    return ric.calc_check_digit(value) == value[-1]


def _ids(text: str, found: _Found) -> None:
    checks = ((_CN_ID, _cn_id_valid), (_SSN, lambda v: ssn.is_valid(re.sub(r"\D", "", v))),
              (_NINO, lambda v: True), (_PAN, pan.is_valid), (_IT_CF, codicefiscale.is_valid),
              (_ES_DNI, lambda v: dni.is_valid(v) or nie.is_valid(v)), (_FR_NIR, nir.is_valid),
              (_AADHAAR, aadhaar.is_valid), (_DE_IDNR, idnr.is_valid), (_NL_BSN, bsn.is_valid))
    for pattern, valid in checks:
        for m in pattern.finditer(text):
            part = "v" if m.groupdict().get("v") else 0
            try:
                ok = valid(m.group(part))
            except Exception:  # noqa: BLE001 - stdnum raises its own ValidationError subclasses
                ok = False
            if ok:
                found.add(m.start(part), m.end(part), "ID", _compact(m.group(part)))


def _ibans(text: str, found: _Found) -> None:
    for m in _IBAN.finditer(text):
        raw = m.group()
        for end in range(len(raw), 14, -1):  # the greedy pattern may run into the next word
            if raw[end - 1] != " " and iban.is_valid(raw[:end]):
                found.add(m.start(), m.start() + end, "IBAN", _compact(raw[:end]))
                break


def _cards(text: str, found: _Found) -> None:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            found.add(m.start(), m.end(), "CARD", digits)


def _phones(text: str, found: _Found) -> None:
    for region in REGIONS:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            if not m.raw_string.startswith("+") and (
                    len(_DIGITS.findall(m.raw_string)) < MIN_NATIONAL_DIGITS  # "1640", "3103314": PINs, order ids
                    or re.search(r"(?<!\d)\d(?!\d)", m.raw_string)  # "4 8 15 16 23 42": a list, not a number
                    or re.search(r"[A-Za-z][-#]$", text[max(0, m.start - 2):m.start])):  # "INV-2024-000123"
                continue
            found.add(m.start, m.end, "PHONE",
                      phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164))


class Detector:
    """``find`` with the names a caller already knows (a lake's contacts) on top of the rules."""

    def __init__(self, names: frozenset[str] | set[str] = frozenset()) -> None:
        self.names = frozenset(n for n in names if len(n.strip()) >= 2)

    def find(self, text: str | None) -> list[Span]:
        if not text:
            return []
        return list(_find(text, self.names))


@lru_cache(maxsize=65536)
def _find(text: str, names: frozenset[str]) -> tuple[Span, ...]:
    found = _Found()
    found.spans = list(_value_spans(text))
    for start, end, kind, key in pii_rules.find(text, names):
        found.add(start, end, kind, key)
    return tuple(sorted(found.spans, key=lambda s: s.start))


@lru_cache(maxsize=65536)
def _value_spans(text: str) -> tuple[Span, ...]:
    """The spans that do not depend on the names a caller knows (emails, ids, cards, handles,
    phones), found once per text however many detectors (name lists) read it."""
    found = _Found()
    if "@" in text:
        for m in EMAIL.finditer(text):
            found.add(m.start(), m.end(), "EMAIL", m.group().lower())
    if len(_DIGITS.findall(text)) >= 5:
        _ibans(text, found)
        _ids(text, found)
        _cards(text, found)
        for start, end, kind, key in pii_rules.handles(text):  # "QQ 5692584449" is an id, not a phone
            found.add(start, end, kind, key)
        if len(_DIGITS.findall(text)) >= 7:
            _phones(text, found)
            _split_runs(text, found)
    elif re.search(r"[A-Z]{2} ?\d", text):
        _ids(text, found)  # NI numbers have 6 digits
    return tuple(found.spans)


def find_pii(text: str | None, names: frozenset[str] = frozenset()) -> list[Span]:
    """Non-overlapping PII spans in ``text`` (see the module docstring)."""
    if not text:
        return []
    return list(_find(text, frozenset(names)))


_RUN = re.compile(r"\+?\d+(?:[ -]\d+)+")
_GROUP = re.compile(r"\+?\d+")
_MAX_GROUPS = 8


def _split_runs(text: str, found: _Found) -> None:
    """Values written next to each other ("+1 415 555 0106 4539 1488 0603 4368"): the
    greedy patterns above see one long number that is neither; try every window of digit
    groups not yet covered, longest first, for a card, then an international (+...) phone
    number (dates and times such as "2024-05-01 10:30" are never phone numbers here)."""
    for run in _RUN.finditer(text):
        groups = [g for g in _GROUP.finditer(text, run.start(), run.end()) if found.free(g.start(), g.end())]
        i = 0
        while i < len(groups):
            i = _window_at(text, groups, i, found)


def _window_at(text: str, groups: list, i: int, found: _Found) -> int:
    for j in range(min(len(groups), i + _MAX_GROUPS) - 1, i - 1, -1):
        start, end = groups[i].start(), groups[j].end()
        digits = re.sub(r"\D", "", text[start:end])
        if 13 <= len(digits) <= 19 and not text[start].startswith("+") and luhn.is_valid(digits):
            found.add(start, end, "CARD", digits)
            return j + 1
        if 7 <= len(digits) <= 15 and text[start] == "+":  # national numbers: the matcher above
            for region in REGIONS:
                try:
                    number = phonenumbers.parse(text[start:end], region)
                except phonenumbers.NumberParseException:
                    continue
                if phonenumbers.is_valid_number(number):
                    found.add(start, end, "PHONE",
                              phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))
                    return j + 1
    return i + 1


def has_pii(text: str | None) -> bool:
    return bool(find_pii(text))
