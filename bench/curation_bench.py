"""Curation benchmarks: perceptual hashing and near-duplicate search, each against a baseline.

    .venv/bin/python bench/curation_bench.py            # full size (~2 minutes on 2 cores)
    .venv/bin/python bench/curation_bench.py --quick    # small smoke run

1. phash throughput: ``curation.phash.phash_many`` (spawn pool over all CPUs, and
   in-process) against a plain ``imagehash.phash(Image.open(BytesIO(png)))`` loop over
   the same synthetic 1080x2400 screens (~135 KB PNG each). Target: >= 1.8x.
2. Near-duplicate search over 1M random 64-bit hashes with planted near-duplicates:
   ``near_duplicate_pairs`` against the brute force (every pair by popcount, the kernel
   of ``near_duplicate_pairs_bruteforce``) timed on a sample of query rows and scaled to
   all n*(n-1)/2 pairs; the sampled rows' neighbours are checked against the fast result.
   Target: >= 100x.
3. Export throughput: ``curation.exports.write_export("sft", ...)`` (prompt building,
   action formatting, sharding, Parquet with datasets features) against
   ``pyarrow.parquet.write_table`` of the same rows, materialised beforehand. Target: >= 0.7x.
Timings are printed, never asserted. Wall-clock ratios are only meaningful on an otherwise
idle machine; the CPU-time ratios printed beside them are much less sensitive to other load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import time
import zlib
from io import BytesIO

import imagehash
import numpy as np
from PIL import Image, ImageDraw

from curation.neardup import clusters, near_duplicate_pairs
from curation.phash import hamming, phash_many

W, H = 1080, 2400


def base_screen(seed: int) -> bytes:
    """A UI-like 1080x2400 screen (bars, cards with text, a noisy 'photo' band), ~135 KB as PNG."""
    rng = np.random.default_rng(seed)
    accent = tuple(int(c) for c in rng.integers(0, 256, size=3))
    img = Image.new("RGB", (W, H), (250, 250, 250))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, W, 80], fill=(32, 33, 36))
    d.rectangle([0, 80, W, 200 + 20 * (seed % 5)], fill=accent)
    cards = 6 + seed % 9
    for row in range(cards):
        y = 320 + row * (1900 // cards)
        d.rounded_rectangle([40, y, W - 40, y + 1900 // cards - 30], radius=24, fill="white", outline=(218, 220, 224))
        d.text((80, y + 30), f"Item {row} on screen {seed}: {rng.integers(10**6)}", fill=(32, 33, 36))
    band = rng.integers(0, 255, size=(30, W, 3), dtype=np.uint8)
    img.paste(Image.fromarray(band), (0, 1000 + 37 * (seed % 30)))
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def with_text_chunk(png: bytes, k: int) -> bytes:
    """A distinct PNG with the same pixels: a tEXt chunk inserted before IEND (cheap variants)."""
    body = b"tEXt" + b"variant\x00" + str(k).encode()
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    return png[:-12] + chunk + png[-12:]


def bench_phash(n_images: int, n_bases: int, rounds: int) -> None:
    bases = [base_screen(s) for s in range(n_bases)]
    pngs = [with_text_chunk(bases[i % n_bases], i) for i in range(n_images)]
    size_kb = np.mean([len(p) for p in pngs]) / 1024
    print(f"phash: {n_images} PNGs of {W}x{H} ({size_kb:.0f} KiB each, {n_bases} distinct screens), "
          f"{os.cpu_count()} CPUs, median of {rounds} interleaved rounds")

    runs = {
        "imagehash": lambda: [int(str(imagehash.phash(Image.open(BytesIO(p)))), 16) for p in pngs],
        "serial": lambda: phash_many(pngs, workers=1),
        "pool": lambda: phash_many(pngs),  # includes starting the spawn pool
    }
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    results = {}
    for _ in range(rounds):  # interleaved, so load from other processes hits all three alike
        for name, run in runs.items():
            c0, t0 = cpu_seconds(), time.perf_counter()
            results[name] = run()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(cpu_seconds() - c0)
    base_s, serial_s, pool_s = (statistics.median(wall[name]) for name in runs)
    base_cpu, serial_cpu, pool_cpu = (statistics.median(cpu[name]) / n_images * 1e3 for name in runs)

    distances = np.array([hamming(int(a), b) for a, b in zip(results["serial"], results["imagehash"])])
    print(f"  imagehash.phash loop        {n_images / base_s:7.1f} images/s   {base_cpu:5.1f} CPU-ms/image")
    print(f"  phash_many(workers=1)       {n_images / serial_s:7.1f} images/s   {serial_cpu:5.1f} CPU-ms/image"
          f"   ratio {base_s / serial_s:.2f}x (CPU {base_cpu / serial_cpu:.2f}x)")
    print(f"  phash_many(all CPUs, spawn) {n_images / pool_s:7.1f} images/s   {pool_cpu:5.1f} CPU-ms/image"
          f"   ratio {base_s / pool_s:.2f}x (CPU {base_cpu / pool_cpu:.2f}x)   (target >= 1.8x)")
    print(f"  pool == in-process: {bool((results['pool'] == results['serial']).all())};  "
          f"Hamming to imagehash.phash: mean {distances.mean():.2f}, max {distances.max()}, "
          f"identical {np.mean(distances == 0):.0%};  load average {os.getloadavg()[0]:.1f}")


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children (the pool's workers), user + system."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def planted_hashes(n: int, threshold: int, rng: np.random.Generator) -> np.ndarray:
    """n random hashes; 1% are copies of others with 1..threshold bits flipped, 0.1% exact copies."""
    hashes = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    k = n // 100
    src, dst = rng.integers(0, n, size=k), rng.integers(0, n, size=k)
    flips = np.zeros(k, dtype=np.uint64)
    n_flips = rng.integers(1, threshold + 1, size=k)
    for c in range(threshold):
        bit = np.uint64(1) << rng.integers(0, 64, size=k).astype(np.uint64)
        flips ^= np.where(c < n_flips, bit, np.uint64(0))
    hashes[dst] = hashes[src] ^ flips
    hashes[rng.integers(0, n, size=n // 1000)] = hashes[rng.integers(0, n, size=n // 1000)]
    return hashes


def brute_force_sample(hashes: np.ndarray, threshold: int, rows: np.ndarray) -> tuple[float, dict]:
    """Seconds per query row of the brute-force kernel, and each sampled row's neighbours."""
    block = max(1, (1 << 22) // len(hashes))  # the reference's block size
    neighbours = {}
    t0 = time.perf_counter()
    for r0 in range(0, len(rows), block):
        idx = rows[r0:r0 + block]
        near = np.bitwise_count(hashes[idx][:, None] ^ hashes[None, :]) <= threshold
        for i, row in zip(idx, near):
            neighbours[int(i)] = set(np.flatnonzero(row).tolist()) - {int(i)}
    return (time.perf_counter() - t0) / len(rows), neighbours


def bench_neardup(n: int, thresholds: list[int], n_queries: int) -> None:
    rng = np.random.default_rng(0)
    for threshold in thresholds:
        hashes = planted_hashes(n, threshold, rng)
        t0 = time.perf_counter()
        pairs = near_duplicate_pairs(hashes, threshold)
        fast_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        labels = clusters(hashes, threshold)
        clusters_s = time.perf_counter() - t0

        rows = rng.choice(n, size=n_queries, replace=False)
        per_row_s, expected = brute_force_sample(hashes, threshold, rows)
        brute_s = per_row_s * n / 2  # n*(n-1)/2 pairs, each row's kernel compares against all n
        found = {int(i): set() for i in rows}
        for a, b in pairs[np.isin(pairs[:, 0], rows) | np.isin(pairs[:, 1], rows)].tolist():
            for i, j in ((a, b), (b, a)):
                if i in found:
                    found[i].add(j)
        agree = found == expected
        print(f"near-duplicates: {n:,} hashes, threshold {threshold}: {len(pairs):,} pairs, "
              f"{len(np.unique(labels)):,} clusters")
        print(f"  near_duplicate_pairs        {fast_s:8.2f} s   (clusters: {clusters_s:.2f} s)")
        print(f"  brute force (est.)          {brute_s:8.0f} s   ({n_queries} sampled rows x n / 2)")
        print(f"  ratio                       {brute_s / fast_s:8.0f}x   (target >= 100x); "
              f"sampled rows agree with brute force: {agree}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    parser.add_argument("--threshold", type=int, action="append",
                        help="near-duplicate radius in bits (repeatable; default 4, full run also 2 and 6)")
    args = parser.parse_args()

    if args.quick:
        bench_phash(n_images=160, n_bases=8, rounds=1)
        bench_neardup(n=1_000_000, thresholds=args.threshold or [4], n_queries=64)
    else:
        bench_phash(n_images=320, n_bases=32, rounds=3)
        bench_neardup(n=1_000_000, thresholds=args.threshold or [2, 4, 6], n_queries=256)
    bench_export(n_steps=400 if args.quick else 4000)


def bench_export(n_steps: int) -> None:
    """Rows/s and MB/s of the sft export vs. write_table of the same rows (best of 3 each)."""
    import tempfile
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from curation.exports import FEATURES, sft_rows, write_export
    from curation.recipe import EXPORT_PARAMS
    from curation.workset import EpisodeRow, StepRow
    from datalake.types import Action

    bases = [base_screen(i) for i in range(8)]
    frames = [with_text_chunk(bases[i % 8], i) for i in range(n_steps)]
    ws = []
    for e in range(n_steps // 20):
        steps = [StepRow(index=i, frame_sha=str(e * 20 + i), width=W, height=H, action=Action("tap", x=100 + i, y=900),
                         action_json="") for i in range(20)]
        ws.append(EpisodeRow(episode_id=f"ep{e}", instruction=f"task {e % 13}", source="human", phone="real",
                             app="shop", category=None, task=None, outcome="success", verified_by="human",
                             policy=None, round=None, width=W, height=H, steps=steps, split="train"))
    params = dict(EXPORT_PARAMS["sft"])

    def frame(step) -> bytes:
        return frames[int(step.frame_sha)]

    rows = list(sft_rows(ws, params, frame))
    mb = sum(len(f) for f in frames) / 1e6
    ours, base = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(3):
            t0 = time.perf_counter()
            write_export("sft", ws, params, frame, Path(tmp) / f"ours{k}")
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            pq.write_table(pa.Table.from_pylist(rows, schema=FEATURES["sft"].arrow_schema), Path(tmp) / f"base{k}.parquet",
                           row_group_size=256)
            base.append(time.perf_counter() - t0)
    o, b = min(ours), min(base)
    print(f"export: {n_steps} sft rows, {mb:.0f} MB of screenshots")
    print(f"  write_export('sft')       {n_steps / o:8.0f} rows/s  {mb / o:7.1f} MB/s")
    print(f"  pq.write_table same rows  {n_steps / b:8.0f} rows/s  {mb / b:7.1f} MB/s")
    print(f"  ratio export/baseline     {b / o:.2f}x   (target >= 0.7x)")


if __name__ == "__main__":
    main()
