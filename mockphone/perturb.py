"""Seeded perturbations that make the mock phone behave more like real apps.

* permission dialogs (non-cancelable; "Allow" / "Don't allow");
* ads / promo popups (closable);
* slow loads: a page shows a spinner until the simulated clock has advanced;
* network errors: a page shows "No connection" with a Retry button;
* incoming messages: a heads-up banner covers the top of the screen for a few seconds
  (tap opens the conversation, swipe up dismisses it) and the notification stays in the shade;
* the real-app gaps: an account sign-in prompt in apps with accounts, a runtime
  permission (location), a "rate this app" dialog, and a network error in the middle of
  checkout (checkout and payment pages).

Rates (``Perturbations``; profiles ``none``, ``light``, ``real-like``, ``heavy`` or a YAML
of per-kind rates, see ``load_profile``) are probabilities per opportunity, each drawn on
its own:

=====================  ==========================================================
kind                   opportunity (one draw each)
=====================  ==========================================================
``permission``         an app's first launch in the episode
``runtime_permission`` an app's first launch in the episode
``login``              an account app's first launch in the episode (``ACCOUNT_APPS``)
``rate_app``           an app's first launch in the episode
``notification``       a page load (a launch shows its top page: that is a load too)
``checkout_error``     a load of a checkout or payment page (``CHECKOUT_PAGES``)
``slow``               a page load that did not fail at checkout
``network_error``      the same load (one draw: ``slow`` below its rate, then this)
``ad``                 the same load (``slow + network_error + ad`` must stay <= 1)
=====================  ==========================================================

A mock phone stands for a phone in use, not a fresh install: prompts real apps show after
a few launches (location permission, rate this app) can come at the first launch of an
episode. Dialogs drawn for one launch queue and show one after another (permission,
runtime permission, sign-in, rate, then an ad), each when the one before is answered.
``Perturber.opportunities`` and ``Perturber.shown`` count both sides per kind.

Each draw has its own ``random.Random``, keyed by the phone's seed, the kind and where it
happens (the app, the page and how many times it loaded), so the same seed and actions
give the same interruptions, and what happens in one app never shifts another's draws
(a detour into a wrong app leaves the rest of the episode as it was). ``meta(seed)`` is
what an episode records (``{"profile": ..., "seed": ...}``). Episodes of different tasks
on the same seed share the draws of the apps they both open.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockphone import widgets as ui
from mockphone.apps.messages import Message
from mockphone.errors import BadPerturbationProfile
from mockphone.widgets import Dialog, Page, View

if TYPE_CHECKING:
    from mockphone.apps.base import App
    from mockphone.phone import MockPhone

PROMOS = ("Your parcel is out for delivery today.", "Your verification code is 551203.",
          "Reminder: your appointment is tomorrow.", "You have 1 new voicemail.")
ADS = (("Limited offer!", "Get 3 months of Premium for free."), ("New feature", "Try dark mode for widgets."),
       ("Rate us", "Enjoying the app? Leave a review."))
ACCOUNT_APPS = frozenset({"com.phoneloop.shop", "com.phoneloop.bank", "com.phoneloop.mail",
                          "com.phoneloop.superapp"})  # apps that nag you to sign in
CHECKOUT_PAGES = frozenset({"checkout", "food_basket", "payment"})
ONE_OFF = ("permission", "runtime_permission", "login", "rate_app")  # at an app's first launch, in this order
KINDS = ("permission", "ad", "slow", "network_error", "notification", "login", "runtime_permission", "rate_app",
         "checkout_error")


@dataclass(frozen=True)
class Perturbations:
    """Rates are probabilities per opportunity (see the module docstring's table); 0 disables a kind."""

    permission_rate: float = 0.0
    ad_rate: float = 0.0
    slow_rate: float = 0.0
    network_error_rate: float = 0.0
    notification_rate: float = 0.0
    login_rate: float = 0.0
    runtime_permission_rate: float = 0.0
    rate_app_rate: float = 0.0
    checkout_error_rate: float = 0.0
    slow_seconds: int = 3
    name: str = "custom"  # the profile name (or YAML path) episodes record

    def __post_init__(self) -> None:
        for kind in KINDS:
            value = getattr(self, f"{kind}_rate")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"Perturbations.{kind}_rate must be in [0, 1], got {value!r}")
        if self.slow_rate + self.network_error_rate + self.ad_rate > 1.0 + 1e-9:
            raise ValueError("Perturbations: slow_rate + network_error_rate + ad_rate share one draw per page "
                             f"load and must sum to at most 1, got {self.slow_rate + self.network_error_rate + self.ad_rate}")
        if self.slow_seconds < 1:
            raise ValueError(f"Perturbations.slow_seconds must be at least 1, got {self.slow_seconds!r}")

    @classmethod
    def realistic(cls) -> Perturbations:
        """A mix that interrupts a fair share of episodes without making them tedious."""
        return cls(permission_rate=0.5, ad_rate=0.1, slow_rate=0.15, network_error_rate=0.05, notification_rate=0.05)

    def rates(self) -> dict[str, float]:
        return {kind: getattr(self, f"{kind}_rate") for kind in KINDS}

    def meta(self, seed: int) -> dict[str, Any]:
        """What an episode records: the profile and the seed of its interruptions (rates for custom ones)."""
        out: dict[str, Any] = {"profile": self.name, "seed": seed}
        if self.name not in PROFILES:
            out["rates"] = self.rates()
        return out

    def start(self, phone: MockPhone, seed: int) -> Perturber:
        return Perturber(self, phone, seed)


