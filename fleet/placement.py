"""Where a phone's worker runs on a Ray cluster, and whether every phone's actor can run at all.

    plan = place([("adb", "10.0.0.7:5037/emulator-5554"), ("mock", "mock-0")], nodes_of(ray))
    options = actor_options("adb", "10.0.0.7:5037/emulator-5554", "run1", plan)

A real phone is reachable only from the machine whose adb server sees it, so its actor
asks for a custom resource that only that machine's node advertises. A farm phone is
named ``HOST:PORT/SERIAL`` (the adb server that lists it, and its serial): its resource is
``adb:HOST:PORT/SERIAL`` — host **and** serial, since every emulator is ``emulator-5554``
on its own host — started with ``ray start --address HEAD:6379 --resources
'{"adb:10.0.0.7:5037/emulator-5554": 1}'`` (docs/scale.md). A node advertising only
``adb:SERIAL`` (the older form, and the only one for a phone named by its serial alone) is
used when exactly one live node advertises it and no other phone of the run has that
serial; otherwise which node sees the phone is ambiguous, and placement fails naming both
forms. A mock phone runs anywhere.

``place`` is the check made before any actor starts: every resource exists on a live node
and the nodes have the CPUs for every actor (``ACTOR_CPUS`` each, pinned actors on their
node, the others wherever room is left). A local ``ray.init()`` cluster has no custom
resources, and with ``log_to_driver=False`` Ray's own "infeasible" warning never reaches
the user: an actor asking for one would stay pending forever, so ``place`` raises
``PlacementInfeasible`` naming the missing resource instead.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fleet.errors import PlacementInfeasible

ACTOR_CPUS = 0.5  # a phone worker mostly waits on its phone or its policy
PIN = 0.001  # how much of its adb resource an actor takes (a node may advertise it with any amount)
MAX_RESTARTS = 2  # Ray restarts a phone actor whose process died this many times (its job is requeued once)


@dataclass(frozen=True)
class Node:
    """One live node of the cluster, as placement sees it."""

    node_id: str
    address: str
    cpus: float
    resources: frozenset[str] = field(default_factory=frozenset)  # its custom resources (adb:...)


def nodes_of(ray: Any) -> list[Node]:
    """The cluster's live nodes (``ray.nodes()``), with their CPUs and ``adb:`` resources."""
    out = []
    for n in ray.nodes():
        if not n.get("Alive"):
            continue
        res = n.get("Resources", {})
        out.append(Node(n["NodeID"], n.get("NodeManagerAddress", "?"), float(res.get("CPU", 0.0)),
                        frozenset(k for k in res if k.startswith("adb:"))))
    return out


def adb_resources(phone: str) -> list[str]:
    """The resources that may pin ``phone``'s actor, preferred first: ``adb:HOST:PORT/SERIAL``
    for a farm phone, then ``adb:SERIAL``."""
    hostport, _, serial = str(phone).rpartition("/")
    return [f"adb:{hostport}/{serial}", f"adb:{serial}"] if hostport else [f"adb:{serial}"]


def place(actors: list[tuple[str, str]], nodes: list[Node]) -> dict[str, str | None]:
    """The resource pinning each ``(kind, phone)`` actor (None: anywhere), once every actor is
    known to fit on ``nodes``; PlacementInfeasible naming what is missing otherwise."""
    if not nodes:
        raise PlacementInfeasible("the Ray cluster has no live node")
    serials = Counter(str(p).rpartition("/")[2] for kind, p in actors if kind == "adb")
    plan: dict[str, str | None] = {}
    for kind, phone in actors:
        plan[phone] = _pin(phone, nodes, serials) if kind == "adb" else None
    _check_cpus(plan, nodes)
    return plan


def _pin(phone: str, nodes: list[Node], serials: Counter) -> str:
    wanted = adb_resources(phone)
    if any(wanted[0] in n.resources for n in nodes):
        return wanted[0]
    if len(wanted) > 1:  # a farm phone: the serial-only form, when unambiguous
        having = [n for n in nodes if wanted[1] in n.resources]
        serial = wanted[1].removeprefix("adb:")
        if len(having) == 1 and serials[serial] == 1:
            return wanted[1]
        if len(having) > 1 or serials[serial] > 1:
            where = ", ".join(n.address for n in having) or "no node"
            raise PlacementInfeasible(
                f"cannot place the actor of phone {phone}: no live node advertises the resource {wanted[0]!r}, and "
                f"{wanted[1]!r} ({where}) cannot tell which host's {serial} it is ({serials[serial]} phone(s) of this "
                f"run have that serial): start the node that sees it with "
                f"ray start --address HEAD:6379 --resources '{{\"{wanted[0]}\": 1}}'")
    custom = sorted({r for n in nodes for r in n.resources}) or ["none"]
    also = f" (nor {wanted[1]!r})" if len(wanted) > 1 else ""
    raise PlacementInfeasible(
        f"cannot place the actor of phone {phone}: no live node of the Ray cluster advertises the resource "
        f"{wanted[0]!r}{also}; start the node whose adb server sees it with ray start --address HEAD:6379 "
        f"--resources '{{\"{wanted[0]}\": 1}}' (the cluster's adb resources: {', '.join(custom)}; a local "
        f"ray.init() cluster has none: pass --address)")


def _check_cpus(plan: dict[str, str | None], nodes: list[Node]) -> None:
    """Pinned actors take ACTOR_CPUS on a node holding their resource, the others wherever room is left."""
    room = {n.node_id: _slots(n.cpus) for n in nodes}
    for phone, resource in plan.items():
        if resource is None:
            continue
        hosts = [n for n in nodes if resource in n.resources]
        best = max(hosts, key=lambda n: room[n.node_id])
        if room[best.node_id] < 1:
            raise PlacementInfeasible(
                f"cannot place the actor of phone {phone}: it needs {ACTOR_CPUS} CPU on the node advertising "
                f"{resource!r} ({best.address}, {best.cpus:g} CPU), which the run's other actors there already "
                f"take; start that node with more --num-cpus or use fewer phones there")
        room[best.node_id] -= 1
    free = sum(1 for r in plan.values() if r is None)
    if free > sum(room.values()):
        total = sum(n.cpus for n in nodes)
        raise PlacementInfeasible(
            f"cannot place {len(plan)} phone actors of {ACTOR_CPUS} CPU each: the Ray cluster's {len(nodes)} live "
            f"node(s) have {total:g} CPU, room for {sum(_slots(n.cpus) for n in nodes)}; add CPUs (ray start "
            f"--num-cpus) or use fewer phones")


def _slots(cpus: float) -> int:
    return int(math.floor(cpus / ACTOR_CPUS + 1e-9))


def actor_options(kind: str, phone: str, run: str, plan: dict[str, str | None] | None = None) -> dict[str, Any]:
    """Ray actor options for ``phone``'s worker in run ``run`` (actors are named phoneloop-RUN-PHONE).
    ``plan`` is ``place``'s answer; without one an adb phone asks for ``adb:HOST:PORT/SERIAL``.
    Ray restarts an actor whose process died (``max_restarts``) but never reruns the call it was
    running (``max_task_retries=0``): the pool hands that job back once, so it is neither lost nor doubled."""
    options: dict[str, Any] = {"num_cpus": ACTOR_CPUS, "max_restarts": MAX_RESTARTS, "max_task_retries": 0,
                               "name": f"phoneloop-{run}-{phone}", "lifetime": None}
    resource = plan.get(phone) if plan is not None else (adb_resources(phone)[0] if kind == "adb" else None)
    if resource is not None:
        options["resources"] = {resource: PIN}  # pinned to the node whose adb server sees it
    return options
