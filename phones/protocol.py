"""The Phone protocol: what every phone a collector or a rollout drives must offer.

``MockPhone`` satisfies it without importing this module, and so does ``AdbPhone``:

    reset(seed)      back to a known start (the mock rebuilds its apps; a real phone goes home)
    observe()        an Observation: PNG screenshot, uiautomator XML, foreground package/activity
    act(action)      perform one Action of the shared vocabulary
    ui_tree()        the uiautomator XML alone (what oracles and stability checks read)
    device()         the Device an episode records (screen size, kind real|mock, extras)
    close()

Verifiers need more than this: a phone whose app state they can read (``state(app)``),
which only a mock phone has. ``is_verifiable`` says whether a phone offers it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from datalake.types import Action, Device, Observation


@runtime_checkable
class Phone(Protocol):
    def reset(self, seed: int = 0) -> None: ...

    def observe(self) -> Observation: ...

    def act(self, action: Action) -> Any: ...

    def ui_tree(self) -> str: ...

    def device(self) -> Device: ...

    def close(self) -> None: ...


def is_verifiable(phone: Any) -> bool:
    """True when task verifiers can read the phone's app state directly (a mock phone)."""
    return callable(getattr(phone, "state", None)) and callable(getattr(phone, "system_state", None))
