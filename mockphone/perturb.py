"""Seeded perturbations that make the mock phone behave more like real apps.

* permission dialogs the first time an app opens (non-cancelable; "Allow" / "Don't allow");
* ads / promo popups on app launch or page navigation (closable);
* slow loads: a page shows a spinner until the simulated clock has advanced;
* network errors: a page shows "No connection" with a Retry button;
* incoming messages: a heads-up banner covers the top of the screen for a few seconds
  (tap opens the conversation, swipe up dismisses it) and the notification stays in the shade;
* the real-app gaps: an account sign-in prompt in apps with accounts, a runtime
  permission (location) the second time an app opens, a "rate this app" dialog from
  the third launch, and a network error in the middle of checkout (checkout and
  payment pages).

Profiles (``none``, ``light``, ``real-like``, ``heavy``) or a YAML of per-kind rates
(see ``load_profile``) build a :class:`Perturbations`; ``meta(seed)`` is what an
episode records (``{"profile": ..., "seed": ...}``).

Every draw comes from one ``random.Random`` seeded from the phone's seed, in the
order events happen, so the same seed and actions give the same interruptions.
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
KINDS = ("permission", "ad", "slow", "network_error", "notification", "login", "runtime_permission", "rate_app",
         "checkout_error")


@dataclass(frozen=True)
class Perturbations:
    """Rates are probabilities per event (app launch or page load); 0 disables a kind.

    ``login_rate``: a sign-in prompt the first time an account app opens;
    ``runtime_permission_rate``: a location permission the second time an app opens;
    ``rate_app_rate``: "rate this app" from the third launch on (once per app);
    ``checkout_error_rate``: a network error when a checkout or payment page loads.
    """

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


@dataclass
class Perturber:
    config: Perturbations
    phone: MockPhone
    seed: int
    asked: set[str] = field(default_factory=set)
    opens: dict[str, int] = field(default_factory=dict)  # package -> launches so far
    nagged: set[str] = field(default_factory=set)  # (kind:package) of one-off prompts already drawn
    # Keyed by id(page), and holding the page: a page freed while its id is still a key would hand its
    # spinner or error to the next page allocated at the same address (what made replays order-dependent).
    loading: dict[int, tuple[Page, int]] = field(default_factory=dict)  # id -> (page, clock second it loads)
    failed: dict[int, Page] = field(default_factory=dict)  # id -> page showing a network error

    def __post_init__(self) -> None:
        self.rng = random.Random(f"perturb:{self.seed}")

    def on_open(self, app: App) -> None:
        count = self.opens[app.package] = self.opens.get(app.package, 0) + 1
        if app.package not in self.asked:
            self.asked.add(app.package)
            if self.rng.random() < self.config.permission_rate:
                self._ask_permission(app)
                return
        if self._real_app_gap(app, count):
            return
        page = self.phone.nav.top_page(app.package)
        if page is not None and id(page) not in self.loading and id(page) not in self.failed:
            self.on_push(app.package, page)

    def _real_app_gap(self, app: App, count: int) -> bool:
        """Sign-in prompt (first launch), runtime permission (second), rate-this-app (third on); True if shown."""
        c, pkg = self.config, app.package
        if c.login_rate and pkg in ACCOUNT_APPS and self._once("login", pkg, c.login_rate):
            self._show(app, f"Sign in to {app.label}", "Sign in to back up and sync your data.",
                       (("Not now", None), ("Sign in", lambda: self.phone.nav.toast("Sign-in is not available"))),
                       "login_prompt")
            return True
        if c.runtime_permission_rate and count == 2 and self._once("runtime", pkg, c.runtime_permission_rate):
            def grant(value: bool):
                return lambda: self.phone.system.permissions.__setitem__(f"{pkg}:location", value)

            self.phone.nav.show_dialog(Dialog(
                f"Allow {app.label} to access this device's location?", "",
                (("While using the app", grant(True)), ("Only this time", grant(True)), ("Don't allow", grant(False))),
                cancelable=False, package="com.android.permissioncontroller", rid="runtime_perm"))
            return True
        if c.rate_app_rate and count >= 3 and self._once("rate", pkg, c.rate_app_rate):
            self._show(app, f"Enjoying {app.label}?", "Tap a star to rate it on the Play Store.",
                       (("No thanks", None), ("Rate", None)), "rate_dialog")
            return True
        return False

    def _once(self, kind: str, package: str, rate: float) -> bool:
        key = f"{kind}:{package}"
        if key in self.nagged:
            return False
        self.nagged.add(key)
        return self.rng.random() < rate

    def _show(self, app: App, title: str, message: str, buttons: tuple, rid: str) -> None:
        self.phone.nav.show_dialog(Dialog(title, message, buttons, cancelable=False, package=app.package, rid=rid))

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
        if c.checkout_error_rate and page.name in CHECKOUT_PAGES and self.rng.random() < c.checkout_error_rate:
            self.failed[id(page)] = page  # the network drops in the middle of checkout
            return
        draw = self.rng.random()
        if draw < c.slow_rate:
            self.loading[id(page)] = (page, self.phone.system.clock_s + c.slow_seconds)
        elif draw < c.slow_rate + c.network_error_rate:
            self.failed[id(page)] = page
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
