"""Settings tasks: toggles, brightness, timeout, ring mode, device name, Wi-Fi networks, Bluetooth devices.

What varies per seed: the values the task asks for (a brightness level, a timeout, a
ring mode, a device name, a Wi-Fi network, a paired device: ``mockphone.world.devices``),
the start state they are asked from (the timeout, ring mode or font size the owner left),
the wording (``phrasing``: each task's paraphrases, translated in ``mockphone.i18n``) and,
where the phone offers two ways, the way there (``entry``: the Settings app or the quick
settings in the notification shade). The dark-theme pair is declared fixed: one switch on
one screen, with no world data to ask about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Iterator

from datalake.types import Action
from mockphone import world as worlds
from mockphone.apps.settings import FONT_SIZES, SOUND_MODES, TIMEOUTS
from mockphone.errors import InvalidTaskParams
from mockphone.tasks import endings as ends
from mockphone.tasks.base import Param, Task

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

# each task's instruction paraphrases (their Chinese is in mockphone.i18n)
PHRASINGS_SettingsWifiOff = (
        "Turn off Wi-Fi.",
        "Switch Wi-Fi off.",
        "Disable Wi-Fi on my phone.",
        "Disconnect from Wi-Fi by turning it off.",
        "I don't want to be on Wi-Fi right now. Turn it off.",
        "Please turn Wi-Fi off.",
        "Wi-Fi should be off. Switch it off for me.",
        "Shut off the phone's Wi-Fi.",
    )
PHRASINGS_SettingsBluetoothOn = (
        "Turn on Bluetooth.",
        "Switch Bluetooth on.",
        "Enable Bluetooth on my phone.",
        "I want to use my headphones. Turn on Bluetooth.",
        "Please turn Bluetooth on.",
        "Bluetooth is off. Turn it on for me.",
        "Get Bluetooth switched on.",
        "Activate Bluetooth.",
    )
PHRASINGS_SettingsBluetoothOff = (
        "Turn off Bluetooth.",
        "Switch Bluetooth off.",
        "Disable Bluetooth on my phone.",
        "Save some battery: turn Bluetooth off.",
        "Please turn Bluetooth off.",
        "Bluetooth is on and I don't need it. Turn it off.",
        "Get Bluetooth switched off.",
        "Deactivate Bluetooth.",
    )
PHRASINGS_SettingsAirplaneModeOn = (
        "Turn on airplane mode.",
        "Switch airplane mode on.",
        "Put the phone in airplane mode.",
        "I'm boarding a flight. Turn on airplane mode.",
        "Please enable airplane mode.",
        "Cut all the radios: airplane mode on.",
        "Enable flight mode.",
        "Airplane mode should be on. Turn it on for me.",
    )
PHRASINGS_SettingsAirplaneModeOff = (
        "Turn off airplane mode.",
        "Switch airplane mode off.",
        "Take the phone out of airplane mode.",
        "I've landed. Turn off airplane mode.",
        "Please disable airplane mode.",
        "Bring the radios back: airplane mode off.",
        "Disable flight mode.",
        "Airplane mode should be off. Turn it off for me.",
    )
PHRASINGS_SettingsDoNotDisturbOn = (
        "Turn on Do not disturb.",
        "Switch Do not disturb on.",
        "Silence my notifications with Do not disturb.",
        "I'm going into a meeting. Turn on Do not disturb.",
        "Please enable Do not disturb.",
        "I don't want to be disturbed: turn on Do not disturb.",
        "Activate Do not disturb.",
        "Do not disturb should be on. Turn it on for me.",
    )
PHRASINGS_SettingsLargeFont = (
        "Make the text on my phone larger.",
        "The text is too small for me. Make it bigger.",
        "Increase the font size.",
        "Please make the font bigger.",
        "I'd like larger text on the screen.",
    )
PHRASINGS_SettingsScreenTimeout = (
        "Set the screen timeout to",
        "Change the screen timeout to",
        "Make the screen turn off after",
        "Let the display go to sleep after",
        "I want the screen timeout at",
    )
PHRASINGS_SettingsRingMode = (
        "Set the phone's ring mode to",
        "Switch the ringer to",
        "Change the sound mode to",
        "Put the ring mode on",
        "I need the ring mode set to",
    )
ENTRIES = ("settings", "quick settings")


def _world(world):
    return world if world is not None else worlds.generate(0)


def open_shade(ui: UI) -> Iterator[Action]:
    d = ui.phone.display
    yield Action("swipe", x=d.width // 2, y=d.status_h // 2, x2=d.width // 2, y2=d.height // 2)


def flip(page: str, rid: str):
    """A script: the switch ``rid`` on the Settings page ``page`` flipped (``shade``: the quick-settings tile),
    from a fresh start of the app."""
    def script(ui: UI) -> Iterator[Action]:
        if page == "shade":
            yield from open_shade(ui)
            yield from ui.tap(rid=rid)
            return
        yield Action("shell", command=f"am force-stop {ui.phone.app('settings').package}")
        yield from ui.open("settings")
        yield from ui.tap(rid=f"entry_{page}")
        yield from ui.tap(rid=rid)
    return script


class _Beside(Task):
    """A settings task whose own wrong endings are the switch beside the right one (``beside``: page and rid):
    flipped instead, and flipped too after the task was done."""

    beside: ClassVar[tuple[str, str]] = ()

    def wrong_endings(self) -> dict:
        out = dict(super().wrong_endings())
        if self.beside:
            page, rid = self.beside
            out["the-switch-beside-it"] = ends.ending(lambda t: flip(page, rid))
            out["and-the-switch-beside-it-too"] = ends.after(lambda t: flip(page, rid))
        return out


class _SettingToggle(_Beside):
    """Shared body of the on/off tasks: start in the opposite state, check the settings store.

    ``phrasings``: the instruction's paraphrases (``template`` is ``{phrasing}``); ``qs``: the
    quick-settings tile of the same switch, when the shade has one (then ``entry`` picks the way).
    """

    template = "{phrasing}"
    app_names = ("settings",)
    complexity = 2.0
    key: ClassVar[str]
    want: ClassVar[str]
    start: ClassVar[str]
    page: ClassVar[str]  # the Settings page the switch is on
    rid: ClassVar[str]
    qs: ClassVar[str] = ""
    phrasings: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kw) -> None:
        super().__init_subclass__(**kw)
        if "phrasings" in cls.__dict__ and cls.phrasings:  # a subclass with its own schema (the mixed toggles) keeps it
            cls.schema = {"phrasing": Param(str, choices=cls.phrasings, doc="the instruction's wording")}
            if cls.qs:
                cls.schema["entry"] = Param(str, choices=ENTRIES, doc="the Settings app or the quick settings")

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting(self.key, self.start)

    def allowed_changes(self, start=None) -> tuple[str, ...]:
        return (f"system.settings[{self.key}]",)

    def check(self, phone: MockPhone) -> float:
        return float(phone.system_state().setting(self.key) == self.want)

    def oracle(self, ui: UI) -> Iterator[Action]:
        if self.params.get("entry") == "quick settings":
            yield from open_shade(ui)
            yield from ui.tap(rid=self.qs)  # the switch is the last step: the shade may stay open
            return
        yield from ui.open("settings")
        yield from ui.tap(rid=f"entry_{self.page}")
        yield from ui.tap(rid=self.rid)


class SettingsWifiOff(_SettingToggle):
    """Turn Wi-Fi off from Settings or the quick settings (starts on)."""

    beside = ("network", "mobile_data")

    key, want, start, page, rid, qs = "global/wifi_on", "0", "1", "network", "wifi", "qs_wifi"
    phrasings = PHRASINGS_SettingsWifiOff


class SettingsWifiOn(Task):
    """Turn Wi-Fi on (starts off) and join the network the instruction names, from the list in range."""

    swaps = (("network", lambda t, phone: next((n for n in phone.app("settings").state.wifi_networks
                                               if n != t.params["network"]), None)),)

    template = "Turn on Wi-Fi and connect to {network}."
    app_names = ("settings",)
    complexity = 3.0
    allowed = ("system.settings[global/wifi_on]", "settings.wifi_network")
    schema = {"network": Param(str, doc="a Wi-Fi network in range (mockphone.world.devices)")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        networks = _world(world).device.networks
        return {"network": rng.choice(networks[1:])}  # not the one it joins anyway

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("global/wifi_on", "0")
        state = phone.app("settings").state
        if self.params["network"] not in state.wifi_networks:
            state.wifi_networks.append(self.params["network"])
        if state.wifi_network == self.params["network"]:
            state.wifi_network = next((n for n in state.wifi_networks if n != self.params["network"]), "")

    def check(self, phone: MockPhone) -> float:
        on = phone.system_state().flag("global/wifi_on")
        joined = phone.state("settings").wifi_network == self.params["network"]
        return (on + (on and joined)) / 2

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_network")
        yield from ui.tap(rid="wifi")
        yield from ui.tap(text=self.params["network"])


class SettingsBluetoothOn(_SettingToggle):
    """Turn Bluetooth on (starts off)."""

    beside = ("shade", "qs_wifi")

    key, want, start, page, rid, qs = "global/bluetooth_on", "1", "0", "connected", "bluetooth", "qs_bluetooth"
    phrasings = PHRASINGS_SettingsBluetoothOn


class SettingsBluetoothOff(_SettingToggle):
    """Turn Bluetooth off (starts on)."""

    beside = ("shade", "qs_wifi")

    key, want, start, page, rid, qs = "global/bluetooth_on", "0", "1", "connected", "bluetooth", "qs_bluetooth"
    phrasings = PHRASINGS_SettingsBluetoothOff


class SettingsAirplaneModeOn(_SettingToggle):
    """Enable airplane mode."""

    beside = ("network", "mobile_data")

    key, want, start, page, rid, qs = "global/airplane_mode_on", "1", "0", "network", "airplane", "qs_airplane"
    phrasings = PHRASINGS_SettingsAirplaneModeOn


class SettingsAirplaneModeOff(_SettingToggle):
    """Disable airplane mode (starts on, so Wi-Fi and data are down)."""

    beside = ("network", "mobile_data")

    key, want, start, page, rid, qs = "global/airplane_mode_on", "0", "1", "network", "airplane", "qs_airplane"
    phrasings = PHRASINGS_SettingsAirplaneModeOff


class SettingsLargeFont(_Beside):
    """Make the font larger than the owner left it (Small, Default or Large, per seed): any larger size counts."""

    beside = ("display", "dark_theme")

    template = "{phrasing}"
    app_names = ("settings",)
    complexity = 3.0
    allowed = ("system.settings[system/font_scale]",)
    schema = {"phrasing": Param(str, choices=PHRASINGS_SettingsLargeFont, doc="the instruction's wording"),
              "start": Param(str, choices=tuple(v for _, v in FONT_SIZES[:-1]), doc="the font scale it starts at")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"phrasing": rng.choice(cls.schema["phrasing"].choices), "start": _world(world).device.font_scale}

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("system/font_scale", self.params["start"])

    def check(self, phone: MockPhone) -> float:
        return float(float(phone.system_state().setting("system/font_scale")) > float(self.params["start"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        values = [v for _, v in FONT_SIZES]
        bigger = next(label for label, v in FONT_SIZES if values.index(v) == values.index(self.params["start"]) + 1)
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_display")
        yield from ui.tap(rid="font_size")
        yield from ui.tap(text=bigger)


class SettingsMobileDataOff(_Beside):
    """Disable mobile data; the instruction quotes this month's use, which the Mobile data switch shows."""

    beside = ("network", "wifi")

    template = "I've used {used} GB of my {plan} GB data plan this month. Turn off mobile data."
    app_names = ("settings",)
    complexity = 2.0
    allowed = ("system.settings[global/mobile_data]",)
    schema = {"used": Param(str), "plan": Param(int, min=1, max=1000)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        d = _world(world).device
        return {"used": d.data_used_gb, "plan": d.data_plan_gb}

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("global/mobile_data", "1")
        state = phone.app("settings").state
        state.data_used_gb, state.data_plan_gb = self.params["used"], self.params["plan"]

    def check(self, phone: MockPhone) -> float:
        return float(phone.system_state().setting("global/mobile_data") == "0")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_network")
        yield from ui.tap(rid="mobile_data")


class SettingsDarkThemeOn(_SettingToggle):
    """Switch the phone to the dark theme (ui_night_mode 2)."""

    beside = ("shade", "qs_dnd")

    template = "Enable dark theme."
    schema = {}
    fixed = True
    fixed_reason = ("one switch on one screen (Display), no quick-settings tile and no world data to ask about: "
                    "only the wording could vary")
    key, want, start, page, rid = "secure/ui_night_mode", "2", "1", "display", "dark_theme"


class SettingsDarkThemeOff(_SettingToggle):
    """Switch the phone back to the light theme (ui_night_mode 1)."""

    beside = ("shade", "qs_dnd")

    template = "Turn off dark theme."
    schema = {}
    fixed = True
    fixed_reason = ("one switch on one screen (Display), no quick-settings tile and no world data to ask about: "
                    "only the wording could vary")
    key, want, start, page, rid = "secure/ui_night_mode", "1", "2", "display", "dark_theme"


class SettingsDoNotDisturbOn(_SettingToggle):
    """Enable Do not disturb in Sound settings or the quick settings."""

    beside = ("sound", "mode_silent")

    key, want, start, page, rid, qs = "global/do_not_disturb", "1", "0", "sound", "dnd", "qs_dnd"
    phrasings = PHRASINGS_SettingsDoNotDisturbOn


class SettingsBrightness(_Beside):
    """Set the brightness slider to a level (0-255) from the level the owner left it at; within 3 steps counts."""

    beside = ("display", "dark_theme")

    template = "Set the screen brightness to {level} (on a 0-255 scale)."
    app_names = ("settings",)
    complexity = 2.5
    allowed = ('system.settings[system/screen_brightness]',)
    schema = {"level": Param(int, min=0, max=255), "start": Param(int, min=0, max=255, doc="the level it starts at")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        start = _world(world).device.brightness
        level = rng.choice([v for v in range(0, 256, 5) if abs(v - start) > 20])
        return {"level": level, "start": start}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if abs(params["level"] - params["start"]) <= 3:
            raise InvalidTaskParams(f"{cls.name()}: the start level must differ from the target by more than 3")

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("system/screen_brightness", str(self.params["start"]))

    def check(self, phone: MockPhone) -> float:
        return float(abs(int(phone.system_state().setting("system/screen_brightness")) - self.params["level"]) <= 3)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_display")
        yield from ui.slide("brightness", self.params["level"], 0, 255)


class SettingsScreenTimeout(_Beside):
    """Pick a screen timeout from the list page (it starts at the owner's, never the one asked for)."""

    beside = ("display", "dark_theme")

    template = "{phrasing} {timeout}."
    app_names = ("settings",)
    complexity = 3.0
    allowed = ('system.settings[system/screen_off_timeout]',)
    schema = {"phrasing": Param(str, choices=PHRASINGS_SettingsScreenTimeout, doc="the instruction's wording"),
              "timeout": Param(str, choices=tuple(label for label, _ in TIMEOUTS)),
              "start": Param(str, choices=tuple(label for label, _ in TIMEOUTS), doc="the timeout it starts at")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        start = next(label for label, ms in TIMEOUTS if ms == _world(world).device.timeout_ms)
        return {"phrasing": rng.choice(PHRASINGS_SettingsScreenTimeout),
                "timeout": rng.choice([label for label, _ in TIMEOUTS if label != start]), "start": start}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["timeout"] == params["start"]:
            raise InvalidTaskParams(f"{cls.name()}: it must not start at the timeout it asks for")

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("system/screen_off_timeout", dict(TIMEOUTS)[self.params["start"]])

    def check(self, phone: MockPhone) -> float:
        want = dict(TIMEOUTS)[self.params["timeout"]]
        return float(phone.system_state().setting("system/screen_off_timeout") == want)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_display")
        yield from ui.tap(rid="screen_timeout")
        yield from ui.tap(text=self.params["timeout"])


class SettingsRingMode(Task):
    """Switch the ring mode chip away from the mode the owner left it in."""

    swaps = (("mode", lambda t, phone: next(m for m in SOUND_MODES if m not in (t.params["mode"], t.params["start"]))),)

    template = "{phrasing} {mode}."
    app_names = ("settings",)
    complexity = 2.0
    allowed = ('system.settings[system/sound_mode]',)
    schema = {"phrasing": Param(str, choices=PHRASINGS_SettingsRingMode, doc="the instruction's wording"),
              "mode": Param(str, choices=SOUND_MODES),
              "start": Param(str, choices=SOUND_MODES, doc="the mode it starts in")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        start = _world(world).device.sound_mode
        return {"phrasing": rng.choice(PHRASINGS_SettingsRingMode),
                "mode": rng.choice([m for m in SOUND_MODES if m != start]), "start": start}

    @classmethod
    def validate(cls, params):
        super().validate(params)
        if params["mode"] == params["start"]:
            raise InvalidTaskParams(f"{cls.name()}: it must not start in the mode it asks for")

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("system/sound_mode", self.params["start"])

    def check(self, phone: MockPhone) -> float:
        return float(phone.system_state().setting("system/sound_mode") == self.params["mode"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_sound")
        yield from ui.tap(rid=f"mode_{self.params['mode']}")


class SettingsRenameDevice(Task):
    """Type a new device name in About phone and save it."""

    near_misses = (("first-word-only", lambda p: {"name": p["name"].split()[0] if " " in p["name"] else p["name"][:1]}),
                   ("a-letter-short", lambda p: {"name": p["name"][:-1]}))

    template = "Rename this phone to \"{name}\"."
    app_names = ("settings",)
    complexity = 3.0
    allowed = ('settings.device_name',)
    schema = {"name": Param(str, doc="a name the owner might give the phone (mockphone.world.devices)")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"name": rng.choice(_world(world).device.device_names)}

    def check(self, phone: MockPhone) -> float:
        return float(phone.state("settings").device_name == self.params["name"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("settings")
        yield from ui.tap(rid="entry_about")
        yield from ui.tap(rid="device_name")
        yield from ui.type_into("name_input", self.params["name"])
        yield from ui.tap(rid="save")


class SettingsForgetDevice(Task):
    """Unpair one Bluetooth device through a confirmation dialog; the others must stay paired."""

    swaps = (("device", lambda t, phone: next((d for d in phone.app("settings").state.paired_devices
                                              if d != t.params["device"]), None)),)

    template = "Forget the Bluetooth device \"{device}\"."
    app_names = ("settings",)
    complexity = 4.0
    allowed = ('settings.paired_devices',)
    schema = {"device": Param(str, doc="one of the seed's paired devices (mockphone.world.devices)")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"device": rng.choice(_world(world).device.paired)}

    def setup(self, phone: MockPhone) -> None:
        phone.put_setting("global/bluetooth_on", "1")
        state = phone.app("settings").state
        if self.params["device"] not in state.paired_devices:
            state.paired_devices = sorted([*state.paired_devices, self.params["device"]])
        if len(state.paired_devices) < 2:  # another device to keep, so forgetting everything is wrong
            state.paired_devices = sorted([*state.paired_devices, "Car audio" if "Car audio" not in
                                           state.paired_devices else "Pixel Buds"])

    def check(self, phone: MockPhone) -> float:
        paired = phone.state("settings").paired_devices
        before = self.start_state(phone)["settings.paired_devices"]
        return float(self.params["device"] not in paired and len(paired) == len(before) - 1)

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
