"""Errors of the annotation package, named for the condition."""


class AnnotateError(Exception):
    """Base class for annotation errors the CLI and the API turn into clear messages."""


class InvalidPayload(AnnotateError, ValueError):
    """A webhook payload that cannot become an annotation; the message says why."""


class LabelStudioError(AnnotateError):
    """Label Studio answered with an error or could not be reached; the message names the call."""


class ProjectNotFound(AnnotateError, LookupError):
    """No Label Studio project with that title."""


class ServerNotRunning(AnnotateError):
    """No Label Studio is configured or started for this lake."""


class ServerFailedToStart(AnnotateError):
    """The local Label Studio exited or did not answer /health in time; the message holds its log's tail."""


class InvalidSelection(AnnotateError, ValueError):
    """A push selection (preset or SQL filter) that cannot be used."""
