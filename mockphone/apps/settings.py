"""Settings: network, Bluetooth, display (dark theme, brightness, timeout), sound, about.

Toggles write the phone-wide settings store (the same keys ``adb shell settings``
uses), so the status bar, the shade and the shell all agree with this app.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.widgets import Page, View

TIMEOUTS = (("15 seconds", "15000"), ("30 seconds", "30000"), ("1 minute", "60000"), ("2 minutes", "120000"),
            ("5 minutes", "300000"), ("10 minutes", "600000"))
SOUND_MODES = ("normal", "vibrate", "silent")


@dataclass
class SettingsState:
    device_name: str = "Pixel 8"
    paired_devices: list[str] = field(default_factory=list)


class SettingsApp(App):
    name = "settings"
    package = "com.android.settings"
    label = "Settings"
    color = "#1a73e8"

    def initial_state(self, rng: random.Random) -> SettingsState:
        return SettingsState(paired_devices=sorted(rng.sample(["Car audio", "Pixel Buds", "Sony WH-1000XM5",
                                                               "Galaxy Watch", "JBL Flip 6"], 2)))

    def _flag(self, key: str) -> bool:
        return self.phone.system.flag(key)

    def _put(self, key: str):
        return lambda value: self.phone.put_setting(key, value)

    def page_main(self, page: Page) -> View:
        entries = (("Network & internet", "Wi-Fi, mobile data, airplane mode", "network"),
                   ("Connected devices", "Bluetooth, pairing", "connected"),
                   ("Display", "Dark theme, brightness, screen timeout", "display"),
                   ("Sound & vibration", "Do not disturb, ring mode", "sound"),
                   ("About phone", self.state.device_name, "about"))
        body = tuple(ui.item(t, s, on_tap=(lambda p=p: self.push(p)), rid=f"entry_{p}") for t, s, p in entries)
        return View("Settings", body=body)

    def page_network(self, page: Page) -> View:
        return View("Network & internet", up=True, body=(
            ui.toggle("Wi-Fi", self._flag("global/wifi_on"), self._put("global/wifi_on"), rid="wifi"),
            ui.toggle("Mobile data", self._flag("global/mobile_data"), self._put("global/mobile_data"),
                      rid="mobile_data"),
            ui.toggle("Airplane mode", self._flag("global/airplane_mode_on"), self._put("global/airplane_mode_on"),
                      rid="airplane"),
        ))

    def page_connected(self, page: Page) -> View:
        on = self._flag("global/bluetooth_on")
        body = [ui.toggle("Bluetooth", on, self._put("global/bluetooth_on"), rid="bluetooth")]
        if on:
            body.append(ui.text("Paired devices", style="caption", copyable=False))
            body.extend(ui.item(name, "Paired", rid="paired_device", on_tap=(lambda n=name: self._forget(n)))
                        for name in self.state.paired_devices)
        return View("Connected devices", up=True, body=tuple(body))

    def _forget(self, name: str) -> None:
        self.dialog(f"Forget {name}?", "The device will be unpaired.",
                    (("Cancel", None), ("Forget", lambda: self.state.paired_devices.remove(name))), rid="forget")

    def page_display(self, page: Page) -> View:
        s = self.phone.system
        timeout = next((label for label, ms in TIMEOUTS if ms == s.setting("system/screen_off_timeout")), "Custom")
        return View("Display", up=True, body=(
            ui.toggle("Dark theme", s.dark, lambda v: self.phone.put_setting("secure/ui_night_mode", 2 if v else 1),
                      rid="dark_theme"),
            ui.slider("Brightness", int(s.setting("system/screen_brightness") or 0), 0, 255,
                      self._put("system/screen_brightness"), rid="brightness", step=1),
            ui.item("Screen timeout", timeout, on_tap=lambda: self.push("timeout"), rid="screen_timeout"),
            ui.item("Font size", "Default" if s.setting("system/font_scale") == "1.0" else "Large",
                    on_tap=lambda: self.phone.put_setting(
                        "system/font_scale", "1.3" if s.setting("system/font_scale") == "1.0" else "1.0"),
                    rid="font_size"),
        ))

    def page_timeout(self, page: Page) -> View:
        current = self.phone.system.setting("system/screen_off_timeout")
        body = tuple(ui.checkbox(label, ms == current, (lambda v, ms=ms: self._set_timeout(ms)), rid="timeout_option")
                     for label, ms in TIMEOUTS)
        return View("Screen timeout", up=True, body=body)

    def _set_timeout(self, ms: str) -> None:
        self.phone.put_setting("system/screen_off_timeout", ms)
        self.back()

    def page_sound(self, page: Page) -> View:
        mode = self.phone.system.setting("system/sound_mode")
        chips = ui.row(*(ui.chip(m.capitalize(), m == mode, (lambda m=m: self._put("system/sound_mode")(m)),
                                 rid=f"mode_{m}") for m in SOUND_MODES))
        return View("Sound & vibration", up=True, body=(
            ui.toggle("Do not disturb", self._flag("global/do_not_disturb"), self._put("global/do_not_disturb"),
                      rid="dnd"),
            ui.text("Ring mode", style="caption", copyable=False),
            chips,
        ))

    def page_about(self, page: Page) -> View:
        return View("About phone", up=True, body=(
            ui.item("Device name", self.state.device_name, on_tap=lambda: self.push("rename"), rid="device_name"),
            ui.item("Android version", "14", rid="android_version"),
            ui.item("Model", "Pixel 8 (mock)", rid="model"),
        ))

    def page_rename(self, page: Page) -> View:
        return View("Device name", up=True, body=(
            ui.edit("name_input", page.field("name_input"), hint=self.state.device_name, on_submit=self._rename),
        ), footer=(ui.button("Save", self._rename, rid="save"),))

    def _rename(self) -> None:
        value = self.field("name_input").strip()
        if value:
            self.state.device_name = value
            self.back()
            self.toast("Device name saved")
