"""Frame serving: `phoneloop serve`'s GET /frames/{sha}.png against a static file server.

    .venv/bin/python bench/api_bench.py            # 64 frames of 1080x2400, 8 clients, 3 rounds of 4 s
    .venv/bin/python bench/api_bench.py --quick    # smoke run

Both servers run in their own process on 127.0.0.1 and serve the same PNG bytes: the
service reads them from the lake (frame index + in-memory cache), the baseline is the
stdlib ``ThreadingHTTPServer`` (HTTP/1.1 keep-alive) over a folder of ``<sha>.png``
files. Clients are processes with threads, each thread one keep-alive connection that
requests random frames for a fixed time. Rounds alternate between the servers; the
median round is reported: requests/s, p50/p99 latency and the ratio (target >= 0.5).
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step

W, H = 1080, 2400


def screens(n: int) -> list[bytes]:
    """n distinct phone-sized PNGs (UI blocks and a noisy band; ~100-150 KB each)."""
    rng = np.random.default_rng(7)
    base = Image.new("RGB", (W, H), (248, 248, 248))
    draw = ImageDraw.Draw(base)
    draw.rectangle([0, 0, W, 90], fill=(30, 30, 34))
    for row in range(15):
        top = 220 + row * 140
        draw.rounded_rectangle([40, top, W - 40, top + 112], radius=22, fill="white", outline=(210, 212, 218))
    band = Image.fromarray(rng.integers(0, 255, size=(36, W, 3), dtype=np.uint8))
    out = []
    for i in range(n):
        img = base.copy()
        ImageDraw.Draw(img).rectangle([0, 90, W, 200], fill=(20 + i % 200, 110, 230))
        ImageDraw.Draw(img).text((80, 130), f"screen {i}", fill="white")
        img.paste(band, (0, 1100 + (i * 7) % 900))
        buf = BytesIO()
        img.save(buf, "PNG")
        out.append(buf.getvalue())
    return out


def build(folder: Path, n_frames: int) -> tuple[str, Path, list[str]]:
    """A lake holding n_frames screenshots, and a folder of the same bytes named <sha>.png."""
    pngs = screens(n_frames)
    episodes = []
    for i in range(0, n_frames, 8):
        steps = [Step(Observation(p), Action("tap", x=540, y=600)) for p in pngs[i:i + 8]]
        episodes.append(Episode(instruction=f"bench {i}", source="agent", device=Device(W, H), steps=steps))
    lake = Lake.init(folder / "lake")
    lake.write_episodes(episodes)
    static = folder / "static" / "frames"
    static.mkdir(parents=True)
    shas = []
    for step in (s for e in episodes for s in e.steps):
        sha = step.observation.sha256
        (static / f"{sha}.png").write_bytes(step.observation.screenshot)
        shas.append(sha)
    return lake.uri, folder / "static", shas


class QuietHandler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like uvicorn

    def log_message(self, *args) -> None:
        pass


def static_server(directory: str, port: int) -> None:
    ThreadingHTTPServer.daemon_threads = True
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(QuietHandler, directory=directory))
    server.serve_forever()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port: int, path: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not answer {path}")


def client_process(port: int, shas: list[str], threads: int, seconds: float, seed: int, queue) -> None:
    """Run `threads` keep-alive clients for `seconds`; put the latencies (s) on the queue."""
    import threading

    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker(k: int) -> None:
        rng = random.Random(seed * 1000 + k)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = []
        while time.perf_counter() < stop:
            start = time.perf_counter()
            conn.request("GET", f"/frames/{rng.choice(shas)}.png")
            response = conn.getresponse()
            body = response.read()
            if response.status != 200 or not body:
                raise RuntimeError(f"bad response {response.status}")
            mine.append(time.perf_counter() - start)
        conn.close()
        with lock:
            latencies.extend(mine)

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    queue.put(latencies)


def load(port: int, shas: list[str], clients: int, procs: int, seconds: float) -> dict[str, float]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    workers = [ctx.Process(target=client_process, args=(port, shas, n, seconds, i, queue)) for i, n in enumerate(per)]
    for w in workers:
        w.start()
    latencies = [x for _ in workers for x in queue.get()]
    for w in workers:
        w.join()
    latencies.sort()
    return {"rps": len(latencies) / seconds, "p50_ms": 1000 * latencies[len(latencies) // 2],
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 frames, 1 s rounds")
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--clients", type=int, default=8, help="concurrent keep-alive connections")
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=4.0, help="per round and server")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.frames, args.seconds, args.rounds = 16, 1.0, 1
    folder = Path(tempfile.mkdtemp(prefix="phoneloop-api-bench-"))
    servers: list[subprocess.Popen | multiprocessing.Process] = []
    try:
        t0 = time.perf_counter()
        lake_uri, static_dir, shas = build(folder, args.frames)
        size = sum((static_dir / "frames" / f"{s}.png").stat().st_size for s in shas) / len(shas)
        print(f"{len(shas)} frames, {size / 1024:.0f} KiB each on average, built in {time.perf_counter() - t0:.1f} s")
        api_port, static_port = free_port(), free_port()
        env = {**os.environ, "PHONELOOP_API_TOKEN": "", "PHONELOOP_API_AUTH_READS": "0"}
        servers.append(subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "serve", "--lake", lake_uri,
                                         "--port", str(api_port)], env=env))
        static = multiprocessing.get_context("spawn").Process(target=static_server,
                                                              args=(str(static_dir), static_port), daemon=True)
        static.start()
        servers.append(static)
        wait_ready(api_port, f"/frames/{shas[0]}.png")
        wait_ready(static_port, f"/frames/{shas[0]}.png")
        results: dict[str, list[dict[str, float]]] = {"phoneloop": [], "static": []}
        for name, port in (("phoneloop", api_port), ("static", static_port)):
            load(port, shas, args.clients, args.client_procs, min(1.0, args.seconds))  # warm up (and fill caches)
        for _ in range(args.rounds):
            for name, port in (("phoneloop", api_port), ("static", static_port)):
                results[name].append(load(port, shas, args.clients, args.client_procs, args.seconds))
        print(f"{args.clients} clients in {args.client_procs} processes, {args.rounds} x {args.seconds:g} s per server "
              f"(median round), {os.cpu_count()} CPUs")
        median = {}
        for name, rounds in results.items():
            median[name] = sorted(rounds, key=lambda r: r["rps"])[len(rounds) // 2]
            r = median[name]
            print(f"  {name:<10} {r['rps']:>8.0f} req/s   p50 {r['p50_ms']:6.2f} ms   p99 {r['p99_ms']:6.2f} ms")
        ratio = median["phoneloop"]["rps"] / median["static"]["rps"]
        print(f"  throughput ratio phoneloop/static: {ratio:.2f} (target >= 0.5); "
              f"p99 ratio: {median['phoneloop']['p99_ms'] / median['static']['p99_ms']:.2f}")
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(10) if isinstance(server, subprocess.Popen) else server.join(10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
