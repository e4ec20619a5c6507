"""Errors of the execution layer (backends, pools), named for the condition they report."""


class FleetError(Exception):
    """Base class for every error the fleet package raises on purpose."""


class BadBackend(FleetError, ValueError):
    """A --backend / --address pair that names no backend, or an address the backend does not take."""


class BackendUnavailable(FleetError):
    """A backend that cannot start here: its package is missing, or its cluster does not answer."""


class QueuesLost(FleetError):
    """The process serving a local pool's job and result queues (its ``multiprocessing`` manager) died
    mid-pass. The workers notice too: each writes what it finished and stops; the caller may rerun,
    on a fresh pool, whatever the lake lacks."""


class PhoneLeased(FleetError):
    """A phone another live run holds (``fleet.leases``); the message names the holder: pid, host, command, since."""


class PlacementInfeasible(FleetError):
    """A phone's Ray actor cannot be placed on the cluster as it is: the custom resource that pins it
    (``adb:HOST:PORT/SERIAL``) is on no live node, or the nodes lack the CPUs for every actor. Raised
    before any actor starts, naming the phone and the missing resource."""


class ActorPending(FleetError):
    """A phone's Ray actor was not running after the backend's pending timeout (the cluster's CPUs
    are taken by other work, or a node left): an error, not a silent wait."""
