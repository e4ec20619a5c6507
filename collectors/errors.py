"""Errors of the collectors, named for the condition they report.

What a phone raises (offline, unauthorized, a bad screenshot, an episode with no step) is
in ``phones.errors``; this module holds what collecting adds."""


class CollectorError(Exception):
    """Base class for every error the collectors package raises on purpose (a recording that failed)."""


class RecordingFailed(CollectorError):
    """A human demonstration whose recording broke (the phone dropped, getevent ended) before any step."""
