"""Lake benchmarks: ingest, analytical query, frame fetch — each against a baseline in the same run.

    .venv/bin/python bench/lake_bench.py            # full size (needs ~15 GB of disk, a few minutes)
    .venv/bin/python bench/lake_bench.py --quick    # small smoke run

1. Ingest: episodes of 1080x2400 synthetic screenshots (~135 KB PNG each) through
   ``Lake.write_episodes`` (validation, sha256, dedup, Delta commits), against
   ``pyarrow.parquet.write_table`` of the same PNG bytes.
2. Query: success rate per app and source over >= 1M steps, against the same answer
   computed from an AndroidWorld/AndroidLab-style layout (one JSON file per episode).
3. Frame fetch by sha with >= 100k frames in the lake: p50/p99 of ``Lake.frame``
   against a DuckDB ``WHERE sha256 = ?`` lookup over the same table.
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import struct
import tempfile
import time
import zlib
from io import BytesIO
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step

W, H = 1080, 2400
APPS = ["settings", "contacts", "messages", "shop", "clock", "calendar", "email", "files", "bank", "hotel"]
SOURCES = ["human", "agent", "oracle", "rollout"]


def base_screens(n: int = 8) -> list[bytes]:
    """Screens with UI blocks and a noisy 'photo' band, sized to ~135 KB as PNG."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        img = Image.new("RGB", (W, H), (250, 250, 250))
        d = ImageDraw.Draw(img)
        d.rectangle([0, 0, W, 80], fill=(32, 33, 36))
        d.rectangle([0, 80, W, 260], fill=(26 + 20 * i, 115, 232))
        for row in range(14):
            y = 300 + row * 140
            d.rounded_rectangle([40, y, W - 40, y + 110], radius=24, fill="white", outline=(218, 220, 224))
            d.text((80, y + 40), f"List item {row} on screen {i}", fill=(32, 33, 36))
        band = rng.integers(0, 255, size=(30, W, 3), dtype=np.uint8)
        img.paste(Image.fromarray(band), (0, 1200 + 10 * i))
        buf = BytesIO()
        img.save(buf, "PNG")
        out.append(buf.getvalue())
    return out


def variant(png: bytes, k: int) -> bytes:
    """A distinct, structurally valid PNG: the base plus a tEXt chunk before IEND."""
    body = b"tEXt" + b"phoneloop\x00" + str(k).encode()
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    return png[:-12] + chunk + png[-12:]


def make_episodes(n_eps: int, steps: int, start: int, bases: list[bytes], frame_of=None) -> list[Episode]:
    eps = []
    for e in range(start, start + n_eps):
        rng = random.Random(e)
        step_list = []
        for s in range(steps):
            png = frame_of(e, s) if frame_of else variant(bases[(e + s) % len(bases)], e * steps + s)
            action = Action("tap", x=rng.randrange(W), y=rng.randrange(H)) if s < steps - 1 else \
                Action("terminate", status="success")
            step_list.append(Step(Observation(png, package="com.example"), action))
        eps.append(Episode(instruction=f"task {e % 97}", source=SOURCES[e % 4], device=Device(W, H),
                           app=APPS[e % len(APPS)], outcome="success" if rng.random() < 0.6 else "failure",
                           steps=tuple(step_list), episode_id=f"ep{e:08d}"))
    return eps


