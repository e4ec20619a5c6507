"""Where a phone's worker runs on a Ray cluster: the actor options for one phone.

A real phone is reachable only from the machine whose adb server sees it, so its actor
asks for the custom resource ``adb:<SERIAL>`` and Ray places it on the node started with
``ray start --address HEAD:6379 --resources '{"adb:SERIAL": 1}'`` (docs/scale.md). A
mock phone runs anywhere. A local ``ray.init()`` cluster has no custom resources: an
``adb`` actor there stays pending (tests start nodes that advertise them).
"""

from __future__ import annotations

from typing import Any

ACTOR_CPUS = 0.5  # a phone worker mostly waits on its phone or its policy


def adb_resource(phone: str) -> str:
    """The custom resource naming the node that sees ``phone`` (a farm phone is HOST:PORT/SERIAL)."""
    return f"adb:{str(phone).rpartition('/')[2]}"


def actor_options(kind: str, phone: str, run: str) -> dict[str, Any]:
    """Ray actor options for ``phone``'s worker in run ``run`` (actors are named phoneloop-RUN-PHONE)."""
    options: dict[str, Any] = {"num_cpus": ACTOR_CPUS, "max_restarts": 0, "name": f"phoneloop-{run}-{phone}",
                               "lifetime": None}
    if kind == "adb":
        options["resources"] = {adb_resource(phone): 0.001}  # pinned to the node whose adb server sees it
    return options
