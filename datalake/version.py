"""The phoneloop distribution's version (as pyproject.toml says), on the lowest floor so every package
may record it (dataset versions record the software that built them) without importing the CLI."""

__version__ = "0.1.0"