def bench_ingest(root: Path, bases: list[bytes], n_steps: int) -> Lake:
    steps_per_ep, per_batch = 20, 16
    n_eps = n_steps // steps_per_ep
    eps = make_episodes(n_eps, steps_per_ep, 0, bases)
    total_bytes = sum(len(s.observation.screenshot) for ep in eps for s in ep.steps)
    pngs = [s.observation.screenshot for ep in eps for s in ep.steps]
    # Disk throughput drifts while the page cache fills: flush dirty pages before each
    # run, alternate the two writers (each three times, on its own copy of the data)
    # and compare medians.
    lake_times, base_times = [], []
    for turn, who in enumerate("ABBAAB"):
        os.sync()
        if who == "A":
            eps = make_episodes(n_eps, steps_per_ep, 0, bases)  # fresh objects: no cached hashes
            lake = Lake.init(root / f"lake{turn}")
            t0 = time.perf_counter()
            for i in range(0, n_eps, per_batch):
                lake.write_episodes(eps[i:i + per_batch])
            lake_times.append(time.perf_counter() - t0)
        else:
            t0 = time.perf_counter()  # the baseline also starts from Python bytes objects
            for i in range(0, len(pngs), per_batch * steps_per_ep):
                chunk = pngs[i:i + per_batch * steps_per_ep]
                table = pa.table({"sha256": [str(k) for k in range(i, i + len(chunk))],
                                  "png": pa.array(chunk, pa.binary())})
                pq.write_table(table, root / f"baseline{turn}-{i}.parquet", compression="none", row_group_size=64)
            base_times.append(time.perf_counter() - t0)
    lake_s, base_s = statistics.median(lake_times), statistics.median(base_times)
    mb = total_bytes / 1e6
    print(f"ingest: {n_steps} steps, {mb:.0f} MB ({total_bytes / n_steps / 1024:.0f} KiB/frame)")
    print(f"  lake.write_episodes   {n_steps / lake_s:8.0f} steps/s  {mb / lake_s:7.1f} MB/s")
    print(f"  pq.write_table        {n_steps / base_s:8.0f} steps/s  {mb / base_s:7.1f} MB/s")
    print(f"  ratio lake/baseline   {base_s / lake_s:.2f}x   (target >= 0.8x and >= 1500 steps/s)")
    return lake


def bench_query(root: Path, n_steps: int) -> None:
    steps_per_ep = 20
    n_eps = n_steps // steps_per_ep
    tiny = [variant(_tiny_png(), k) for k in range(50)]
    lake = Lake.init(root / "qlake")
    t0 = time.perf_counter()
    batch = 2500
    for start in range(0, n_eps, batch):
        eps = make_episodes(min(batch, n_eps - start), steps_per_ep, start, [],
                            frame_of=lambda e, s: tiny[(e + s) % len(tiny)])
        lake.write_episodes(eps)
    print(f"query: {n_steps:,} steps in {n_eps:,} episodes (written in {time.perf_counter() - t0:.0f} s)")
    _write_json_layout(root / "aw", lake)
    q = """
        SELECT e.app, e.source, count(*) AS episodes, sum(s.n) AS steps,
               avg(CASE WHEN e.outcome = 'success' THEN 1.0 ELSE 0.0 END) AS success_rate
        FROM episodes e JOIN (SELECT episode_id, count(*) AS n FROM steps GROUP BY episode_id) s USING (episode_id)
        GROUP BY ALL ORDER BY app, source
    """
    lake = Lake.open(lake.uri)
    t0 = time.perf_counter()
    first = lake.sql(q).to_pylist()
    cold = time.perf_counter() - t0
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        result = lake.sql(q).to_pylist()
        runs.append(time.perf_counter() - t0)
    lake_s = statistics.median(runs)
    t0 = time.perf_counter()
    base = _answer_from_json_layout(root / "aw")
    base_s = time.perf_counter() - t0
    ours = {(r["app"], r["source"]): (r["episodes"], r["steps"], round(float(r["success_rate"]), 9)) for r in result}
    assert ours == base and first == result, "lake and JSON-layout answers differ"
    print(f"  lake SQL              {lake_s * 1000:8.1f} ms (median of 5; first run {cold * 1000:.0f} ms)")
    print(f"  JSON file per episode {base_s * 1000:8.1f} ms")
    print(f"  ratio baseline/lake   {base_s / lake_s:.0f}x   (target <= 300 ms and >= 50x)")


def _tiny_png() -> bytes:
    buf = BytesIO()
    Image.new("RGB", (W, H), "white").save(buf, "PNG")
    return buf.getvalue()


