"""Label Studio push and pull: tasks/s for 1,000 steps against a real Label Studio.

    .venv/bin/python bench/annotate_bench.py           # 1,000 steps (100 episodes of 10)
    .venv/bin/python bench/annotate_bench.py --quick   # 100 steps
    .venv/bin/python bench/annotate_bench.py --server-lake /tmp/lake  # reuse that lake's Label Studio

Starts a local Label Studio for a temporary lake (``annotate.server.serve``; the first
start migrates its database, which is not timed), then measures, in the same run:

- push: ``annotate.push.push`` through the SDK client (``annotate.client``) against
  today's figure: the same push through the hand-written httpx client it replaced
  (``HttpxClient`` below, the former ``annotate/client.py`` calls), and against a bare
  import of the same prepared task dicts;
- pull: ``annotate.pull.pull`` through the SDK against the same pull through the httpx
  client, and against the bare JSON export it reads;
- webhook acknowledgement latency: real payloads Label Studio posted (captured by a
  loopback receiver while the annotations were created) replayed one at a time to the
  phoneloop API's ``POST /webhooks/label-studio`` (uvicorn on 127.0.0.1): the ack after
  one durable commit to the webhook inbox (the background ingest running meanwhile), p50
  and p99 in ms, against the old inline ingest (the handler before the queue, mounted on
  the same app as ``/bench/inline-webhook``) measured in the same run; then how long the
  background ingest took to write every row after the last ack.

Annotations are created through the API first (one POST per task, as annotators'
browsers do; that time is printed too). Prints tasks/s and the ratios; timings are
printed, never asserted. The machine is shared: run twice and compare ratios, not
absolute figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path

import httpx
import uvicorn
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotate import configs, hooks, pull, push  # noqa: E402
from annotate import server as ls  # noqa: E402
from annotate.tasks import step_tasks  # noqa: E402
from api.app import create_app  # noqa: E402
from api.settings import ApiSettings  # noqa: E402
from datalake.lake import Lake  # noqa: E402
from datalake.types import Action, Device, Episode, Observation, Step  # noqa: E402

W, H = 1080, 2400


def _png(seed: int) -> bytes:
    img = Image.new("RGB", (W // 8, H // 8), (seed * 37 % 256, seed * 91 % 256, seed * 53 % 256))
    img = img.resize((W, H))
    buf = BytesIO()
    img.save(buf, "PNG", compress_level=1)
    return buf.getvalue()


def episodes(n_episodes: int, n_steps: int) -> list[Episode]:
    out = []
    for e in range(n_episodes):
        steps = [Step(Observation(_png(e * n_steps + i)), Action("tap", x=100 + i * 7, y=200 + e % 1000))
                 for i in range(n_steps - 1)]
        steps.append(Step(Observation(_png(e * n_steps + n_steps - 1)), Action("terminate", status="success")))
        out.append(Episode(instruction=f"bench {e}", source="agent", device=Device(W, H), steps=tuple(steps),
                           outcome="failure", verified_by="verifier"))
    return out


class HttpxClient:
    """Today's baseline: the hand-written httpx calls ``annotate/client.py`` made before the SDK."""

    def __init__(self, url: str, token: str):
        self._http = httpx.Client(base_url=url, timeout=120, trust_env=False,
                                  headers={"Authorization": f"Token {token}"})

    def _call(self, method, path, **kw):
        response = self._http.request(method, path, **kw)
        response.raise_for_status()
        return response.json() if response.content else None

    def project(self, title):
        from annotate.errors import ProjectNotFound

        body = self._call("GET", "/api/projects", params={"page_size": 1000})
        for p in body["results"] if isinstance(body, dict) else body:
            if p["title"] == title:
                return p
        raise ProjectNotFound(title)

    def create_project(self, title, label_config, **fields):
        return self._call("POST", "/api/projects", json={"title": title, "label_config": label_config, **fields})

    def import_tasks(self, project_id, tasks):
        return self._call("POST", f"/api/projects/{project_id}/import", json=tasks)

    def tasks(self, project_id, *, full=True, page_size=1000):
        out, page = [], 1
        while True:
            try:
                body = self._call("GET", "/api/tasks", params={"project": project_id, "page": page,
                                                               "page_size": page_size,
                                                               "fields": "all" if full else "task_only"})
            except httpx.HTTPStatusError:
                return out
            out.extend(body["tasks"])
            if len(out) >= body.get("total", 0) or not body["tasks"]:
                return out
            page += 1

    def export(self, project_id):
        return self._call("GET", f"/api/projects/{project_id}/export", params={"exportType": "JSON"})

    def users(self):
        return {u["id"]: u for u in self._call("GET", "/api/users")}


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 steps instead of 1,000")
    parser.add_argument("--server-lake", help="a lake whose Label Studio to use (started if needed, kept running)")
    args = parser.parse_args()
    n_episodes, n_steps = (10, 10) if args.quick else (100, 10)
    total = n_episodes * n_steps
    with tempfile.TemporaryDirectory(prefix="phoneloop-annotate-bench-") as tmp:
        lakes = [Lake.init(Path(tmp) / name) for name in ("sdk", "httpx")]
        for lake in lakes:
            lake.write_episodes(episodes(n_episodes, n_steps))
        home = args.server_lake or lakes[0].uri
        print(f"{total} steps in the lake; starting Label Studio (first start migrates: ~1 min) ...")
        (server, startup) = timed(lambda: ls.serve(home, say=lambda m: None))
        print(f"Label Studio up in {startup:.1f} s at {server.url}")
        try:
            with server.client() as client:
                run(lakes, client, HttpxClient(server.url, server.token), total, Path(tmp).name, server)
        finally:
            if not args.server_lake:
                ls.stop(home)


