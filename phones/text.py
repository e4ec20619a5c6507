"""Typing text through ``adb shell input text``, and the documented path for text it cannot type.

``input text`` takes one argument in which ``%s`` means a space; it types only what
the device's key character map has keys for (printable ASCII), and a literal ``%s``
cannot be expressed. So:

* printable ASCII: split where ``%s`` would appear (``"%"`` and ``"s..."`` go in separate
  calls), replace spaces by ``%s``, and single-quote each chunk for the device's shell,
  so quotes, ``;``, ``&``, ``|``, ``$``, backticks and ``*`` arrive literally;
* anything else (accents, CJK, emoji): the ADBKeyBoard IME
  (https://github.com/senzhk/ADBKeyBoard) must be installed on the phone; the text is
  sent base64-encoded with ``am broadcast -a ADB_INPUT_B64 --es msg <b64>``;
* control characters (newline, tab, ...) are refused: send ``key`` actions instead.
"""

from __future__ import annotations

import base64
import shlex

from phones.errors import UntypeableText

ADB_KEYBOARD = "com.android.adbkeyboard/.AdbIME"


def check_typeable(text: str) -> None:
    bad = next((ch for ch in text if ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if bad is not None:
        raise UntypeableText(f"cannot type control character {bad!r}; use a key action (e.g. enter) instead")


def is_plain(text: str) -> bool:
    """True when ``input text`` can type it (printable ASCII)."""
    return all(0x20 <= ord(ch) < 0x7F for ch in text)


def input_text_commands(text: str) -> list[str]:
    """Shell commands that type ``text`` (printable ASCII) with ``input text``."""
    check_typeable(text)
    if not is_plain(text):
        raise UntypeableText(f"{text!r} has non-ASCII characters, which `input text` cannot type; "
                             f"install ADBKeyBoard ({ADB_KEYBOARD}) to type them")
    chunks, start = [], 0
    for i in range(len(text) - 1):
        if text[i] == "%" and text[i + 1] == "s":
            chunks.append(text[start:i + 1])
            start = i + 1
    chunks.append(text[start:])
    return [f"input text {shlex.quote(chunk.replace(' ', '%s'))}" for chunk in chunks if chunk]


def broadcast_command(text: str) -> str:
    """The ADBKeyBoard broadcast that types any Unicode text."""
    check_typeable(text)
    b64 = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"am broadcast -a ADB_INPUT_B64 --es msg {b64}"
