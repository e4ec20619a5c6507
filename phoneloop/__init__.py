"""phoneloop: the data platform for phone-use agents (CLI and settings)."""

from datalake.version import __version__

__all__ = ["__version__"]
