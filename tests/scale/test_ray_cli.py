"""`phoneloop collect run --backend ray` with no --address, as a new user first runs it: the local
cluster it starts has no adb resources, so the run fails in seconds naming the resource it needs
(it used to wait 150 s and more with no message and no episode). Ray's start-up is part of the time."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from datalake.lake import Lake
from mockphone.adb import VirtualAdbServer
from tests.scale.ray_nodes import ENV

ROOT = str(Path(__file__).resolve().parents[2])


def test_collect_run_on_ray_without_the_phones_resource_fails_naming_it(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    with VirtualAdbServer(phones=1) as server:
        cmd = [sys.executable, "-m", "phoneloop.cli", "collect", "run", "--task", "app:settings", "--seeds", "1",
               "--adb", f"127.0.0.1:{server.port}", "--backend", "ray", "--lake", lake.uri]
        started = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                             env={**ENV, "PYTHONPATH": ROOT, "COLUMNS": "400"})
        took = time.monotonic() - started
    print(f"\ncollect run --backend ray, impossible placement: exit {out.returncode} after {took:.1f} s "
          "(process start, imports and a local Ray cluster included)")
    assert out.returncode == 2, out.stderr[-3000:]
    message = " ".join(out.stderr.split())
    assert f"'adb:127.0.0.1:{server.port}/emulator-5554'" in message, out.stderr[-3000:]
    assert Lake.open(lake.uri).sql("SELECT count(*) AS n FROM episodes").to_pylist()[0]["n"] == 0
