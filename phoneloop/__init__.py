"""phoneloop: the data platform for phone-use agents (CLI and settings)."""

__version__ = "0.1.0"
