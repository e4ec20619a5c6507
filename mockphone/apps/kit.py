"""Small building blocks the newer apps share: a tab bar, and switching tabs on the back stack."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockphone import widgets as ui
from mockphone.widgets import Page

if TYPE_CHECKING:
    from mockphone.apps.base import App


def tab_bar(app: App, current: str, tabs: tuple[tuple[str, str], ...]) -> ui.Widget:
    """A row of chips, one per ``(page name, label)``; the current one is selected (rid ``tab_<page>``)."""
    return ui.row(*(ui.chip(label, name == current, (lambda n=name: switch_tab(app, n)), rid=f"tab_{name}")
                    for name, label in tabs))


def switch_tab(app: App, page: str) -> None:
    """Show tab ``page`` as the root of the app's back stack (tabs do not stack on each other)."""
    app.phone.nav.stacks[app.package] = [Page(page)]
    app.phone.nav.focus = None
    app.phone.invalidate()


def tr(app: App, key: str, **values: object) -> str:
    """``key`` formatted with ``values`` in the phone's locale: its ``catalog_zh.FORMATS`` entry on a zh-CN phone.

    Composed strings (a place's "Cafe · 1.2 km · ★4.5") are built here rather than matched as
    catalog templates, so no loose pattern ever rewrites another app's data. Each value that is
    a catalog word ("Cafe", "Economy") is shown translated; data stays as it is.
    """
    from mockphone import i18n
    from mockphone.apps.catalog_zh import FORMATS

    locale = getattr(app.phone, "locale", i18n.DEFAULT)
    fmt = FORMATS.get(key, key) if locale == "zh-CN" else key
    return fmt.format(**{k: i18n.t(str(v), locale) for k, v in values.items()})
