"""A device farm that survives its phones: list phones on several adb servers, and collect from one job queue.

    rows = list_phones(port=5037)                 # serial, state, and screen facts for usable phones
    report = collect_on_devices("./lake", [], ["SettingsWifiOff"], seeds=range(4),
                                adb=["127.0.0.1:5037", "10.0.0.7:5037"])   # [] = every online phone

The lake is opened and checked before the first job. Each phone has a worker (a thread
here, or a Ray actor with ``backend="ray"``) that takes the next (task, seed) job from
one queue when it is idle, so a slow phone simply takes fewer jobs; the scheduling is
``fleet.pool.Pool``, the one every phone command shares (``collectors.farm_pool``).
Before each job a health check runs: screen on and unlocked, battery above
``min_battery``, and the ADBKeyBoard IME present when the job types non-ASCII text. A
phone that goes offline mid-episode has that episode retried on another phone (up to
``max_attempts``); the dropped attempt is kept with ``meta.failure_reason =
"device_offline"`` (``"host_unreachable"`` when its adb server died), outcome ``unknown``
and ``verified_by = "none"``, so it does not count against the policy. Any exception of a
job is that job's error, retried the same way; ``report.failed_jobs`` names every job that
ended with no episode. Each phone is leased to the run (``fleet.leases``). The phone then reconnects with exponential backoff and
rejoins, or leaves the farm after ``reconnects`` failed tries. Workers write their
episodes a few at a time as they finish.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

from collectors.collect import CollectReport
from collectors.farm_phones import FarmOptions, load_policy_factory, parse_adb, resolve_phones
from phones.adb_phone import AdbPhone, client, list_devices
from phones.errors import DeviceNotFound, PhoneError


@dataclass
class PhoneRow:
    serial: str
    state: str
    width: int | None = None
    height: int | None = None
    dpi: int | None = None
    model: str | None = None
    kind: str | None = None
    error: str | None = None
    adb: str | None = None  # host:port of the adb server that lists it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def list_phones(host: str = "127.0.0.1", port: int | None = None) -> list[PhoneRow]:
    """Every phone the adb server lists, with screen facts for those in state ``device``."""
    adb = client(host, port)
    rows = []
    for info in list_devices(adb):
        row = PhoneRow(info.serial, info.state, adb=f"{host}:{adb.port}")
        if info.state == "device":
            try:
                phone = AdbPhone(info.serial, host=host, port=adb.port)
                d = phone.device()
                row.width, row.height, row.dpi, row.model, row.kind = d.width, d.height, d.extra["dpi"], \
                    d.extra["model"], d.kind
            except PhoneError as exc:
                row.error = str(exc)
        rows.append(row)
    return rows


def check_lake(lake: Any) -> Any:
    """Open the lake and read its table versions, so a missing or broken lake fails before any collection."""
    from datalake.lake import Lake

    target = lake if isinstance(lake, Lake) else Lake.open(str(lake))
    target.versions()
    return target


def collect_on_devices(lake: Any, serials: list[str], tasks: Iterable[str], *, seeds: Iterable[int] = (0,),
                       host: str = "127.0.0.1", port: int | None = None, adb: list[str] | None = None,
                       options: FarmOptions | None = None, backend: str = "local", address: str | None = None,
                       lease_wait: float = 0.0, command: str = "phoneloop collect run", **kw: Any) -> CollectReport:
    """Run every (task, seed) job from one queue over the phones of one or more adb servers
    (one thread per phone; ``backend="ray"``: one Ray actor per phone, see ``collectors.farm_pool``).
    Every phone is leased for the run (``fleet.leases``), waiting up to ``lease_wait`` seconds for one
    another run holds; ``PhoneLeased`` names the holder."""
    from fleet.backends import check_backend

    check_backend(backend, address)
    opts = options or FarmOptions(**kw)
    load_policy_factory(opts.policy)
    target = check_lake(lake)
    servers = [parse_adb(s) for s in adb] if adb else [(host, client(host, port).port)]
    refs, problems = resolve_phones(list(serials), servers)
    if not refs:
        raise DeviceNotFound("no usable phone: " + ("; ".join(problems) or "the adb servers list no phones"))
    from collectors.farm_pool import collect_on_backend
    from fleet.leases import Leases

    with Leases.take([r.label for r in refs], command=command, wait=lease_wait):
        return collect_on_backend(target, refs, list(tasks), list(seeds), opts, problems, backend, address)
