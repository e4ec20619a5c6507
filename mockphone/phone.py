"""MockPhone: a deterministic, resettable Android-like phone.

``reset(seed)`` rebuilds every app's state from the seed; ``observe()`` returns a
``datalake.types.Observation`` (PNG screenshot and uiautomator XML rendered from one
laid-out tree); ``act(action)`` applies one action of the shared vocabulary and
advances the simulated clock; ``state(app)`` / ``system_state()`` are the narrow,
read-only (copied) views verifiers use. Same seed + same actions give byte-identical
screenshots and trees.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from datalake.types import Action, Device, Observation
from mockphone import fonts, gestures, i18n, shell, tools, uixml
from mockphone import skin as skins
from mockphone.frames import FrameCache
from mockphone.apps import default_apps
from mockphone.apps.base import App
from mockphone.errors import PhoneClosed, UnknownApp
from mockphone.gestures import ActResult
from mockphone.layout import Display, Node
from mockphone.navigation import Navigator
from mockphone.skin import Skin
from mockphone.screen import LAUNCHER, SYSTEMUI, compose
from mockphone.system import SystemState
from mockphone.widgets import Page, View

Tool = Callable[["MockPhone", dict[str, Any]], str]


@dataclass(frozen=True)
class RawObservation:
    """``observe(encoding="raw")``: the screen as pixels instead of PNG bytes, for in-process RL."""

    pixels: np.ndarray  # (height, width, 3) uint8, read-only
    ui_tree: str
    package: str
    activity: str


class MockPhone:
    """A simulated phone. ``perturbations``: a :class:`mockphone.perturb.Perturbations`, a profile name
    (``none``, ``light``, ``real-like``, ``heavy``), a profile YAML path, or None. ``locale``: ``en-US``
    or ``zh-CN`` (every visible string of the system and the apps, see :mod:`mockphone.i18n`). ``skin``:
    ``stock`` (default) or ``realish``, the look (:mod:`mockphone.skin`); ``display`` overrides its screen."""

    kind = "mock"

    def __init__(self, seed: int = 0, display: Display | None = None, apps: list[type[App]] | None = None,
                 perturbations: Any = None, locale: str = i18n.DEFAULT, skin: str | Skin | None = None) -> None:
        self.locale = i18n.check(locale)
        self.skin = skins.get(skin)
        self.display = display or self.skin.display
        self._app_classes = list(apps) if apps is not None else default_apps()
        if isinstance(perturbations, str):
            from mockphone.perturb import load_profile

            perturbations = load_profile(perturbations)
        self.perturbations = perturbations
        self.tools: dict[str, Tool] = {}
        tools.install(self)  # the documented tool set (mockphone.tools)
        self._frames = FrameCache()
        self._closed = False
        self.reset(seed)

    # --- the Phone protocol -----------------------------------------------------------

    def reset(self, seed: int = 0) -> None:
        """Back to the launcher with fresh app state derived from ``seed`` (exact: no leftovers)."""
        self._closed = False
        self.seed = seed
        self.system = SystemState()
        self.apps: dict[str, App] = {}
        for cls in self._app_classes:
            app = cls(self)
            app.reset(random.Random(f"{seed}:{cls.name}"))
            self.apps[cls.package] = app
        self.nav = Navigator(self)
        self.files: dict[str, str] = {}  # files the shell wrote (uiautomator dump)
        self.event_log: Callable[[MockPhone, Action], None] | None = None  # started by Task.initialize_task
        self._root: Node | None = None
        self._png: bytes | None = None
        self.perturber = self.perturbations.start(self, seed) if self.perturbations is not None else None

    def observe(self, encoding: str = "png") -> Observation | RawObservation:
        """The screen as PNG bytes (``encoding="png"``) or, for in-process RL, as pixels (``"raw"``: no PNG)."""
        self._check_open()
        package = SYSTEMUI if self.nav.overlay == "shade" else (self.nav.foreground or LAUNCHER)
        if encoding == "raw":
            return RawObservation(pixels=self.pixels(), ui_tree=uixml.dump(self.root), package=package,
                                  activity=self.activity())
        if encoding != "png":
            raise ValueError(f"observe(encoding=...) takes 'png' or 'raw', not {encoding!r}")
        return Observation(screenshot=self.screenshot(), ui_tree=uixml.dump(self.root), package=package,
                           activity=self.activity())

    def act(self, action: Action) -> ActResult:
        self._check_open()
        result = shell.act(self, action) if action.type == "shell" else gestures.dispatch(self, action)
        seconds = action.seconds if action.type == "wait" and action.seconds is not None else (
            2 if action.type == "wait" else 1)
        self.advance(seconds)
        if self.event_log is not None:  # mockphone.tasks.events: every action and the state it left, in order
            self.event_log(self, action)
        return result

    def close(self) -> None:
        self._closed = True
        self.invalidate()

    # --- reads ------------------------------------------------------------------------

    @property
    def root(self) -> Node:
        if self._root is None:
            with fonts.family(self.skin.font):
                self._root = compose(self)
        return self._root

    def ui_tree(self) -> str:
        """The uiautomator XML alone (cheaper than ``observe()``: no PNG)."""
        self._check_open()
        return uixml.dump(self.root)

    def screenshot(self) -> bytes:
        """PNG bytes of the current screen (cached until the next action changes it)."""
        self._check_open()
        if self._png is None:
            root = self.root
            with fonts.family(self.skin.font):
                self._png = self._frames.png(self, root)
        return self._png

    def pixels(self) -> np.ndarray:
        """The screen as a read-only ``(height, width, 3)`` uint8 array: no PNG, no copy (a view of the frame that
        keeps showing this screen after later steps; see ``mockphone.frames``)."""
        self._check_open()
        root = self.root
        with fonts.family(self.skin.font):
            return self._frames.pixels(self, root)

    def activity(self) -> str:
        nav = self.nav
        if nav.overlay is not None or nav.foreground is None:
            return ".NexusLauncherActivity" if nav.overlay != "shade" else ".StatusBar"
        return self.apps[nav.foreground].activity(nav.top_page(nav.foreground))

    def device(self) -> Device:
        """The screen an episode on this phone records (``kind="mock"``)."""
        d = self.display
        extra = {"dpi": d.dpi, "seed": self.seed}
        if self.skin.name != "stock":
            extra["skin"] = self.skin.name
        return Device(width=d.width, height=d.height, kind="mock", extra=extra)

    def perturbation_meta(self) -> dict[str, Any]:
        """What an episode on this phone records as ``meta["perturbation"]``: profile name and seed."""
        if self.perturbations is None:
            return {"profile": "none", "seed": self.seed}
        return self.perturbations.meta(self.seed)

    def state(self, app: str) -> Any:
        """A copy of one app's state dataclass (by short name, label or package)."""
        return copy.deepcopy(self.app(app).state)

    def system_state(self) -> SystemState:
        return copy.deepcopy(self.system)

    # --- apps ---------------------------------------------------------------------------

    def app(self, name: str) -> App:
        key = name.strip().lower()
        for app in self.apps.values():
            if key in (app.name, app.package.lower(), app.label.lower(), i18n.t(app.label, self.locale), *app.aliases):
                return app
        raise UnknownApp(f"no app named {name!r} on this phone (installed: {', '.join(self.app_names())})")

    def app_names(self) -> list[str]:
        return sorted(app.name for app in self.apps.values())

    def has_package(self, package: str) -> bool:
        return package in self.apps

    def app_by_package(self, package: str) -> App:
        return self.apps[package]

    def launcher_apps(self) -> list[App]:
        return sorted(self.apps.values(), key=lambda a: a.label.lower())

    def contact_names(self) -> list[str]:
        """Names in the Contacts app (other apps draw their people from here), or [] without it."""
        app = self.apps.get("com.android.contacts")
        return [c.name for c in app.state.contacts] if app is not None and app.state is not None else []

    def view_of(self, package: str, page: Page) -> View:
        if self.perturber is not None:
            hijack = self.perturber.view(package, page)
            if hijack is not None:
                return i18n.localize_view(hijack, self.locale)
        return i18n.localize_view(self.apps[package].view(page), self.locale)

    def put_setting(self, key: str, value: Any) -> None:
        if isinstance(value, bool):
            value = "1" if value else "0"
        self.system.settings[key] = str(value)

    def register_tool(self, name: str, fn: Tool) -> None:
        """Make ``tool`` actions named ``name`` call ``fn(phone, args) -> str``."""
        self.tools[name] = fn

    def advance(self, seconds: float) -> None:
        """Move the simulated clock; toasts expire and slow loads finish."""
        self.system.clock_s += int(round(seconds))
        self.nav.expire(self.system.clock_s)
        if self.perturber is not None:
            self.perturber.tick()
        self.invalidate()

    def invalidate(self) -> None:
        self._root = None
        self._png = None

    def _check_open(self) -> None:
        if self._closed:
            raise PhoneClosed("this MockPhone was closed; call reset(seed) to use it again")
