"""What the farm's command and its workers share: phone refs, health checks, options, the policy factory.

    refs, problems = resolve_phones([], [("127.0.0.1", 5037)])   # every online phone, and why others are not
    reason = health(phone, needs_ime(task), min_battery=15)       # None when the phone may take the job

``collectors.farm`` (the command side: listing, checking the lake, starting the pass) and
``collectors.farm_pool`` (the worker on each phone) both import this module; it imports neither.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Any

from phones.adb_phone import AdbPhone, client, list_devices
from phones.episode import OraclePolicy
from phones.errors import PhoneError

OFFLINE = "device_offline"


def load_policy_factory(spec: str):
    """``oracle`` or ``module:callable`` where ``callable(phone, task) -> Policy``."""
    if spec == "oracle":
        return OraclePolicy.factory
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"policy {spec!r} must be 'oracle' or 'module:callable'")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class PhoneRef:
    host: str
    port: int
    serial: str

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}/{self.serial}"


def parse_adb(spec: str) -> tuple[str, int]:
    host, sep, port = spec.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"--adb {spec!r} must be HOST:PORT (e.g. 127.0.0.1:5037)")
    return host, int(port)


def resolve_phones(serials: list[str], servers: list[tuple[str, int]]) -> tuple[list[PhoneRef], list[str]]:
    """The phones to use (all online ones when ``serials`` is empty) and why others cannot be used."""
    listed: list[tuple[PhoneRef, str]] = []
    for host, port in servers:
        listed += [(PhoneRef(host, port, d.serial), d.state) for d in list_devices(client(host, port))]
    refs, problems = [], []
    if not serials:
        return [r for r, s in listed if s == "device"], [f"{r.label}: {s}" for r, s in listed if s != "device"]
    for want in serials:
        match = [(r, s) for r, s in listed if want in (r.serial, r.label)]
        if not match:
            shown = ", ".join(r.label for r, _ in listed) or "none"
            problems.append(f"{want}: not listed by any adb server ({', '.join(f'{h}:{p}' for h, p in servers)}; "
                            f"listed: {shown})")
        for r, s in match:
            refs.append(r)  # offline or unauthorized ones join and keep trying to connect with backoff
    return refs, problems


def health(phone: AdbPhone, needs_ime: bool, min_battery: int) -> str | None:
    """Why ``phone`` should not take a job now, or None when it is fit."""
    out = phone.run("dumpsys power | grep -E 'mWakefulness=|mHoldingDisplaySuspendBlocker'; "
                    "dumpsys window | grep -E 'mDreamingLockscreen|mShowingLockscreen|isStatusBarKeyguard'; "
                    "dumpsys battery | grep level")
    if "mWakefulness=" in out and "mWakefulness=Awake" not in out:
        return "screen off"
    if "mShowingLockscreen=true" in out or "mDreamingLockscreen=true" in out or "isStatusBarKeyguard=true" in out:
        return "locked (keyguard showing)"
    level = next((int(tok) for line in out.splitlines() if "level:" in line
                  for tok in line.split() if tok.isdigit()), None)
    if level is not None and level < min_battery:
        return f"battery {level}% < {min_battery}%"
    if needs_ime:
        from phones.text import ADB_KEYBOARD

        if ADB_KEYBOARD not in phone.run("ime list -s"):
            return f"non-ASCII typing needs the ADBKeyBoard IME ({ADB_KEYBOARD}), not installed"
    return None


def needs_ime(task: Any) -> bool:
    """The task types non-ASCII text (which needs the ADBKeyBoard IME on a real phone)."""
    params = getattr(task, "params", None) or {}
    return any(isinstance(v, str) and not v.isascii() for v in params.values())


@dataclass
class FarmOptions:
    policy: str = "oracle"
    max_steps: int = 30
    max_attempts: int = 3  # tries of one job over the farm
    reconnects: int = 5  # failed reconnect tries before a phone leaves the farm
    backoff: float = 0.5  # first reconnect wait, doubled each try (capped at 30 s)
    min_battery: int = 15


def connect(ref: PhoneRef, opts: FarmOptions, stop: threading.Event) -> tuple[AdbPhone | None, str]:
    """An AdbPhone for ``ref``, retried with exponential backoff; (None, the last error) when it never answers."""
    wait, last = opts.backoff, ""
    for attempt in range(opts.reconnects + 1):
        try:
            return AdbPhone(ref.serial, host=ref.host, port=ref.port), ""
        except PhoneError as exc:
            last = str(exc)
        if attempt < opts.reconnects and stop.wait(wait):
            break
        wait = min(wait * 2, 30.0)
    return None, last
