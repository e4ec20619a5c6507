"""Settings tasks: toggles, brightness, timeout, ring mode, device name, Bluetooth devices."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterator

from datalake.types import Action
from mockphone.apps.settings import SOUND_MODES, TIMEOUTS
from mockphone.tasks.base import Param, Task

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI


class _SettingToggle(Task):
    """Shared body of the on/off tasks: start in the opposite state, check the settings store."""

    app_names = ("settings",)
    complexity = 2.0
    key: ClassVar[str]
    want: ClassVar[str]
    start: ClassVar[str]
    entry: ClassVar[str]
    rid: ClassVar[str]

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting(self.key, self.start)

    def allowed_changes(self, start=None) -> tuple[str, ...]:
        return (f"system.settings[{self.key}]",)

    def check(self, phone: MockPhone) -> float:
        return float(phone.system_state().setting(self.key) == self.want)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid=f"entry_{self.entry}")
        yield from ui.tap(rid=self.rid)


class SettingsWifiOff(_SettingToggle):
    """Turn Wi-Fi off from Settings (starts on)."""

    template = "Turn off Wi-Fi."
    key, want, start, entry, rid = "global/wifi_on", "0", "1", "network", "wifi"


class SettingsWifiOn(_SettingToggle):
    """Turn Wi-Fi on from Settings (starts off)."""

    template = "Turn on Wi-Fi."
    key, want, start, entry, rid = "global/wifi_on", "1", "0", "network", "wifi"


class SettingsBluetoothOn(_SettingToggle):
    """Turn Bluetooth on (starts off)."""

    template = "Turn on Bluetooth."
    key, want, start, entry, rid = "global/bluetooth_on", "1", "0", "connected", "bluetooth"


class SettingsBluetoothOff(_SettingToggle):
    """Turn Bluetooth off (starts on)."""

    template = "Turn off Bluetooth."
    key, want, start, entry, rid = "global/bluetooth_on", "0", "1", "connected", "bluetooth"


class SettingsAirplaneModeOn(_SettingToggle):
    """Enable airplane mode."""

    template = "Turn on airplane mode."
    key, want, start, entry, rid = "global/airplane_mode_on", "1", "0", "network", "airplane"


class SettingsAirplaneModeOff(_SettingToggle):
    """Disable airplane mode (starts on, so Wi-Fi and data are down)."""

    template = "Turn off airplane mode."
    key, want, start, entry, rid = "global/airplane_mode_on", "0", "1", "network", "airplane"


class SettingsLargeFont(Task):
    """Switch the font size to Large in Display settings."""

    template = "Make the text on my phone larger."
    app_names = ("settings",)
    complexity = 2.0
    allowed = ('system.settings[system/font_scale]',)
    schema = {}

    def check(self, phone: MockPhone) -> float:
        return float(float(phone.system_state().setting("system/font_scale")) > 1.0)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_display")
        yield from ui.tap(rid="font_size")


class SettingsMobileDataOff(_SettingToggle):
    """Disable mobile data."""

    template = "Turn off mobile data."
    key, want, start, entry, rid = "global/mobile_data", "0", "1", "network", "mobile_data"


class SettingsDarkThemeOn(_SettingToggle):
    """Switch the phone to the dark theme (ui_night_mode 2)."""

    template = "Enable dark theme."
    key, want, start, entry, rid = "secure/ui_night_mode", "2", "1", "display", "dark_theme"


class SettingsDarkThemeOff(_SettingToggle):
    """Switch the phone back to the light theme (ui_night_mode 1)."""

    template = "Turn off dark theme."
    key, want, start, entry, rid = "secure/ui_night_mode", "1", "2", "display", "dark_theme"


class SettingsDoNotDisturbOn(_SettingToggle):
    """Enable Do not disturb in Sound settings."""

    template = "Turn on Do not disturb."
    key, want, start, entry, rid = "global/do_not_disturb", "1", "0", "sound", "dnd"


class SettingsBrightness(Task):
    """Set the brightness slider to a level (0-255); within 3 steps counts."""

    template = "Set the screen brightness to {level} (on a 0-255 scale)."
    app_names = ("settings",)
    complexity = 2.5
    allowed = ('system.settings[system/screen_brightness]',)
    schema = {"level": Param(int, choices=(0, 30, 64, 100, 200, 230, 255), min=0, max=255)}

    def check(self, phone: MockPhone) -> float:
        return float(abs(int(phone.system_state().setting("system/screen_brightness")) - self.params["level"]) <= 3)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_display")
        yield from ui.slide("brightness", self.params["level"], 0, 255)


class SettingsScreenTimeout(Task):
    """Pick a screen timeout from the list page."""

    template = "Set the screen timeout to {timeout}."
    app_names = ("settings",)
    complexity = 3.0
    allowed = ('system.settings[system/screen_off_timeout]',)
    schema = {"timeout": Param(str, choices=tuple(label for label, ms in TIMEOUTS if ms != "60000"))}

    def check(self, phone: MockPhone) -> float:
        want = dict(TIMEOUTS)[self.params["timeout"]]
        return float(phone.system_state().setting("system/screen_off_timeout") == want)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_display")
        yield from ui.tap(rid="screen_timeout")
        yield from ui.tap(text=self.params["timeout"])


class SettingsRingMode(Task):
    """Switch the ring mode chip (vibrate or silent)."""

    template = "Set the phone's ring mode to {mode}."
    app_names = ("settings",)
    complexity = 2.0
    allowed = ('system.settings[system/sound_mode]',)
    schema = {"mode": Param(str, choices=tuple(m for m in SOUND_MODES if m != "normal"))}

    def check(self, phone: MockPhone) -> float:
        return float(phone.system_state().setting("system/sound_mode") == self.params["mode"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_sound")
        yield from ui.tap(rid=f"mode_{self.params['mode']}")


class SettingsRenameDevice(Task):
    """Type a new device name in About phone and save it."""

    template = "Rename this phone to \"{name}\"."
    app_names = ("settings",)
    complexity = 3.0
    allowed = ('settings.device_name',)
    schema = {"name": Param(str, choices=("Work phone", "Alex's Pixel", "Test device 7", "Kitchen tablet"))}

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("settings").device_name == self.params["name"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_about")
        yield from ui.tap(rid="device_name")
        yield from ui.type_into("name_input", self.params["name"])
        yield from ui.tap(rid="save")


class SettingsForgetDevice(Task):
    """Unpair one Bluetooth device through a confirmation dialog; others must stay paired."""

    template = "Forget the Bluetooth device \"{device}\"."
    app_names = ("settings",)
    complexity = 4.0
    allowed = ('settings.paired_devices',)
    schema = {"device": Param(str, choices=("Car audio", "Pixel Buds"))}

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("global/bluetooth_on", "1")
        phone.app("settings").state.paired_devices = ["Car audio", "Galaxy Watch", "Pixel Buds"]

    def check(self, phone: MockPhone) -> float:
        paired = phone.state("settings").paired_devices
        return float(self.params["device"] not in paired and len(paired) == 2)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_connected")
        yield from ui.tap(text=self.params["device"])
        yield from ui.tap(text="FORGET")


TASKS = (
    SettingsAirplaneModeOff, SettingsAirplaneModeOn, SettingsBluetoothOff, SettingsBluetoothOn,
    SettingsBrightness, SettingsDarkThemeOff, SettingsDarkThemeOn, SettingsDoNotDisturbOn, SettingsForgetDevice,
    SettingsLargeFont, SettingsMobileDataOff, SettingsRenameDevice, SettingsRingMode, SettingsScreenTimeout,
    SettingsWifiOff, SettingsWifiOn,
)
