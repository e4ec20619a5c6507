"""Whatever an agent types or pastes, the phone still renders: every text field the oracles type into, fuzzed.

Found by GRPO's played episodes: a policy pasted the leave-request letter (with line breaks) into a
single-line field, and Pillow's layout engine raised on the line break while measuring it.
"""

from datalake.types import Action
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from mockphone.tasks.oracle import UI

TEXTS = [
    "line one\nline two\r\n\nthree\u2029four\x85five\x1csix\x0bseven\x0ceight\u2028nine\n",  # every line break
    "\t\x00\x07 \u202eRTL\u202c \u200b\ufeff 😀👍🏽 中文，标点。 café",  # controls, bidi, zero-width, emoji, CJK
    "x" * 400,
]


def test_every_typed_field_renders_any_text_and_keeps_it():
    fields, failures = 0, []
    for cls in registry.select("all"):
        phone = MockPhone()
        phone.reset(0)
        task = cls(seed=0)
        task.initialize_task(phone)
        try:
            for action in task.oracle(UI(phone)):
                if action.type == "input_text" and action.x is not None:
                    fields += 1
                    for text in TEXTS:
                        try:
                            phone.act(Action("input_text", text=text, x=action.x, y=action.y, clear=True))
                            phone.screenshot()
                            if "line two" in text and "line two" not in phone.ui_tree():
                                failures.append((cls.name(), "typed text missing from the UI tree"))
                        except Exception as exc:  # any exception here is the bug this test is for
                            failures.append((cls.name(), repr(text[:12]), f"{type(exc).__name__}: {exc}"))
                    action = Action("input_text", text=action.text, x=action.x, y=action.y, clear=True)
                phone.act(action)
        finally:
            phone.close()
    assert fields >= 50  # the oracles type into that many fields: the fuzz reached them
    assert not failures, failures[:10]

