"""phones.make builds a phone by kind and names the kinds it builds when asked for another."""

import pytest

from phones.errors import UnknownPhoneKind
from phones.make import make_phone


def test_a_mock_phone_has_the_locale_it_was_made_with():
    phone = make_phone("mock", "mock-0", locale="zh-CN")
    try:
        assert phone.locale == "zh-CN" and phone.device().kind == "mock"
    finally:
        phone.close()


def test_an_unknown_kind_names_the_kinds():
    with pytest.raises(UnknownPhoneKind, match="mock, adb.*'usb'"):
        make_phone("usb", "R58M123")