def run(lakes: list[Lake], client, baseline, total: int, tag: str, server=None) -> None:
    sdk_lake, httpx_lake = lakes
    rows = push.select_steps(sdk_lake, where="true")
    prepared = step_tasks(rows, push.DEFAULT_FRAMES_URL)
    bare = client.create_project(f"bare-{tag}", configs.step_review())
    _, bare_s = timed(lambda: [client.import_tasks(bare["id"], prepared[i:i + 500])
                               for i in range(0, len(prepared), 500)])
    old, old_s = timed(lambda: push.push(httpx_lake, baseline, f"httpx-{tag}", where="true"))
    report, push_s = timed(lambda: push.push(sdk_lake, client, f"sdk-{tag}", where="true"))
    assert report.pushed == old.pushed == total, (report, old)
    _, again_s = timed(lambda: push.push(sdk_lake, client, f"sdk-{tag}", where="true"))
    print(f"push     SDK {total / push_s:7.1f} tasks/s   httpx (today) {total / old_s:7.1f} tasks/s   "
          f"ratio {old_s / push_s:.2f}   bare import {total / bare_s:7.1f} tasks/s   "
          f"(a repeated push that skips all: {again_s:.2f} s)")
    got, receiver = _receiver()
    hooks.register(client, f"sdk-{tag}", receiver, "bench")
    tasks = client.tasks(report.project_id)
    _, annotate_s = timed(lambda: [client.create_annotation(t["id"], t["predictions"][0]["result"]) for t in tasks])
    print(f"annotate {total / annotate_s:7.1f} annotations/s created through the API (one POST each, "
          "Label Studio posting each to the webhook receiver)")
    _, export_s = timed(lambda: client.export(report.project_id))
    old_pull, old_pull_s = timed(lambda: pull.pull(httpx_lake, baseline, f"sdk-{tag}"))  # same project, own lake
    pulled, pull_s = timed(lambda: pull.pull(sdk_lake, client, f"sdk-{tag}"))
    assert pulled.written == old_pull.written == total, (pulled, old_pull)
    print(f"pull     SDK {total / pull_s:7.1f} tasks/s   httpx (today) {total / old_pull_s:7.1f} tasks/s   "
          f"ratio {old_pull_s / pull_s:.2f}   bare export {total / export_s:7.1f} tasks/s")
    _webhook_latency(got[:200], server)


