"""Errors of curation, named for the condition; messages name the recipe line or field."""


class CurationError(Exception):
    """Base class for curation errors the CLI turns into a clear message."""


class RecipeError(CurationError, ValueError):
    """A recipe that cannot run: unknown op or field, bad value, bad SQL. Names the line."""

    def __init__(self, message: str, line: int | None = None, source: str | None = None):
        where = f"{source or 'recipe'}" + (f", line {line}" if line else "")
        super().__init__(f"{where}: {message}")
        self.line = line


class EmptySelection(CurationError):
    """The selection (or the ops after it) left nothing to export."""


class VersionUnrebuildable(CurationError):
    """The lake no longer holds the files a dataset version read (e.g. after a forced vacuum)."""


class DatasetNotFound(CurationError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "dataset not found"


class UnredactedRealEpisodes(CurationError):
    """Exports would hold real-phone episodes that no redact op scanned (or one with blur: false)."""
