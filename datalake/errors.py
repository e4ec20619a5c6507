"""Errors of the lake and the shared types, named for the condition they report."""


class LakeError(Exception):
    """Base class for every error the datalake package raises on purpose."""


class InvalidRecord(LakeError, ValueError):
    """A record (episode, step, observation) fails validation; the message names the field."""


class InvalidAction(InvalidRecord):
    """An action is malformed: unknown type, missing or extra field, bad value."""


class UITreeError(InvalidRecord):
    """A uiautomator XML dump cannot be parsed."""


class LakeNotFound(LakeError):
    """No phoneloop lake at the given URI (run `phoneloop lake init`)."""


class UnsupportedSchemaVersion(LakeError):
    """The lake was written by a newer phoneloop whose schema this version does not know."""


class LakeNeedsMigration(LakeError):
    """The lake has an older schema: it opens read-only until `phoneloop lake migrate`."""


class EpisodeNotFound(LakeError, KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "episode not found"


class FrameNotFound(LakeError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "frame not found"


class TableNotFound(LakeError):
    """A table name that is not one of the lake's tables."""


class VacuumRefused(LakeError):
    """Vacuuming would delete files that a registered dataset version needs to be rebuilt."""


class SnapshotNotFound(LakeError):
    """An ``as_of`` target that names no version of a table: a bad time, version or table."""
