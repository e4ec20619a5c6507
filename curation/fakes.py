"""Fakes that belong to no one, in the value's own national format.

Every fake comes from a range reserved for fiction or is invalid by construction:

- phones: +1 NXX 555-01xx (North America's fictional range), +44 07700 900xxx (Ofcom's
  drama range; London numbers get 020 7946 0xxx), +86 100 xxxx xxxx (no Chinese mobile
  prefix starts 10), elsewhere digits libphonenumber rejects as a number of that region;
  the original's separators, spaces and "+"/trunk prefix stay ("07700 900123" stays
  "07700 900xxx");
- cards: the published test numbers of the card's network and length (4111 1111 1111
  1111, 5555 5555 5555 4444, 3782 822463 10005, ...), which no issuer gives anyone;
- IBANs: the original country and length with check digits "00", which mod-97 never
  accepts;
- ids: a wrong check digit (CN resident id, Aadhaar, ES DNI, IT codice fiscale, FR NIR,
  DE tax id, NL BSN), SSNs from the 987-65-432x advertising range, NI numbers with the
  never-issued prefix QQ, PANs whose 4th letter names no holder type;
- emails: ``user-<hex>@example.com`` (``example.cn`` for .cn / Chinese addresses);
- addresses: "<n> Example Street" / "示例市示例区示例路<n>号"; names from fixed fictional
  lists; handles: QQ numbers starting 0 (QQ assigns none), ``example_<hex>`` ids.

Consistent per lake: a fake is an HMAC of the value under the lake's secret
(``lake_salt``), so the same value gets the same fake in every episode and every
dataset version of one lake, and without the secret a fake says nothing about its value.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import re
from dataclasses import dataclass, field

import phonenumbers
from stdnum import verhoeff
from stdnum.cn import ric

from curation.pii import Detector, Span

TEST_CARDS = {  # (first digit, length) -> published test numbers of that network
    ("4", 16): ["4111111111111111", "4242424242424242", "4012888888881881", "4000056655665556"],
    ("4", 13): ["4222222222222"], ("4", 19): ["4000000000000000006"],
    ("5", 16): ["5555555555554444", "5105105105105100", "5200828282828210"],
    ("2", 16): ["2223003122003222"], ("3", 15): ["378282246310005", "371449635398431"],
    ("3", 14): ["30569309025904", "38520000023237"], ("3", 16): ["3530111333300000", "3566002020360505"],
    ("6", 16): ["6011111111111117", "6200000000000005", "6011000990139424"], ("6", 19): ["6205500000000000004"],
}
EN_NAMES = ("Alex Example", "Sam Sample", "Jordan Placeholder", "Casey Fictional", "Robin Testperson", "Taylor Demo")
ZH_NAMES = ("张示例", "李样本", "王测试", "赵虚构", "陈演示", "刘假名")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def lake_salt(lake) -> str:
    """The lake's secret for fakes: ``PHONELOOP_PII_SALT`` when set, else the random id
    Delta gave the lake's ``episodes`` table at creation (never exported)."""
    env = os.environ.get("PHONELOOP_PII_SALT")
    if env:
        return env
    try:
        from deltalake import DeltaTable

        return DeltaTable(lake.table_uri("episodes"), storage_options=lake.storage_options).metadata().id
    except Exception:  # noqa: BLE001 - a lake-less context (tests, benches) still gets stable fakes
        return "phoneloop"


@dataclass
class Pseudonyms:
    """Consistent fakes (see the module docstring); ``salt`` is the lake's secret."""

    salt: str = "phoneloop"
    detector: Detector = field(default_factory=Detector)
    fakes: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, key) -> fake as rendered

    def replace(self, text: str | None) -> tuple[str | None, list[str]]:
        """``text`` with every PII value replaced by its fake, and the kinds replaced."""
        spans = self.detector.find(text)
        if not spans:
            return text, []
        out, pos = [], 0
        for span in spans:
            out.append(text[pos:span.start])
            out.append(self.fake(span, text[span.start:span.end]))
            pos = span.end
        out.append(text[pos:])
        return "".join(out), [s.kind for s in spans]

    def _rng(self, kind: str, key: str) -> random.Random:
        return random.Random(hmac.new(self.salt.encode(), f"{kind}\0{key}".encode(), hashlib.sha256).digest())

    def fake(self, span: Span, raw: str) -> str:
        made = self.fakes.get((span.kind, raw))
        if made is None:
            made = self.fakes[(span.kind, raw)] = _MAKERS[span.kind](raw, span.key, self._rng(span.kind, span.key))
        return made


def _relayout(raw: str, digits: str) -> str:
    """``digits`` written into ``raw``'s digit positions from the right (separators,
    "+" and leading digits beyond ``digits`` stay)."""
    slots = [i for i, ch in enumerate(raw) if ch.isdigit()]
    chars = list(raw)
    for i, ch in zip(reversed(slots), reversed(digits)):
        chars[i] = ch
    return "".join(chars)


