"""Seeded perturbations that make the mock phone behave more like real apps.

* permission dialogs the first time an app opens (non-cancelable; "Allow" / "Don't allow");
* ads / promo popups on app launch or page navigation (closable);
* slow loads: a page shows a spinner until the simulated clock has advanced;
* network errors: a page shows "No connection" with a Retry button;
* incoming messages: a heads-up banner covers the top of the screen for a few seconds
  (tap opens the conversation, swipe up dismisses it) and the notification stays in the shade.

Every draw comes from one ``random.Random`` seeded from the phone's seed, in the
order events happen, so the same seed and actions give the same interruptions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockphone import widgets as ui
from mockphone.apps.messages import Message
from mockphone.widgets import Dialog, Page, View

if TYPE_CHECKING:
    from mockphone.apps.base import App
    from mockphone.phone import MockPhone

PROMOS = ("Your parcel is out for delivery today.", "Your verification code is 551203.",
          "Reminder: your appointment is tomorrow.", "You have 1 new voicemail.")
ADS = (("Limited offer!", "Get 3 months of Premium for free."), ("New feature", "Try dark mode for widgets."),
       ("Rate us", "Enjoying the app? Leave a review."))


@dataclass(frozen=True)
class Perturbations:
    """Rates are probabilities per event (app launch or page load); 0 disables a kind."""

    permission_rate: float = 0.0
    ad_rate: float = 0.0
    slow_rate: float = 0.0
    network_error_rate: float = 0.0
    notification_rate: float = 0.0
    slow_seconds: int = 3

    def __post_init__(self) -> None:
        for name in ("permission_rate", "ad_rate", "slow_rate", "network_error_rate", "notification_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Perturbations.{name} must be in [0, 1], got {value!r}")
        if self.slow_seconds < 1:
            raise ValueError(f"Perturbations.slow_seconds must be at least 1, got {self.slow_seconds!r}")

    @classmethod
    def realistic(cls) -> Perturbations:
        """A mix that interrupts a fair share of episodes without making them tedious."""
        return cls(permission_rate=0.5, ad_rate=0.1, slow_rate=0.15, network_error_rate=0.05, notification_rate=0.05)

    def start(self, phone: MockPhone, seed: int) -> Perturber:
        return Perturber(self, phone, seed)


@dataclass
class Perturber:
    config: Perturbations
    phone: MockPhone
    seed: int
    asked: set[str] = field(default_factory=set)
    loading: dict[int, int] = field(default_factory=dict)  # id(page) -> clock second it finishes loading
    failed: set[int] = field(default_factory=set)  # id(page) of pages showing a network error

    def __post_init__(self) -> None:
        self.rng = random.Random(f"perturb:{self.seed}")

    def on_open(self, app: App) -> None:
        if app.package not in self.asked:
            self.asked.add(app.package)
            if self.rng.random() < self.config.permission_rate:
                self._ask_permission(app)
                return
        page = self.phone.nav.top_page(app.package)
        if page is not None and id(page) not in self.loading and id(page) not in self.failed:
            self.on_push(app.package, page)

    def _ask_permission(self, app: App) -> None:
        question = app.permissions[0] if app.permissions else f"Allow {app.label} to send you notifications?"

        def answer(granted: bool):
            return lambda: self.phone.system.permissions.__setitem__(app.package, granted)

        self.phone.nav.show_dialog(Dialog(question, "", (("Don't allow", answer(False)), ("Allow", answer(True))),
                                      cancelable=False, package="com.android.permissioncontroller", rid="perm_dialog"))

    def on_push(self, package: str, page: Page) -> None:
        c = self.config
        if c.notification_rate and self.rng.random() < c.notification_rate:
            self._incoming_message()
        draw = self.rng.random()
        if draw < c.slow_rate:
            self.loading[id(page)] = self.phone.system.clock_s + c.slow_seconds
        elif draw < c.slow_rate + c.network_error_rate:
            self.failed.add(id(page))
        elif draw < c.slow_rate + c.network_error_rate + c.ad_rate:
            title, message = ADS[self.rng.randrange(len(ADS))]
            self.phone.nav.show_dialog(Dialog(title, message, (("Close", None),), cancelable=False, package=package,
                                          rid="ad_popup"))

    def _incoming_message(self) -> None:
        # from numbers that are not contacts, so no task's conversation changes under it
        sender = f"+1 555-01{self.rng.randrange(100):02d}"
        text = PROMOS[self.rng.randrange(len(PROMOS))]
        messages = "com.google.android.apps.messaging"
        if self.phone.has_package(messages):
            self.phone.app_by_package(messages).state.thread(sender).append(Message(sender, text))
        self.phone.nav.notify(messages, sender, text, "thread", contact=sender)
        self.phone.nav.show_heads_up(self.phone.system.notifications[0])

    def view(self, package: str, page: Page) -> View | None:
        """A replacement view while ``page`` is loading or failed; None to show the real one."""
        key = id(page)
        if key in self.loading:
            if self.phone.system.clock_s < self.loading[key]:
                return View(self.phone.app_by_package(package).label, loading=True)
            del self.loading[key]
        if key in self.failed:
            return View(self.phone.app_by_package(package).label, body=(
                ui.text("No internet connection", style="title", rid="error_title"),
                ui.text("Check your connection and try again.", style="caption", rid="error_message"),
                ui.button("Retry", lambda: self.failed.discard(key), rid="retry"),
            ))
        return None

    def tick(self) -> None:
        """Nothing to do per tick: loading ends by comparing the clock in ``view``."""
