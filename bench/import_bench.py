"""Public-dataset import benchmark: AitW-format TFRecords through ``lake import --format aitw``.

    .venv/bin/python bench/import_bench.py            # 400-step 1080x2400 speed run + 10k/100k peak-memory runs
    .venv/bin/python bench/import_bench.py --quick    # small smoke run
    .venv/bin/python bench/import_bench.py --only speed --size 270x600 --steps 10000

1. Speed: steps/s importing a generated AitW TFRecord (GZIP, one tf.train.Example per
   step, 1080x2400 screenshots as raw pixels, as AitW stores them) into a fresh lake,
   against just reading and decoding the same file (framing, CRC32C, gunzip, protobuf
   parse, pixels to an array) in the same run, through the same reader (tfrecord.py,
   ISA-L inflate). The import also PNG-encodes every frame (datalake.png.encode_png).
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
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from collectors.importers import import_dataset, protos
from collectors.importers.tfrecord import read_records, write_records
from datalake.lake import Lake

STEPS_PER_EPISODE = 20


def base_pixels(size: tuple[int, int]) -> np.ndarray:
    """A settings-like screen as raw RGB pixels (how AitW stores screenshots)."""
    img = Image.new("RGB", size, (250, 250, 250))
    d = ImageDraw.Draw(img)
    for row in range(12):
        y = 10 + row * (size[1] // 13)
        d.rounded_rectangle([8, y, size[0] - 8, y + size[1] // 16], radius=6, fill="white", outline=(200, 200, 200))
        d.text((16, y + 2), f"Setting {row}", fill=(30, 30, 30))
    return np.asarray(img).copy()


def make_file(path: Path, n_steps: int, size: tuple[int, int]) -> int:
    """An AitW-format file: GZIP TFRecord, one Example per step, raw pixels in image/encoded.
    Each step's screen differs (a noise band moves), as consecutive real screenshots do."""
    base = base_pixels(size)
    rng = np.random.default_rng(0)
    band = rng.integers(0, 255, size=(4, size[0], 3), dtype=np.uint8)

    def records():
        for k in range(n_steps):
            ep, step = divmod(k, STEPS_PER_EPISODE)
            last = step == STEPS_PER_EPISODE - 1
            pixels = base.copy()
            row = (k * 7) % (size[1] - 4)
            pixels[row:row + 4] = band
            pixels[0, :8, 0] = np.frombuffer(struct.pack("<Q", k), np.uint8)  # distinct frames
            yield protos.example({
                "episode_id": [f"bench{ep:07d}"], "step_id": [step], "episode_length": [STEPS_PER_EPISODE],
                "goal_info": [f"goal {ep % 50}"], "image/encoded": [pixels.tobytes()],
                "image/width": [size[0]], "image/height": [size[1]], "image/channels": [3],
                "results/action_type": [10 if last else 4],
                "results/yx_touch": [0.1 + (k % 7) / 10, 0.5], "results/yx_lift": [0.1 + (k % 7) / 10, 0.5],
                "results/type_action": [""], "device_type": ["pixel_6"], "android_api_level": [31]})

    write_records(path, records(), compresslevel=1)
    return size[0] * size[1] * 3


def decode_only(path: Path) -> int:
    n = 0
    for rec in read_records(path):
        feats = protos.features(rec.data)
        np.frombuffer(feats["image/encoded"][0], np.uint8).reshape(
            feats["image/height"][0], feats["image/width"][0], feats["image/channels"][0])
        n += 1
    return n


def bench_speed(root: Path, n_steps: int, size: tuple[int, int] = (1080, 2400)) -> None:
    path = root / "aitw-speed.tfrecord.gz"
    frame_bytes = make_file(path, n_steps, size)
    print(f"speed: {n_steps} steps, {size[0]}x{size[1]} raw RGB screenshots ({frame_bytes / 1024:.0f} KiB each, "
          f"PNG-encoded on import), file {path.stat().st_size / 1e6:.0f} MB")
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
    parser.add_argument("--size", default="1080x2400", help="speed run's screenshot size, WxH (AitW's phones: 1080x2400)")
    parser.add_argument("--steps", type=int, help="speed run's steps (default 400, --quick 100)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_import(*args.child)
        return
    root = Path(tempfile.mkdtemp(prefix="phoneloop-import-bench-"))
    try:
        print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}")
        if args.only in (None, "speed"):
            width, height = (int(v) for v in args.size.lower().split("x"))
            bench_speed(root, args.steps or (100 if args.quick else 400), (width, height))
        if args.only in (None, "memory"):
            bench_memory(root, [1_000, 5_000] if args.quick else [10_000, 100_000])
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