def _write_json_layout(folder: Path, lake: Lake) -> None:
    """The AndroidWorld/AndroidLab shape: <episode>.json with its steps, screenshots in a folder."""
    folder.mkdir(parents=True)
    (folder / "screenshots").mkdir()
    eps = lake.sql("SELECT episode_id, app, source, outcome, instruction FROM episodes").to_pylist()
    steps = lake.sql("SELECT episode_id, step_index, action_json, frame_sha FROM steps "
                     "ORDER BY episode_id, step_index").to_pylist()
    by_ep: dict[str, list] = {}
    for s in steps:
        by_ep.setdefault(s["episode_id"], []).append(
            {"step": s["step_index"], "action": json.loads(s["action_json"]),
             "screenshot": f"screenshots/{s['frame_sha']}.png"})
    for e in eps:
        record = {"goal": e["instruction"], "app": e["app"], "source": e["source"],
                  "is_successful": e["outcome"] == "success", "steps": by_ep[e["episode_id"]]}
        (folder / f"{e['episode_id']}.json").write_text(json.dumps(record))


def _answer_from_json_layout(folder: Path) -> dict:
    acc: dict[tuple, list] = {}
    for path in folder.glob("*.json"):
        record = json.loads(path.read_text())
        a = acc.setdefault((record["app"], record["source"]), [0, 0, 0])
        a[0] += 1
        a[1] += len(record["steps"])
        a[2] += record["is_successful"]
    return {k: (n, s, round(ok / n, 9)) for k, (n, s, ok) in acc.items()}


def bench_frames(lake: Lake, bases: list[bytes], n_frames: int, have: int) -> None:
    t0 = time.perf_counter()
    start = have // 20
    while have < n_frames:
        eps = make_episodes(16, 20, start, bases)
        lake.write_episodes(eps)
        start += 16
        have += 320
    fill_s = time.perf_counter() - t0
    lake = Lake.open(lake.uri)
    shas = lake.sql("SELECT sha256 FROM frames").column(0).to_pylist()
    print(f"frames: {len(shas):,} frames in the lake (filled in {fill_s:.0f} s)")
    rng = random.Random(1)
    sample = rng.sample(shas, 200)
    t0 = time.perf_counter()
    lake.frame(sample[0])
    index_s = time.perf_counter() - t0
    ours = _timed(lambda sha: lake.frame(sha), sample)
    con = lake.con
    baseline = _timed(lambda sha: con.execute("SELECT png FROM frames WHERE sha256 = ?", [sha]).fetchone()[0],
                      sample[:50])
    print(f"  Lake.frame            p50 {ours[0]:6.2f} ms  p99 {ours[1]:6.2f} ms  (index built in {index_s:.2f} s)")
    print(f"  DuckDB WHERE sha256=? p50 {baseline[0]:6.2f} ms  p99 {baseline[1]:6.2f} ms")
    print(f"  ratio baseline/lake   {baseline[0] / ours[0]:.1f}x   (target p50 <= 30 ms)")


def _timed(fetch, shas) -> tuple[float, float]:
    times = []
    for sha in shas:
        t0 = time.perf_counter()
        data = fetch(sha)
        times.append((time.perf_counter() - t0) * 1000)
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--dir", default=None, help="work folder (default: a temporary one, removed after)")
    parser.add_argument("--only", choices=["ingest", "query", "frames"], default=None)
    args = parser.parse_args()
    ingest_steps, query_steps, frames = (640, 20_000, 2_000) if args.quick else (3_200, 1_000_000, 100_000)
    root = Path(args.dir or tempfile.mkdtemp(prefix="phoneloop-bench-"))
    try:
        bases = base_screens()
        print(f"cpus: {os.cpu_count()}  synthetic frame: {len(bases[0]) / 1024:.0f} KiB, {W}x{H}")
        if args.only in (None, "ingest", "frames"):
            lake = bench_ingest(root, bases, ingest_steps)
        if args.only in (None, "query"):
            bench_query(root, query_steps)
        if args.only in (None, "frames"):
            bench_frames(lake, bases, frames, ingest_steps)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
