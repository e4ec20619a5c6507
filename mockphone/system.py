"""Phone-wide state that is not owned by one app: clock, clipboard, notifications, settings.

Verifiers read this through ``MockPhone.system_state()`` (a copy); the agent's
``answer`` / ``ask_user`` / ``terminate`` actions are recorded here because on a
real phone they are what the user sees, not part of the trace.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

EPOCH = dt.datetime(2026, 3, 2, 9, 0, 0)  # a Monday; the simulated clock starts here

DEFAULT_SETTINGS = {
    "global/wifi_on": "1",
    "global/bluetooth_on": "0",
    "global/airplane_mode_on": "0",
    "global/mobile_data": "1",
    "system/screen_brightness": "128",
    "system/screen_off_timeout": "60000",
    "secure/ui_night_mode": "1",  # 1 = light, 2 = dark (UiModeManager values)
    "secure/location_mode": "3",
    "system/font_scale": "1.0",
    "global/auto_time": "1",
    "system/sound_mode": "normal",
    "global/do_not_disturb": "0",
}


@dataclass
class Notification:
    package: str
    title: str
    text: str
    page: str = ""  # page of the app the notification opens
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class SystemState:
    clock_s: int = 0  # seconds since EPOCH
    clipboard: str = ""
    settings: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    notifications: list[Notification] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    terminated: str | None = None
    opened: list[str] = field(default_factory=list)  # packages in the order they came to the foreground
    permissions: dict[str, bool] = field(default_factory=dict)  # package -> granted, from permission dialogs
    # every value any form field ever held, in order: (package, page, field, text), like MyPhoneBench's form_drafts
    drafts: list[tuple[str, str, str, str]] = field(default_factory=list)
    tool_calls: list[tuple[str, str, bool]] = field(default_factory=list)  # (tool, JSON args, ok)

    def typed(self, package: str, page: str, rid: str, text: str) -> None:
        """Log a form field's new value (the privacy verifiers read this, so erasing later does not hide it)."""
        if text and (not self.drafts or self.drafts[-1] != (package, page, rid, text)):
            self.drafts.append((package, page, rid, text))

    def ever_typed(self, rid: str, package: str | None = None) -> list[str]:
        """Every non-empty value field ``rid`` ever held (optionally only in ``package``)."""
        return [d[3] for d in self.drafts if d[2] == rid and (package is None or d[0] == package)]

    @property
    def now(self) -> dt.datetime:
        return EPOCH + dt.timedelta(seconds=self.clock_s)

    def setting(self, key: str) -> str:
        return self.settings.get(key, "")

    def flag(self, key: str) -> bool:
        return self.settings.get(key, "0") == "1"

    @property
    def dark(self) -> bool:
        return self.settings.get("secure/ui_night_mode") == "2"
