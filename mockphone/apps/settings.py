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

FONT_SIZES = (("Small", "0.85"), ("Default", "1.0"), ("Large", "1.15"), ("Largest", "1.3"))
TIMEOUTS = (("15 seconds", "15000"), ("30 seconds", "30000"), ("1 minute", "60000"), ("2 minutes", "120000"),
            ("5 minutes", "300000"), ("10 minutes", "600000"))
SOUND_MODES = ("normal", "vibrate", "silent")


@dataclass
class SettingsState:
    device_name: str = "Pixel 8"
    paired_devices: list[str] = field(default_factory=list)
    wifi_networks: list[str] = field(default_factory=list)  # in range, in the order the list shows them
    wifi_network: str = ""  # the network Wi-Fi joins when on ("" = none)
    data_used_gb: str = "0.0"  # this month's mobile data
    data_plan_gb: int = 10


class SettingsApp(App):
    name = "settings"
    package = "com.android.settings"
    label = "Settings"
    color = "#1a73e8"

    def initial_state(self, rng: random.Random) -> SettingsState:
        """The seed's networks, paired devices and data plan (``mockphone.world.devices``)."""
        from mockphone import world

        d = (getattr(self.phone, "world", None) or world.generate(self.phone.seed, self.phone.locale)).device
        return SettingsState(paired_devices=list(d.paired), wifi_networks=list(d.networks), wifi_network=d.networks[0],
                             data_used_gb=d.data_used_gb, data_plan_gb=d.data_plan_gb)

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
        wifi = self._flag("global/wifi_on")
        st = self.state
        joined = f"Connected to {st.wifi_network}" if wifi and st.wifi_network else ("Not connected" if wifi else "")
        body = [
            ui.toggle("Wi-Fi", wifi, self._put("global/wifi_on"), rid="wifi", subtitle=joined),
            ui.toggle("Mobile data", self._flag("global/mobile_data"), self._put("global/mobile_data"),
                      rid="mobile_data", subtitle=f"{st.data_used_gb} GB of {st.data_plan_gb} GB used"),
            ui.toggle("Airplane mode", self._flag("global/airplane_mode_on"), self._put("global/airplane_mode_on"),
                      rid="airplane"),
        ]
        if wifi:
            body.append(ui.text("Available networks", style="caption", copyable=False))
            body.extend(ui.item(name, "Connected" if name == st.wifi_network else "Saved", rid="wifi_network",
                                on_tap=(lambda n=name: self._join(n))) for name in st.wifi_networks)
        return View("Network & internet", up=True, body=tuple(body))

    def _join(self, name: str) -> None:
        self.state.wifi_network = name
        self.toast(f"Connected to {name}")

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
            ui.item("Font size", next((label for label, v in FONT_SIZES if v == s.setting("system/font_scale")),
                                      "Custom"), on_tap=lambda: self.push("font"), rid="font_size"),
        ))

    def page_font(self, page: Page) -> View:
        current = self.phone.system.setting("system/font_scale")
        return View("Font size", up=True, body=tuple(
            ui.checkbox(label, value == current, (lambda v, value=value: self._set_font(value)), rid="font_option")
            for label, value in FONT_SIZES))

    def _set_font(self, value: str) -> None:
        self.phone.put_setting("system/font_scale", value)
        self.back()

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
