"""The lake: shared types, Delta tables queried by DuckDB, import/export, quarantine."""

from datalake.errors import (
    EpisodeNotFound, FrameNotFound, InvalidAction, InvalidRecord, LakeError, LakeNotFound,
    UnsupportedSchemaVersion,
)
from datalake.types import Action, Device, Episode, Observation, Step, Target

__all__ = [
    "Action", "Device", "Episode", "Observation", "Step", "Target",
    "EpisodeNotFound", "FrameNotFound", "InvalidAction", "InvalidRecord", "LakeError",
    "LakeNotFound", "UnsupportedSchemaVersion",
]
