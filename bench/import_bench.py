"""Public-dataset import benchmark: AitW-format TFRecords through ``lake import --format aitw``.

    .venv/bin/python bench/import_bench.py            # 10k-step speed run + 10k/100k peak-memory runs
    .venv/bin/python bench/import_bench.py --quick    # small smoke run

1. Speed: steps/s importing a generated AitW TFRecord (GZIP, one tf.train.Example per
   step, 540x1200 PNG screenshots) into a fresh lake, against just reading and
   decoding the same file (framing, CRC32C, gunzip, protobuf parse) in the same run.
   Target: import >= 0.5x the read-and-decode rate.
2. Memory: peak RSS of a child process importing N steps, for N = 10k and 100k (small
   frames so the big file fits on disk); bounded means the 100k peak is about the 10k one.
Timings are printed, never asserted. The machine may be shared: say so with the numbers.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from io import BytesIO
from pathlib import Path

from PIL import Image, ImageDraw

from collectors.importers import import_dataset, protos
from collectors.importers.tfrecord import read_records, write_records
from datalake.lake import Lake

STEPS_PER_EPISODE = 20


def base_png(size: tuple[int, int]) -> bytes:
    img = Image.new("RGB", size, (250, 250, 250))
    d = ImageDraw.Draw(img)
    for row in range(12):
        y = 60 + row * (size[1] // 13)
        d.rounded_rectangle([20, y, size[0] - 20, y + size[1] // 16], radius=12, fill="white", outline=(200, 200, 200))
        d.text((40, y + 10), f"Setting number {row}", fill=(30, 30, 30))
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def variant(png: bytes, k: int, noise: int = 0) -> bytes:
    """A distinct, valid PNG: ``png`` plus a tEXt chunk with ``noise`` incompressible bytes
    (like real screenshots, consecutive frames then share nothing GZIP's window could reuse)."""
    body = b"tEXt" + b"phoneloop\x00" + str(k).encode() + os.urandom(noise // 2).hex().encode()
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    return png[:-12] + chunk + png[-12:]


def make_file(path: Path, n_steps: int, size: tuple[int, int], noise: int = 0) -> int:
    png = base_png(size)

    def records():
        for k in range(n_steps):
            ep, step = divmod(k, STEPS_PER_EPISODE)
            last = step == STEPS_PER_EPISODE - 1
            yield protos.example({
                "episode_id": [f"bench{ep:07d}"], "step_id": [step], "episode_length": [STEPS_PER_EPISODE],
                "goal_info": [f"goal {ep % 50}"], "image/encoded": [variant(png, k, noise)],
                "image/width": [size[0]], "image/height": [size[1]], "image/channels": [3],
                "results/action_type": [10 if last else 4],
                "results/yx_touch": [0.1 + (k % 7) / 10, 0.5], "results/yx_lift": [0.1 + (k % 7) / 10, 0.5],
                "results/type_action": [""], "device_type": ["pixel_6"], "android_api_level": [31]})

    write_records(path, records(), compresslevel=1)
    return len(variant(png, 0, noise))


def decode_only(path: Path) -> int:
    n = 0
    for rec in read_records(path):
        protos.features(rec.data)
        n += 1
    return n


def bench_speed(root: Path, n_steps: int) -> None:
    path = root / "aitw-speed.tfrecord.gz"
    frame_bytes = make_file(path, n_steps, (540, 1200), noise=48_000)
    print(f"speed: {n_steps} steps, {frame_bytes / 1024:.0f} KiB frames (540x1200, distinct), "
          f"file {path.stat().st_size / 1e6:.0f} MB")
    warm = root / "warm.tfrecord.gz"
    make_file(warm, STEPS_PER_EPISODE * 2, (540, 1200))
    import_dataset(Lake.init(root / "warm"), "aitw", [warm])  # one-time imports (pyarrow.dataset, ...)
    imports, decodes = [], []
    for turn, who in enumerate("DIID"):
        os.sync()
        t0 = time.perf_counter()
        if who == "D":
            assert decode_only(path) == n_steps
            decodes.append(time.perf_counter() - t0)
        else:
            report = import_dataset(Lake.init(root / f"lake{turn}"), "aitw", [path])
            assert report.steps == n_steps and report.quarantined == 0, report
            imports.append(time.perf_counter() - t0)
    imp, dec = statistics.median(imports), statistics.median(decodes)
    print(f"  lake import --format aitw {n_steps / imp:8.0f} steps/s")
    print(f"  read + decode only        {n_steps / dec:8.0f} steps/s")
    print(f"  ratio import/decode       {dec / imp:.2f}x   (target >= 0.5x)")


def child_import(path: str, lake: str) -> None:
    report = import_dataset(Lake.init(lake), "aitw", [path])
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{report.steps} {peak_kib}")


def bench_memory(root: Path, sizes: list[int]) -> None:
    print("memory: peak RSS of an import in a fresh process (108x240 frames)")
    for n in sizes:
        path = root / f"aitw-{n}.tfrecord.gz"
        make_file(path, n, (108, 240))
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, __file__, "--child", str(path), str(root / f"mlake{n}")],
                             capture_output=True, text=True, check=True, env={**os.environ})
        steps, peak = map(int, out.stdout.split()[-2:])
        print(f"  {steps:>7} steps  file {path.stat().st_size / 1e6:6.0f} MB  peak RSS {peak / 1024:6.0f} MiB  "
              f"({time.perf_counter() - t0:.0f} s)")
        path.unlink()
        shutil.rmtree(root / f"mlake{n}", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=["speed", "memory"])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_import(*args.child)
        return
    root = Path(tempfile.mkdtemp(prefix="phoneloop-import-bench-"))
    try:
        print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}")
        if args.only in (None, "speed"):
            bench_speed(root, 1_000 if args.quick else 10_000)
        if args.only in (None, "memory"):
            bench_memory(root, [1_000, 5_000] if args.quick else [10_000, 100_000])
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
