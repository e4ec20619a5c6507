"""Navigation state of a MockPhone: per-app back stacks, foreground app, recents, shade, dialog, focus, toast.

Apps, gestures and the shell move around through these methods; the phone owns one
``Navigator`` (``phone.nav``) that ``reset`` replaces.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockphone.system import Notification
from mockphone.widgets import Dialog, Page

if TYPE_CHECKING:
    from mockphone.apps.base import App
    from mockphone.phone import MockPhone

TOAST_SECONDS = 3
HEADS_UP_SECONDS = 5


class Navigator:
    """Where the user is: which app is in front, each app's pages, and what covers the screen."""

    def __init__(self, phone: MockPhone) -> None:
        self.phone = phone
        self.stacks: dict[str, list[Page]] = {}
        self.foreground: str | None = None
        self.recents: list[str] = []
        self.overlay: str | None = None  # "shade" or "recents"
        self.shade_scroll = 0
        self.dialog: Dialog | None = None
        self.focus: str | None = None  # resource id of the focused edit on the foreground page
        self.toast_text = ""
        self._toast_until = 0
        self.heads_up: Notification | None = None  # a notification banner over the top of the screen
        self._heads_up_until = 0

    def expire(self, clock_s: int) -> None:
        """Drop the toast and the heads-up banner once their time is over."""
        if self.toast_text and clock_s >= self._toast_until:
            self.toast_text = ""
        if self.heads_up is not None and clock_s >= self._heads_up_until:
            self.heads_up = None

    def show_heads_up(self, note: Notification, seconds: int = HEADS_UP_SECONDS) -> None:
        self.heads_up = note
        self._heads_up_until = self.phone.system.clock_s + seconds

    def top_page(self, package: str) -> Page | None:
        stack = self.stacks.get(package)
        return stack[-1] if stack else None

    # --- navigation (used by gestures, shell and app callbacks) ---------------------

    def open_app(self, name: str, page: Page | None = None) -> App:
        app = self.phone.app(name)
        self._leave()
        if page is not None:
            self.stacks[app.package] = [Page(app.home), page] if page.name != app.home else [page]
        elif not self.stacks.get(app.package):
            self.stacks[app.package] = [Page(app.home)]
        self.foreground = app.package
        if app.package in self.recents:
            self.recents.remove(app.package)
        self.recents.append(app.package)
        self.phone.system.opened.append(app.package)
        if self.phone.perturber is not None:
            self.phone.perturber.on_open(app)
        return app

    def push(self, package: str, page: Page) -> None:
        self.stacks.setdefault(package, []).append(page)
        self.focus = None
        if self.phone.perturber is not None:
            self.phone.perturber.on_push(package, page)

    def pop(self, package: str) -> None:
        """Close the top page of ``package``; closing its last page returns to the launcher."""
        self.focus = None
        stack = self.stacks.get(package, [])
        if len(stack) > 1:
            stack.pop()
        elif self.foreground == package:
            self.stacks.pop(package, None)
            self.foreground = None

    def back(self) -> str:
        """System back: the innermost thing closes first."""
        if self.overlay is not None:
            self.overlay = None
            return "closed overlay"
        if self.dialog is not None:
            if self.dialog.cancelable:
                self.dialog = None
                return "dismissed dialog"
            return "dialog is not cancelable"
        if self.focus is not None:
            self.focus = None
            return "hid keyboard"
        if self.foreground is None:
            return "already home"
        stack = self.stacks[self.foreground]
        if len(stack) > 1:
            stack.pop()
            return "back"
        self.stacks.pop(self.foreground, None)
        self.foreground = None
        return "left app"

    def home(self) -> None:
        self._leave()
        self.foreground = None

    def force_stop(self, package: str) -> None:
        self.stacks.pop(package, None)
        if self.foreground == package:
            self.home()

    def toggle_recents(self) -> None:
        was = self.overlay == "recents"
        self._leave()
        self.overlay = None if was else "recents"

    def open_shade(self) -> None:
        self.focus = None
        self.overlay = "shade"
        self.shade_scroll = 0

    def _leave(self) -> None:
        self.overlay = None
        self.dialog = None
        self.focus = None

    def show_dialog(self, dialog: Dialog) -> None:
        self.focus = None
        self.dialog = dialog

    def press_dialog_button(self, index: int) -> None:
        dialog = self.dialog
        self.dialog = None
        if dialog is not None:
            callback = dialog.buttons[index][1]
            if callback is not None:
                callback()

    def toast(self, message: str) -> None:
        self.toast_text = message
        self._toast_until = self.phone.system.clock_s + TOAST_SECONDS

    def notify(self, package: str, title: str, text: str, page: str = "", **args: Any) -> None:
        self.phone.system.notifications.insert(0, Notification(package, title, text, page, dict(args)))

    def open_notification(self, note: Notification) -> None:
        if note in self.phone.system.notifications:
            self.phone.system.notifications.remove(note)
        self.overlay = None
        self.heads_up = None
        self.open_app(note.package, Page(note.page, dict(note.args)) if note.page else None)

    def clear_notifications(self) -> None:
        self.phone.system.notifications.clear()

    def clear_recents(self) -> None:
        """Close every app (Recents > Clear all) and land on the home screen."""
        self.recents.clear()
        self.stacks.clear()
        self.overlay = None
        self.foreground = None
