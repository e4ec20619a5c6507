"""Small helpers shared by the mockphone tests: find elements in the dumped tree and act on them."""

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone.tasks.base import Task


class WifiOff(Task):
    """A one-line task for tests of the task machinery: turn off Wi-Fi (by shell), checked by its setting."""

    template = "Turn off Wi-Fi."
    app_names = ("settings",)
    allowed = ("system.settings[global/wifi_on]",)

    def setup(self, phone):
        phone.put_setting("global/wifi_on", "1")

    def check(self, phone):
        return float(phone.system_state().setting("global/wifi_on") == "0")

    def oracle(self, ui):
        yield Action("shell", command="svc wifi disable")


def elements(phone):
    return parse_ui_tree(phone.ui_tree())


def find(phone, rid=None, text=None, desc=None):
    for el in elements(phone):
        if rid is not None and not el.resource_id.endswith(f"/{rid}"):
            continue
        if text is not None and el.text != text:
            continue
        if desc is not None and el.content_desc != desc:
            continue
        return el
    raise AssertionError(f"no element rid={rid} text={text} desc={desc} in {[e.text for e in elements(phone)]}")


def tap(phone, **query):
    x, y = find(phone, **query).center
    return phone.act(Action("tap", x=x, y=y))


def long_press(phone, **query):
    x, y = find(phone, **query).center
    return phone.act(Action("long_press", x=x, y=y))
