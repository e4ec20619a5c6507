"""Errors of the collectors, named for the condition they report."""


class CollectorError(Exception):
    """Base class for every error the collectors package raises on purpose."""


class AdbServerUnreachable(CollectorError):
    """Nothing answers on the adb server's host:port; no other server is started in its place."""


class DeviceNotFound(CollectorError):
    """The adb server does not list a device with that serial."""


class DeviceUnauthorized(CollectorError):
    """The phone is connected but has not accepted this computer's adb key."""


class DeviceOffline(CollectorError):
    """The phone is listed but offline, or dropped off while in use."""


class BadScreenshot(CollectorError):
    """``screencap -p`` returned something that is not a PNG."""


class BadUITree(CollectorError):
    """``uiautomator dump`` kept failing or returned something that is not a UI tree."""


class UntypeableText(CollectorError, ValueError):
    """Text that ``input text`` cannot type (control characters, or non-ASCII without an IME)."""


class UnsupportedAction(CollectorError, ValueError):
    """An action this phone cannot perform (e.g. a ``tool`` call on a real phone)."""


class EpisodeAborted(CollectorError):
    """An episode stopped before a single step could be recorded; nothing is written."""
