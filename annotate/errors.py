"""Errors of the annotation package, named for the condition."""


class AnnotateError(Exception):
    """Base class for annotation errors the CLI and the API turn into clear messages."""


class InvalidPayload(AnnotateError, ValueError):
    """A webhook payload that cannot become an annotation; the message says why."""
