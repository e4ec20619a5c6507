"""Real-like phones: mock apps that stand in for real ones, reachable only as a real phone is.

A real-like phone is a :class:`MockPhone` with the ``realish`` skin (another screen, density, theme,
fonts, status bar and gesture bar: :mod:`mockphone.skin`), the ``real-like`` perturbation profile
(permission dialogs, logins, ads, slow loads, network errors at real-like rates), served over the
virtual adb server with real-like latencies (a screencap ~0.8 s, a dump ~1.2 s, 0.3 s transitions,
late grabs). A collector or a rollout drives it through ``phones.adb_phone.AdbPhone``, so it
sees pixels, the UI dump and nothing else: no verifier, no state. Rewards on such a phone come
from an outcome judge (``phones.judge``) or a person, as on a real phone.

``phoneloop device serve --real-like`` serves them from the command line.
"""

from __future__ import annotations

from typing import Any

from mockphone import i18n
from mockphone.adb import VirtualAdbServer
from mockphone.phone import MockPhone

SKIN = "realish"
PERTURBATIONS = "real-like"
# what the served device does (VirtualDevice.configure), as a mid-range phone over USB does
LATENCIES: dict[str, Any] = {"capture_latency": 0.8, "dump_latency": 1.2, "transition": 0.3, "slow_grabs": 0.05,
                             "grab_jitter": 0.2}
DEVICE = {"nav_mode": "gestural", **LATENCIES}


def phone(seed: int = 0, locale: str = i18n.DEFAULT, perturbations: Any = PERTURBATIONS) -> MockPhone:
    """One real-like phone (for in-process use; serve it with :func:`server` to hide its state)."""
    return MockPhone(seed=seed, skin=SKIN, perturbations=perturbations, locale=locale)


def server(phones: int | list[MockPhone] = 1, port: int = 0, latency: bool = True,
           perturbations: Any = PERTURBATIONS, locale: str = i18n.DEFAULT) -> VirtualAdbServer:
    """A virtual adb server of real-like phones (seeded 0..N-1, or the phones given), not yet started.

    ``latency=False`` keeps the skin, the perturbations and gesture navigation but answers at once
    (tests and quick runs). Its devices refuse ``phoneloop task check``: a task can be started on
    them (the operator's set-up, as seeding an account on a real phone), never verified."""
    mocks = ([phone(i, locale, perturbations) for i in range(phones)] if isinstance(phones, int) else list(phones))
    out = VirtualAdbServer(phones=mocks, port=port)
    settings = {**(DEVICE if latency else {"nav_mode": DEVICE["nav_mode"]}), "verifier": False}
    for device in out.devices:
        device.configure(**settings)
    return out
