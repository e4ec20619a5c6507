"""Label Studio push and pull: tasks/s for 1,000 steps against a real Label Studio.

    .venv/bin/python bench/annotate_bench.py           # 1,000 steps (100 episodes of 10)
    .venv/bin/python bench/annotate_bench.py --quick   # 100 steps

Starts a local Label Studio for a temporary lake (``annotate.server.serve``; the first
start migrates its database, which is not timed), then measures:

- push: ``annotate.push.push`` (select steps in the lake, build tasks with predictions,
  check which steps the project already has, import in batches) against the baseline of
  a bare ``POST /api/projects/{id}/import`` of the same prepared task dicts into a
  second project;
- pull: ``annotate.pull.pull`` (export, convert percent -> px, check ids, one lake
  commit) against the baseline of the bare JSON export it reads.

Annotations are created through the API first (one POST per task, as annotators'
browsers do; that time is printed too). Prints tasks/s and the ratio to the baseline;
timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from io import BytesIO
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotate import pull, push  # noqa: E402
from annotate import server as ls  # noqa: E402
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


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 steps instead of 1,000")
    args = parser.parse_args()
    n_episodes, n_steps = (10, 10) if args.quick else (100, 10)
    total = n_episodes * n_steps
    with tempfile.TemporaryDirectory(prefix="phoneloop-annotate-bench-") as tmp:
        lake = Lake.init(Path(tmp) / "lake")
        lake.write_episodes(episodes(n_episodes, n_steps))
        print(f"{total} steps in the lake; starting Label Studio (first start migrates: ~1 min) ...")
        (server, startup) = timed(lambda: ls.serve(lake.uri, say=lambda m: None))
        print(f"Label Studio up in {startup:.1f} s at {server.url}")
        try:
            with server.client() as client:
                run(lake, client, total)
        finally:
            ls.stop(lake.uri)


def run(lake: Lake, client, total: int) -> None:
    rows = push.select_steps(lake, where="true")
    prepared = push.step_tasks(rows, push.DEFAULT_FRAMES_URL)
    base = client.create_project("baseline", push.configs.step_review())
    _, base_s = timed(lambda: [client.import_tasks(base["id"], prepared[i:i + 500])
                               for i in range(0, len(prepared), 500)])
    report, push_s = timed(lambda: push.push(lake, client, "bench", where="true"))
    assert report.pushed == total, report
    again, again_s = timed(lambda: push.push(lake, client, "bench", where="true"))
    print(f"push     {total / push_s:8.1f} tasks/s   baseline bare import {total / base_s:8.1f} tasks/s   "
          f"ratio {base_s / push_s:.2f}   (a repeated push that skips all: {again_s:.2f} s)")
    tasks = client.tasks(report.project_id)
    _, annotate_s = timed(lambda: [client.create_annotation(t["id"], t["predictions"][0]["result"]) for t in tasks])
    print(f"annotate {total / annotate_s:8.1f} annotations/s created through the API (one POST each)")
    _, export_s = timed(lambda: client.export(report.project_id))
    pulled, pull_s = timed(lambda: pull.pull(lake, client, "bench"))
    assert pulled.written == total, pulled
    print(f"pull     {total / pull_s:8.1f} tasks/s   baseline bare export {total / export_s:8.1f} tasks/s   "
          f"ratio {export_s / pull_s:.2f}")


if __name__ == "__main__":
    main()
