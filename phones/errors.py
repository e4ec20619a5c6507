"""Errors of phones (the protocol, the adb phone, the episode loop), named for the condition they report."""


class PhoneError(Exception):
    """Base class for every error the phones package raises on purpose."""


class AdbServerUnreachable(PhoneError):
    """Nothing answers on the adb server's host:port; no other server is started in its place."""


class DeviceNotFound(PhoneError):
    """The adb server does not list a device with that serial."""


class DeviceUnauthorized(PhoneError):
    """The phone is connected but has not accepted this computer's adb key."""


class DeviceOffline(PhoneError):
    """The phone is listed but offline, or dropped off while in use."""


class BadScreenshot(PhoneError):
    """``screencap -p`` returned something that is not a PNG."""


class BadUITree(PhoneError):
    """``uiautomator dump`` kept failing or returned something that is not a UI tree."""


class UntypeableText(PhoneError, ValueError):
    """Text that ``input text`` cannot type (control characters, or non-ASCII without an IME)."""


class UnsupportedAction(PhoneError, ValueError):
    """An action this phone cannot perform (e.g. a ``tool`` call on a real phone)."""


class EpisodeAborted(PhoneError):
    """An episode stopped before a single step could be recorded; nothing is written."""


class UnknownPhoneKind(PhoneError, ValueError):
    """A phone kind ``phones.make`` does not build (it builds ``mock`` and ``adb``)."""
