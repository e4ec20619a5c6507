"""Errors of rollouts and evaluation, named for the condition."""


class RolloutError(Exception):
    """Base class for rollout errors the CLI turns into clear messages."""


class PolicyError(RolloutError):
    """A policy that cannot be built or does not answer (endpoint down, missing extras)."""


class PhonesSpecError(RolloutError, ValueError):
    """A --phones value that is not mock:N or adb:SERIAL,..."""


class LakeWriteFailed(RolloutError):
    """Finished episodes that a worker could not commit to the lake (named with the cause);
    ``report`` is the run's RolloutReport when the runner raises it."""

    def __init__(self, message: str, report=None) -> None:
        super().__init__(message)
        self.report = report

