"""Placement by host and serial on a real two-node cluster (issue 32): the same serial on two hosts, each
host's node advertising its own ``adb:HOST:PORT/SERIAL``: each phone's actor runs on its host's node."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.scale.ray_nodes import ENV, RayNodes

ROOT = str(Path(__file__).resolve().parents[2])
A, B = "10.0.0.7:5037/emulator-5554", "10.0.0.8:5037/emulator-5554"
DRIVER = """
import json, sys, ray
from fleet.backends import RayBackend
from fleet.pool import Pool
backend = RayBackend(sys.argv[1], target="tests.scale.ray_jobs:where", run="pin")
nodes = {n["NodeID"]: sorted(k for k in n["Resources"] if k.startswith("adb:")) for n in ray.nodes() if n["Alive"]}
placed = {}
def handle(m):
    if m["kind"] == "node":
        placed[m["phone"]] = nodes[m["node"]]
    return int(m["kind"] == "result")
jobs = [{"job": i} for i in range(2)]
pool = Pool(backend, "adb", [sys.argv[2], sys.argv[3]], jobs, (), every_phone=True)
left = pool.run(handle)
print(json.dumps({"placed": placed, "left": left}))
"""


def test_the_same_serial_on_two_hosts_runs_on_each_hosts_node():
    with RayNodes(head_resources=json.dumps({f"adb:{A}": 1}), worker_resources=json.dumps({f"adb:{B}": 1})) as nodes:
        out = subprocess.run([sys.executable, "-c", DRIVER, nodes.address, A, B], capture_output=True, text=True,
                             timeout=300, cwd=ROOT, env={**ENV, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # each phone's jobs ran on the node advertising its own host's resource, never the other
    assert result["left"] == 0 and set(result["placed"]) == {A, B}, result
    for phone, resources in result["placed"].items():
        assert resources == [f"adb:{phone}"], result