def _phone(raw: str, key: str, rng: random.Random) -> str:
    number = phonenumbers.parse(key)
    cc, national = number.country_code, str(number.national_number)
    n = len(national)
    if cc == 1:
        fake = f"{rng.choice(['201', '202', '212', '303', '312', '617', '702'])}55501{rng.randrange(100):02d}"
        if fake[-7:] == national[-7:]:  # an original from the fictional range itself: another subscriber
            fake = fake[:-2] + f"{(int(fake[-2:]) + 1) % 100:02d}"
    elif cc == 44:
        fake = f"207946{rng.randrange(1000):04d}" if national.startswith("20") else f"7700900{rng.randrange(1000):03d}"
    elif cc == 86 and n == 11:
        fake = "100" + "".join(str(rng.randrange(10)) for _ in range(8))
    else:
        for _ in range(100):
            fake = "".join(str(rng.randrange(10)) for _ in range(n))
            if not phonenumbers.is_valid_number(phonenumbers.parse(f"+{cc}{fake}")):
                break
        else:
            fake = "0" * n
    digits = re.sub(r"\D", "", raw)
    written = digits[len(str(cc)):] if raw.lstrip().startswith("+") else digits
    if len(written) == len(fake) + 1 and written.startswith("0"):  # a trunk prefix: 07700 900123
        fake = "0" + fake
    if len(re.sub(r"\D", "", fake)) == len(written):
        return _relayout(raw, fake)
    return phonenumbers.format_number(phonenumbers.parse(f"+{cc}{fake}"), phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def _card(raw: str, key: str, rng: random.Random) -> str:
    pool = TEST_CARDS.get((key[0], len(key))) or TEST_CARDS.get(("4", 16))
    pool = [c for c in pool if c != key] or pool  # a test number in the data is replaced by another one
    fake = rng.choice(pool)
    return _relayout(raw, fake) if len(fake) == len(key) else fake


def _iban(raw: str, key: str, rng: random.Random) -> str:
    from curation.pii import find_pii

    for _ in range(50):  # the digits must not read as some other value (a Luhn-valid run)
        body = "".join(ch if ch.isalpha() else str(rng.randrange(10)) for ch in key[4:])
        it = iter(key[:2] + "00" + body)
        fake = "".join(next(it, ch) if ch.isalnum() else ch for ch in raw)
        if not find_pii(fake):
            break
    return fake


def _wrong(correct: str, alphabet: str) -> str:
    return alphabet[(alphabet.index(correct) + 1) % len(alphabet)]


def _id(raw: str, key: str, rng: random.Random) -> str:
    digits = lambda n: "".join(str(rng.randrange(10)) for _ in range(n))  # noqa: E731
    if re.fullmatch(r"\d{17}[\dX]", key):  # CN resident id: a real birth date, a wrong check digit
        body = f"{rng.choice(['110101', '310101', '440103', '510104'])}{rng.randrange(1960, 2005)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}{digits(3)}"
        fake = body + _wrong(ric.calc_check_digit(body + "0"), "10X98765432")
        return raw[:len(raw) - 18] + fake if len(raw) >= 18 else fake
    if re.fullmatch(r"\d{9}", key) and re.search(r"\d{3}-\d{2}-\d{4}", raw):  # SSN: advertising range
        return _relayout(raw, f"98765432{rng.randrange(10)}")
    if re.fullmatch(r"[A-Z]{2}\d{6}[A-D]", key):  # UK NI: prefix QQ is never issued
        fake = "QQ" + digits(6) + key[-1]
        chars, it = list(raw), iter(fake)
        return "".join(next(it, ch) if ch.isalnum() else ch for ch in chars)
    if re.fullmatch(r"[2-9]\d{11}", key):  # Aadhaar: a wrong Verhoeff digit
        body = key[0] + digits(10)
        return _relayout(raw, body + _wrong(verhoeff.calc_check_digit(body), "0123456789"))
    if re.fullmatch(r"[A-Z]{5}\d{4}[A-Z]", key):  # PAN: 4th letter Q is no holder type
        return "".join(rng.choice("ABCDEFGHJK") for _ in range(3)) + "Q" + key[4] + digits(4) + key[-1]
    if re.fullmatch(r"[XYZ\d]\d{7}[A-Z]", key):  # ES DNI / NIE: a wrong control letter
        number = digits(8)
        letters = "TRWAGMYFPDXBNJZSQVHLCKE"
        return _relayout(raw, number) [:-1] + _wrong(letters[int(number) % 23], letters)
    # FR NIR, DE tax id, NL BSN, IT codice fiscale: same layout, checked digits off by one
    fake = "".join(str(rng.randrange(10)) if ch.isdigit() else ch for ch in raw)
    last = max((i for i, ch in enumerate(fake) if ch.isdigit()), default=None)
    if last is not None:
        from curation.pii import find_pii
        for bump in range(1, 10):
            if not find_pii(fake):
                break
            fake = fake[:last] + str((int(raw[last]) + bump) % 10) + fake[last + 1:]
    return fake


def _email(raw: str, key: str, rng: random.Random) -> str:
    domain = key.rsplit("@", 1)[1]
    cn = domain.endswith(".cn") or bool(_HAN.search(key))
    return f"user-{rng.randrange(16 ** 6):06x}@example.{'cn' if cn else 'com'}"


def _address(raw: str, key: str, rng: random.Random) -> str:
    if _HAN.search(raw):
        return f"示例市示例区示例路{rng.randrange(1, 200)}号"
    return f"{rng.randrange(1, 200)} Example Street"


def _name(raw: str, key: str, rng: random.Random) -> str:
    if _HAN.search(raw):
        return rng.choice(ZH_NAMES)
    full = rng.choice(EN_NAMES)
    return full if " " in raw.strip() else full.split()[0]


def _handle(raw: str, key: str, rng: random.Random) -> str:
    if raw.startswith("@"):
        return f"@example_{rng.randrange(16 ** 4):04x}"
    if re.fullmatch(r"[\d ]+[A-Za-z]?", raw):  # a QQ number (maybe spaced): QQ assigns none starting 0
        fake = "0" + "".join(str(rng.randrange(10)) for _ in range(sum(c.isdigit() for c in raw) - 1))
        return _relayout(raw, fake)
    return f"example_{rng.randrange(16 ** 6):06x}"


_MAKERS = {"PHONE": _phone, "CARD": _card, "IBAN": _iban, "ID": _id, "EMAIL": _email, "ADDRESS": _address,
           "NAME": _name, "HANDLE": _handle}
