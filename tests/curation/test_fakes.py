"""Fakes come from reserved fictional ranges or fail their checksums, keep the national
format, and are the same for the same value across a lake (issue 31)."""

from __future__ import annotations

import re

import phonenumbers
import pytest
from stdnum import iban, luhn
from stdnum.cn import ric
from stdnum.in_ import aadhaar

from curation.fakes import TEST_CARDS, Pseudonyms
from curation.pii import find_pii


def fake(text: str, salt: str = "lake-a") -> str:
    out, kinds = Pseudonyms(salt=salt).replace(text)
    assert kinds, text
    return out


@pytest.mark.parametrize("text, pattern", [
    ("Call +1 (415) 555-2671 now", r"Call \+1 \(\d{3}\) 555-01\d\d now"),
    ("mobile 07911 123456", r"mobile 07700 900\d{3}"),  # Ofcom's drama range, national format kept
    ("+44 7911 123456", r"\+44 7700 900\d{3}"),
    ("+44 20 7946 1234", r"\+44 20 7946 0\d{3}"),
    ("+86 138 0013 8000", r"\+86 100 \d{4} \d{4}"),  # no Chinese mobile prefix starts 10
    ("电话13800138000", r"电话100\d{8}"),
    ("ssn 536-22-8726", r"ssn 987-65-432\d"),  # the advertising range
    ("NI AB 12 34 56 C", r"NI QQ \d\d \d\d \d\d C"),  # prefix QQ is never issued
    ("josé.müller@correo.es", r"user-[0-9a-f]{6}@example\.com"),
    ("张伟@163.com", r"user-[0-9a-f]{6}@example\.cn"),
    ("QQ 98 76 54 A", r"QQ 0\d \d\d \d\d A"),  # QQ numbers never start with 0
])
def test_fakes_come_from_reserved_ranges_in_the_national_format(text, pattern):
    assert re.fullmatch(pattern, fake(text)), fake(text)


@pytest.mark.parametrize("number", ["+86 138 0013 8000", "+91 98765 43210", "+49 1512 3456789", "+33 6 12 34 56 78",
                                    "+81 90-1234-5678", "+55 11 91234-5678"])
def test_region_valid_phone_fakes_are_rejected(number):
    """A fake that is a valid number of its region could be someone's: outside NANP's
    555-01xx and Ofcom's ranges every fake fails libphonenumber's validation."""
    out = fake(f"tel {number}").removeprefix("tel ")
    assert out != number and not phonenumbers.is_valid_number(phonenumbers.parse(out))


def test_card_fakes_are_published_test_numbers_in_the_same_layout():
    out = fake("card 4539-1488-0343-6467").removeprefix("card ")
    assert re.fullmatch(r"\d{4}-\d{4}-\d{4}-\d{4}", out)
    assert out.replace("-", "") in {c for cards in TEST_CARDS.values() for c in cards} and luhn.is_valid(out.replace("-", ""))
    amex = fake("card 3714 496353 98431").removeprefix("card ")
    assert amex.replace(" ", "") in TEST_CARDS[("3", 15)]


def test_iban_and_id_fakes_fail_their_checks():
    out = fake("IBAN GB82 WEST 1234 5698 7654 32").removeprefix("IBAN ")
    assert re.fullmatch(r"GB00 WEST \d{4} \d{4} \d{4} \d\d", out) and not iban.is_valid(out)
    cn = fake("id 11010519491231002X").removeprefix("id ")
    assert len(cn) == 18 and not ric.is_valid(cn) and cn[:6] != "110105"
    assert not aadhaar.is_valid(fake("Aadhaar 2345 6789 0124").removeprefix("Aadhaar "))
    for text in ("id 11010519491231002X", "Aadhaar 2345 6789 0124", "PAN ABCPE1234F", "DNI 12345678Z",
                 "IBAN GB82 WEST 1234 5698 7654 32", "NI AB 12 34 56 C"):
        assert [s.kind for s in find_pii(fake(text))] in ([], ["HANDLE"]), fake(text)


def test_the_same_value_gets_the_same_fake_across_a_lake_and_another_lake_another():
    a1, a2 = Pseudonyms(salt="lake-a"), Pseudonyms(salt="lake-a")
    text = "Call Priya Raman on +1 415 555 2671, mail priya@corp.net, 北京市朝阳区建国路88号"
    assert a1.replace(text) == a2.replace(text)
    assert a1.replace("+1 415 555 2671")[0] in a1.replace(text)[0]  # alone or in a sentence, one fake
    assert Pseudonyms(salt="lake-b").replace(text)[0] != a1.replace(text)[0]


def test_a_published_test_card_in_the_data_is_replaced_by_another_one():
    from curation.fakes import Pseudonyms

    for salt in map(str, range(40)):  # the fake depends on the lake's secret: every draw must differ
        text, kinds = Pseudonyms(salt=salt).replace("card 4111 1111 1111 1111 expired")
        assert kinds == ["CARD"] and "4111 1111 1111 1111" not in text, (salt, text)


def test_a_fictional_original_never_gets_its_own_subscriber_number_back():
    # +1 NXX 555-01xx fakes draw only the last two digits: an original from that range met itself 1 time in 100
    import random

    from curation.fakes import _phone

    fakes = {_phone("+1 415 555 0134", "+14155550134", random.Random(i)) for i in range(300)}
    assert fakes and not any("555 0134" in f for f in fakes)
