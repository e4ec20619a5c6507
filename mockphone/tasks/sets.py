"""Named lists of task templates that several stages share.

    from mockphone.tasks.sets import DEMO_TASKS
    registry.get(DEMO_TASKS[0])

``DEMO_TASKS`` is the demo's task set: single-app, cross-app and mini-app templates, each
with one fixed oracle path. The demo experiment (``training.experiment``) trains and
evaluates on it, and the tiny model's tokenizer (``training.tiny``) learns its words
from it, so both read it here rather than one reading the other. A test checks every
name is registered.
"""

from __future__ import annotations

DEMO_TASKS = ("SettingsWifiOn", "SettingsBluetoothOff", "SettingsDarkThemeOn", "MailStar", "MailArchive",
              "NotesDelete", "ClockCancelTimer", "ShopRemoveFromCart", "NotificationsClearAll",
              "MixedWifiOff", "InfeasibleMissingSetting", "ClockDeleteAlarm",
              # cross-app (two apps, one fixed path each) and mini-app (SuperApp) templates
              "CrossLeaveRequestToNote", "CrossEventToAlarm", "HotelSearchBudget", "FoodOrderCheapestDish")