PROFILES: dict[str, Perturbations] = {
    "none": Perturbations(name="none"),
    "light": Perturbations(permission_rate=0.2, ad_rate=0.05, slow_rate=0.05, network_error_rate=0.02,
                           notification_rate=0.02, login_rate=0.05, runtime_permission_rate=0.1, rate_app_rate=0.03,
                           checkout_error_rate=0.05, name="light"),
    "real-like": Perturbations(permission_rate=0.5, ad_rate=0.1, slow_rate=0.15, network_error_rate=0.05,
                               notification_rate=0.05, login_rate=0.2, runtime_permission_rate=0.3,
                               rate_app_rate=0.1, checkout_error_rate=0.15, name="real-like"),
    "heavy": Perturbations(permission_rate=1.0, ad_rate=0.3, slow_rate=0.3, network_error_rate=0.15,
                           notification_rate=0.2, login_rate=0.5, runtime_permission_rate=0.7, rate_app_rate=0.3,
                           checkout_error_rate=0.5, name="heavy"),
}


def load_profile(spec: str | Perturbations | None) -> Perturbations:
    """A profile by name (``none``, ``light``, ``real-like``, ``heavy``) or a YAML file of per-kind rates::

        base: light            # optional: start from a profile
        permission: 0.8        # any of the kinds in KINDS, each in [0, 1]
        checkout_error: 0.5
        slow_seconds: 4        # optional
    """
    if spec is None:
        return PROFILES["none"]
    if isinstance(spec, Perturbations):
        return spec
    if spec in PROFILES:
        return PROFILES[spec]
    if spec.endswith((".yaml", ".yml")):
        return _from_yaml(Path(spec))
    raise BadPerturbationProfile(f"unknown perturbation profile {spec!r}: use one of {', '.join(PROFILES)} "
                                 "or a .yaml file of per-kind rates")


def _from_yaml(path: Path) -> Perturbations:
    import yaml

    try:
        root = yaml.compose(path.read_text())
    except OSError as exc:
        raise BadPerturbationProfile(f"{path}: cannot read the perturbation profile: {exc}") from None
    except yaml.YAMLError as exc:
        raise BadPerturbationProfile(f"{path}: not valid YAML: {exc}") from None
    if root is None:
        raise BadPerturbationProfile(f"{path}: empty perturbation profile")
    if not isinstance(root, yaml.MappingNode):
        raise BadPerturbationProfile(f"{path}, line {root.start_mark.line + 1}: expected a mapping of kind: rate")
    config, values = PROFILES["none"], {}
    for key_node, value_node in root.value:
        key, line = key_node.value, key_node.start_mark.line + 1
        value = yaml.safe_load(yaml.serialize(value_node))
        if key == "base":
            if value not in PROFILES:
                raise BadPerturbationProfile(f"{path}, line {line}: unknown base profile {value!r} "
                                             f"(one of {', '.join(PROFILES)})")
            config = PROFILES[value]
        elif key == "slow_seconds":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BadPerturbationProfile(f"{path}, line {line}: slow_seconds must be an integer >= 1, "
                                             f"got {value!r}")
            values["slow_seconds"] = value
        elif key in KINDS:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise BadPerturbationProfile(f"{path}, line {line}: rate of {key!r} must be a number in [0, 1], "
                                             f"got {value!r}")
            values[f"{key}_rate"] = float(value)
        else:
            raise BadPerturbationProfile(f"{path}, line {line}: unknown perturbation kind {key!r} "
                                         f"(kinds: {', '.join(KINDS)}; also base, slow_seconds)")
    return replace(config, **values, name=str(path))