def _receiver():
    got = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            got.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return got, f"http://127.0.0.1:{server.server_port}"


def _webhook_latency(payloads: list[bytes], server=None) -> None:
    """Replay captured payloads to the API's webhook: the acknowledgement through the durable
    queue (what Label Studio waits for) against the old inline ingest, in the same run."""
    if server is not None:  # the API resolves people through this Label Studio, as deployed
        os.environ["PHONELOOP_LABEL_STUDIO_URL"], os.environ["PHONELOOP_LABEL_STUDIO_TOKEN"] = server.url, server.token
    with tempfile.TemporaryDirectory(prefix="phoneloop-webhook-bench-") as tmp:
        inline_lake, queued_lake = (Lake.init(Path(tmp) / name) for name in ("inline", "queued"))
        for lake in (inline_lake, queued_lake):
            lake.write_episodes(episodes(100, 10))
        inline = _replay(inline_lake, payloads, "/bench/inline-webhook")
        queued = _replay(queued_lake, payloads, hooks.ROUTE)
        waited = _wait_ingested(queued_lake, len(set(payloads)))
        written = Lake.open(queued_lake.uri).sql("SELECT count(*) FROM annotations").column(0)[0].as_py()
        expected = Lake.open(inline_lake.uri).sql("SELECT count(*) FROM annotations").column(0)[0].as_py()
    print(f"webhook  {len(payloads)} real payloads replayed to the API, one at a time:")
    print(f"         ack through the durable queue  p50 {_p(queued, 0.5):6.1f} ms  p99 {_p(queued, 0.99):6.1f} ms  "
          f"max {max(queued):6.1f} ms")
    print(f"         old inline ingest (baseline)   p50 {_p(inline, 0.5):6.1f} ms  p99 {_p(inline, 0.99):6.1f} ms  "
          f"max {max(inline):6.1f} ms")
    print(f"         ratio inline/queued: p50 {_p(inline, 0.5) / _p(queued, 0.5):.2f}x, "
          f"p99 {_p(inline, 0.99) / _p(queued, 0.99):.2f}x; the background ingest had written "
          f"{written}/{expected} rows {waited:.1f} s after the last ack")
    assert written == expected, (written, expected)
    assert all(json.loads(b)["annotation"]["completed_by"] for b in payloads)


def _replay(lake: Lake, payloads: list[bytes], route: str) -> list[float]:
    from annotate import webhook

    app = create_app(lake, ApiSettings(webhook_secret="bench", refresh_s=0.0))

    @app.post("/bench/inline-webhook", status_code=201)
    def inline(payload: dict) -> dict:  # the handler before the queue: ingest while Label Studio waits
        with app.state.browser.fresh_lake() as fresh:
            return webhook.ingest(fresh, payload)

    port = _free_port()
    api = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=api.run, daemon=True)
    thread.start()
    while not api.started:
        time.sleep(0.05)
    times = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=30) as http:
        http.get("/health")
        for body in payloads:
            start = time.perf_counter()
            response = http.post(route, content=body, headers={hooks.SECRET_HEADER: "bench",
                                                               "Content-Type": "application/json"})
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code in (201, 202), response.text
    if route == hooks.ROUTE:
        _wait_ingested(lake, len(set(payloads)))
    api.should_exit = True
    thread.join(10)
    return times


def _wait_ingested(lake: Lake, deliveries: int, timeout: float = 300.0) -> float:
    from annotate import inbox

    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        done = Lake.open(lake.uri).sql("SELECT count(DISTINCT delivery_id) FROM webhook_inbox "
                                       "WHERE kind IN ('ingested', 'failed')").column(0)[0].as_py()
        if done >= deliveries and not inbox.pending(Lake.open(lake.uri)):
            break
        time.sleep(0.2)
    return time.perf_counter() - start


def _p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return statistics.median(ordered) if q == 0.5 else ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


if __name__ == "__main__":
    main()
