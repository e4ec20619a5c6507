"""Webhook acknowledgement: the journal (fsync'd append) against a Delta commit per delivery.

    .venv/bin/python bench/webhook_bench.py              # 300 deliveries to each, interleaved
    .venv/bin/python bench/webhook_bench.py --n 1000

Two phoneloop APIs (uvicorn on 127.0.0.1, one process each, the background ingest running
as in production) over two copies of the same lake: one acknowledges after appending the
delivery to the lake's journal (``annotate.journal``, the default on a local lake), the other
after one Delta commit to ``webhook_inbox`` (``PHONELOOP_WEBHOOK_JOURNAL=0``: what object-storage
lakes do, and what every lake did before). Deliveries alternate between the two, so both see
the same machine load. Prints p50/p99 of the time to the 202 for each and the ratio, then checks
that every acknowledged delivery became an annotations row in both lakes.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from datalake.lake import Lake  # noqa: E402
from datalake.types import Action, Device, Episode, Observation, Step  # noqa: E402

SECRET = "bench-secret"
SERVE = ("import sys, uvicorn; from api.app import create_app; from api.settings import ApiSettings; "
         "uvicorn.run(create_app(sys.argv[1], ApiSettings(webhook_secret=sys.argv[3])), host='127.0.0.1', "
         "port=int(sys.argv[2]), log_level='warning')")


def _episode() -> Episode:
    from PIL import Image
    from io import BytesIO

    buf = BytesIO()
    Image.new("RGB", (108, 240), (40, 90, 160)).save(buf, "PNG")
    obs = Observation(screenshot=buf.getvalue(), ui_tree="<hierarchy/>", package="com.android.settings")
    steps = tuple(Step(observation=obs, action=Action(type="tap", x=50, y=60 + i)) for i in range(3))
    return Episode(instruction="bench the webhook", steps=steps, outcome="failure", device=Device(108, 240),
                   app="settings", source="human")


def _payload(eid: str, n: int) -> dict:
    result = [{"type": "keypointlabels", "from_name": "point", "to_name": "image", "original_width": 108,
               "original_height": 240, "value": {"x": 10 + n % 80, "y": 20.0, "keypointlabels": ["tap"]}},
              {"type": "choices", "from_name": "action_type", "to_name": "image", "value": {"choices": ["tap"]}}]
    return {"action": "ANNOTATION_CREATED", "project": {"id": 1},
            "task": {"id": 100 + n, "data": {"episode_id": eid, "step_index": n % 3}},
            "annotation": {"id": 1000 + n, "completed_by": 2, "result": result,
                           "updated_at": f"2026-12-07T10:00:{n % 60:02d}.{n:06d}Z"}}


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(lake_uri: str, journal: bool) -> tuple[subprocess.Popen, str]:
    port = _port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PHONELOOP_WEBHOOK_JOURNAL": "1" if journal else "0",
           "PHONELOOP_LABEL_STUDIO_URL": "", "PHONELOOP_LABEL_STUDIO_TOKEN": ""}
    proc = subprocess.Popen([sys.executable, "-c", SERVE, lake_uri, str(port), SECRET], env=env, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2, trust_env=False).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"the API on {url} did not start")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=300, help="deliveries to each API")
    args = parser.parse_args()
    ep = _episode()
    with tempfile.TemporaryDirectory(prefix="phoneloop-webhook-bench-") as tmp:
        lakes = {}
        for name in ("journal", "delta"):
            lakes[name] = Lake.init(Path(tmp) / name)
            lakes[name].write_episodes([ep])
        eid = lakes["journal"].sql("SELECT episode_id FROM episodes").column(0).to_pylist()[0]
        servers = {name: _serve(lakes[name].uri, name == "journal") for name in lakes}
        times: dict[str, list[float]] = {name: [] for name in lakes}
        try:
            with httpx.Client(trust_env=False, timeout=30) as http:
                for n in range(args.n):
                    body = json.dumps(_payload(eid, n)).encode()
                    for name in (("journal", "delta") if n % 2 else ("delta", "journal")):
                        t0 = time.perf_counter()
                        r = http.post(f"{servers[name][1]}/webhooks/label-studio", content=body,
                                      headers={"X-Webhook-Secret": SECRET, "Content-Type": "application/json"})
                        times[name].append((time.perf_counter() - t0) * 1000)
                        assert r.status_code == 202, r.text
                time.sleep(3)  # let the background ingests finish
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(30)
        print(f"webhook acknowledgement over HTTP, {args.n} deliveries each, interleaved (same load):")
        for name, label in (("delta", "Delta commit per delivery (before; object storage)"),
                            ("journal", "fsync'd journal append (local lakes now)")):
            t = times[name]
            print(f"  {label:52s} p50 {statistics.median(t):7.2f} ms  p99 {_pct(t, 0.99):7.2f} ms  "
                  f"max {max(t):7.2f} ms")
        ratio50 = statistics.median(times["delta"]) / statistics.median(times["journal"])
        ratio99 = _pct(times["delta"], 0.99) / _pct(times["journal"], 0.99)
        print(f"  journal vs Delta commit: {ratio50:.1f}x faster at p50, {ratio99:.1f}x at p99")
        from annotate import inbox

        for name, lake in lakes.items():  # a drain now writes whatever the ingest had not yet
            inbox.drain(Lake.open(lake.uri))
            rows = Lake.open(lake.uri).sql("SELECT count(*) AS n FROM annotations").to_pylist()[0]["n"]
            print(f"  {name}: {rows} annotations rows from {args.n} acknowledged deliveries")


if __name__ == "__main__":
    main()