DIALOG_KINDS = {"perm_dialog": "permission", "runtime_perm": "runtime_permission", "login_prompt": "login",
                "rate_dialog": "rate_app", "ad_popup": "ad"}  # dialog rid -> kind, for ``Perturber.shown``


@dataclass
class Perturber:
    """One episode's interruptions on ``phone`` (built by ``MockPhone.reset``)."""

    config: Perturbations
    phone: MockPhone
    seed: int
    launched: set[str] = field(default_factory=set)  # packages launched in this episode
    loads: dict[str, int] = field(default_factory=dict)  # "package/page" -> loads so far
    queue: list[Dialog] = field(default_factory=list)  # dialogs waiting for the one on screen
    opportunities: dict[str, int] = field(default_factory=dict)  # kind -> draws made
    shown: dict[str, int] = field(default_factory=dict)  # kind -> times it happened
    # Keyed by id(page), and holding the page: a page freed while its id is still a key would hand its
    # spinner or error to the next page allocated at the same address (what made replays order-dependent).
    loading: dict[int, tuple[Page, int]] = field(default_factory=dict)  # id -> (page, clock second it loads)
    failed: dict[int, Page] = field(default_factory=dict)  # id -> page showing a network error

    def rng(self, kind: str, where: str) -> random.Random:
        """The random stream of one draw: the phone's seed, the kind, and where it happens."""
        return random.Random(f"perturb:{self.seed}:{kind}:{where}")

    def _draw(self, kind: str, where: str, rate: float) -> bool:
        self.opportunities[kind] = self.opportunities.get(kind, 0) + 1
        return self.rng(kind, where).random() < rate

    def _count(self, kind: str) -> None:
        self.shown[kind] = self.shown.get(kind, 0) + 1

    def on_open(self, app: App) -> None:
        self.queue.clear()  # what was waiting for the last launch went with it
        pkg, c = app.package, self.config
        if pkg not in self.launched:
            self.launched.add(pkg)
            if c.permission_rate and self._draw("permission", pkg, c.permission_rate):
                self._ask_permission(app)
            if c.runtime_permission_rate and self._draw("runtime_permission", pkg, c.runtime_permission_rate):
                self._ask_location(app)
            if c.login_rate and pkg in ACCOUNT_APPS and self._draw("login", pkg, c.login_rate):
                self._show(app, f"Sign in to {app.label}", "Sign in to back up and sync your data.",
                           (("Not now", None), ("Sign in", lambda: self.phone.nav.toast("Sign-in is not available"))),
                           "login_prompt")
            if c.rate_app_rate and self._draw("rate_app", pkg, c.rate_app_rate):
                self._show(app, f"Enjoying {app.label}?", "Tap a star to rate it on the Play Store.",
                           (("No thanks", None), ("Rate", None)), "rate_dialog")
        page = self.phone.nav.top_page(pkg)
        if page is not None and id(page) not in self.loading and id(page) not in self.failed:
            self.on_push(pkg, page)

    def _present(self, dialog: Dialog) -> None:
        """Show ``dialog`` now, or after the dialogs already waiting (each button then shows the next)."""
        def then(callback):
            def run():
                if callback is not None:
                    callback()
                self._next()
            return run

        dialog = replace(dialog, buttons=tuple((label, then(cb)) for label, cb in dialog.buttons))
        if self.phone.nav.dialog is None and not self.queue:
            self._display(dialog)
        else:
            self.queue.append(dialog)

    def _next(self) -> None:
        if self.queue and self.phone.nav.dialog is None:
            self._display(self.queue.pop(0))

    def _display(self, dialog: Dialog) -> None:
        self.phone.nav.show_dialog(dialog)
        self._count(DIALOG_KINDS.get(dialog.rid, dialog.rid))

    def _show(self, app: App, title: str, message: str, buttons: tuple, rid: str) -> None:
        self._present(Dialog(title, message, buttons, cancelable=False, package=app.package, rid=rid))

    def _ask_permission(self, app: App) -> None:
        question = app.permissions[0] if app.permissions else f"Allow {app.label} to send you notifications?"

        def answer(granted: bool):
            return lambda: self.phone.system.permissions.__setitem__(app.package, granted)

        self._present(Dialog(question, "", (("Don't allow", answer(False)), ("Allow", answer(True))),
                             cancelable=False, package="com.android.permissioncontroller", rid="perm_dialog"))

    def _ask_location(self, app: App) -> None:
        def grant(value: bool):
            return lambda: self.phone.system.permissions.__setitem__(f"{app.package}:location", value)

        self._present(Dialog(
            f"Allow {app.label} to access this device's location?", "",
            (("While using the app", grant(True)), ("Only this time", grant(True)), ("Don't allow", grant(False))),
            cancelable=False, package="com.android.permissioncontroller", rid="runtime_perm"))

    def on_push(self, package: str, page: Page) -> None:
        c = self.config
        key = f"{package}/{page.name}"
        n = self.loads[key] = self.loads.get(key, 0) + 1
        where = f"{key}/{n}"
        if c.notification_rate and self._draw("notification", where, c.notification_rate):
            self._incoming_message(self.rng("notification_text", where))
        if c.checkout_error_rate and page.name in CHECKOUT_PAGES and \
                self._draw("checkout_error", where, c.checkout_error_rate):
            self.failed[id(page)] = page  # the network drops in the middle of checkout
            self._count("checkout_error")
            return
        for kind in ("slow", "network_error", "ad"):
            if getattr(c, f"{kind}_rate"):
                self.opportunities[kind] = self.opportunities.get(kind, 0) + 1
        draw = self.rng("load", where).random()
        if draw < c.slow_rate:
            self.loading[id(page)] = (page, self.phone.system.clock_s + c.slow_seconds)
            self._count("slow")
        elif draw < c.slow_rate + c.network_error_rate:
            self.failed[id(page)] = page
            self._count("network_error")
        elif draw < c.slow_rate + c.network_error_rate + c.ad_rate:
            title, message = ADS[self.rng("ad_text", where).randrange(len(ADS))]
            self._present(Dialog(title, message, (("Close", None),), cancelable=False, package=package,
                                 rid="ad_popup"))

    def _incoming_message(self, rng: random.Random) -> None:
        # from numbers that are not contacts, so no task's conversation changes under it
        sender = f"+1 555-01{rng.randrange(100):02d}"
        text = PROMOS[rng.randrange(len(PROMOS))]
        messages = "com.google.android.apps.messaging"
        if self.phone.has_package(messages):
            self.phone.app_by_package(messages).state.thread(sender).append(Message(sender, text))
        self.phone.nav.notify(messages, sender, text, "thread", contact=sender)
        self.phone.nav.show_heads_up(self.phone.system.notifications[0])
        self._count("notification")

    def view(self, package: str, page: Page) -> View | None:
        """A replacement view while ``page`` is loading or failed; None to show the real one."""
        key = id(page)
        if key in self.loading:
            if self.phone.system.clock_s < self.loading[key][1]:
                return View(self.phone.app_by_package(package).label, loading=True)
            del self.loading[key]
        if key in self.failed:
            return View(self.phone.app_by_package(package).label, body=(
                ui.text("No internet connection", style="title", rid="error_title"),
                ui.text("Check your connection and try again.", style="caption", rid="error_message"),
                ui.button("Retry", lambda: self.failed.pop(key, None), rid="retry"),
            ))
        return None

    def tick(self) -> None:
        """Nothing to do per tick: loading ends by comparing the clock in ``view``."""
