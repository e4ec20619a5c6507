"""The base of every mock app: a package, a state dataclass, pages rendered as views."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar

from mockphone.widgets import Dialog, Page, View

if TYPE_CHECKING:
    from mockphone.phone import MockPhone


class App:
    """A mock app. Subclasses set the class attributes and define ``page_<name>`` views.

    ``state`` is a plain dataclass (the only thing verifiers read); the back stack and
    typed-but-unsaved text live in the phone's :class:`Page` objects.
    """

    name: ClassVar[str]  # short name used by selectors and ``open_app`` ("shop")
    package: ClassVar[str]
    label: ClassVar[str]  # launcher label
    aliases: ClassVar[tuple[str, ...]] = ()  # other names ``open_app`` accepts ("email" for Mail)
    color: ClassVar[str] = "#1a73e8"
    home: ClassVar[str] = "main"
    permissions: ClassVar[tuple[str, ...]] = ()  # asked on first launch when perturbations allow

    def __init__(self, phone: MockPhone) -> None:
        self.phone = phone
        self.state: Any = None

    def reset(self, rng: random.Random) -> None:
        self.state = self.initial_state(rng)

    def initial_state(self, rng: random.Random) -> Any:
        raise NotImplementedError

    def view(self, page: Page) -> View:
        return getattr(self, f"page_{page.name}")(page)

    def activity(self, page: Page) -> str:
        camel = "".join(part.capitalize() for part in page.name.split("_"))
        return f".{camel}Activity"

    # --- navigation helpers used by page callbacks ---------------------------------

    def push(self, page_name: str, /, **args: Any) -> None:
        self.phone.nav.push(self.package, Page(page_name, dict(args)))

    def back(self) -> None:
        """Close this app's current page (an app's own "done", unlike the system back key)."""
        self.phone.nav.pop(self.package)

    def toast(self, message: str) -> None:
        self.phone.nav.toast(message)

    def dialog(self, title: str, message: str = "", buttons: tuple = (("OK", None),), rid: str = "") -> None:
        self.phone.nav.show_dialog(Dialog(title, message, buttons, package=self.package, rid=rid))

    def field(self, rid: str) -> str:
        """Text typed into ``rid`` on the current page of this app."""
        page = self.phone.nav.top_page(self.package)
        return page.field(rid) if page else ""

    def set_field(self, rid: str, value: str) -> None:
        page = self.phone.nav.top_page(self.package)
        if page is not None:
            page.fields[rid] = value
