"""Settings read from the environment; the CLI's options override them."""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_LAKE = "./lake"


@dataclass(frozen=True)
class Settings:
    lake: str = DEFAULT_LAKE  # PHONELOOP_LAKE: a local path or any URI deltalake accepts

    @classmethod
    def from_env(cls) -> Settings:
        return cls(lake=os.environ.get("PHONELOOP_LAKE", DEFAULT_LAKE))
