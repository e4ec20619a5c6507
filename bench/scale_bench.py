"""Scale benchmarks: the lake on S3-compatible storage, and the Ray backend against the local runner.

    .venv/bin/python bench/scale_bench.py            # default sizes
    .venv/bin/python bench/scale_bench.py --quick    # small smoke run

1. S3 ingest: episodes of 1080x2400 screenshots through ``Lake.write_episodes`` into a lake
   on a moto S3 server on 127.0.0.1, against pyarrow writing the same PNG bytes as Parquet
   to the same server (target >= 0.6x).
2. Frame fetch p50/p99 from the S3 lake (``Lake.frame``), against a local lake of the same frames.
3. Ray backend (``rollout --backend ray``) against the local spawn runner on the same mock
   workload, and episodes/s with 1, 2 and 4 actors (when the Ray backend is available).
4. The adb farm (``collect run``) over two phones of a virtual adb server: Ray actors against
   the default threads, the same jobs through the same scheduling (``fleet.pool.Pool``).
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.lake_bench import base_screens, make_episodes  # noqa: E402
from datalake.lake import Lake  # noqa: E402
from datalake.storage import filesystem  # noqa: E402
from tests.s3_server import S3Server  # noqa: E402


def bench_s3_ingest(s3: S3Server, n_steps: int) -> str:
    bases = base_screens()
    steps_per_ep, per_batch = 10, 8
    n_eps = n_steps // steps_per_ep
    uri = f"s3://bench/{uuid.uuid4().hex}"
    lake = Lake.init(uri, storage_options=s3.storage_options)
    eps = make_episodes(n_eps, steps_per_ep, 0, bases)
    pngs = [s.observation.screenshot for ep in eps for s in ep.steps]
    mb = sum(map(len, pngs)) / 1e6
    t0 = time.perf_counter()
    for i in range(0, n_eps, per_batch):
        lake.write_episodes(eps[i:i + per_batch])
    lake_s = time.perf_counter() - t0
    fs, root = filesystem(f"s3://bench/{uuid.uuid4().hex}", s3.storage_options)
    t0 = time.perf_counter()
    for i in range(0, len(pngs), per_batch * steps_per_ep):
        chunk = pngs[i:i + per_batch * steps_per_ep]
        table = pa.table({"sha256": [str(k) for k in range(i, i + len(chunk))], "png": pa.array(chunk, pa.binary())})
        pq.write_table(table, f"{root}/part-{i}.parquet", filesystem=fs, compression="none", row_group_size=64)
    base_s = time.perf_counter() - t0
    print(f"s3 ingest: {n_steps} steps, {mb:.0f} MB to moto on 127.0.0.1")
    print(f"  lake.write_episodes   {n_steps / lake_s:8.0f} steps/s  {mb / lake_s:7.1f} MB/s")
    print(f"  pyarrow write_table   {n_steps / base_s:8.0f} steps/s  {mb / base_s:7.1f} MB/s")
    print(f"  ratio lake/baseline   {base_s / lake_s:.2f}x   (target >= 0.6x)")
    return uri


def bench_frame_fetch(s3: S3Server, uri: str, fetches: int) -> None:
    remote = Lake.open(uri, storage_options=s3.storage_options)
    shas = [r["frame_sha"] for r in remote.sql("SELECT DISTINCT frame_sha FROM steps").to_pylist()]
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        local = Lake.init(f"{tmp}/lake")
        eps = [remote.episode(r["episode_id"]) for r in remote.sql("SELECT episode_id FROM episodes").to_pylist()]
        local.write_episodes(eps)
        for name, lake in (("s3", remote), ("local", local)):
            lake.frame(shas[0])  # build the index once
            times = []
            for _ in range(fetches):
                sha = rng.choice(shas)
                t0 = time.perf_counter()
                lake.frame(sha)
                times.append(time.perf_counter() - t0)
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"  frame fetch {name:<6} p50 {statistics.median(times) * 1e3:6.1f} ms  p99 {p99 * 1e3:6.1f} ms")


def bench_ray(quick: bool) -> None:
    """Oracle rollouts on mock phones: ``--backend ray`` against the local spawn runner, same jobs."""
    import ray

    from rollout.runner import rollout
    from rollout.spec import RolloutSpec, jobs_for

    tasks = "app:clock&category:single-app" if quick else "app:clock,app:notes"
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, resources={f"adb:{s}": 1 for s in SERIALS})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            def run(backend: str, phones: int, tag: str) -> float:
                lake = Lake.init(f"{tmp}/{tag}")
                spec = RolloutSpec(policy="oracle", tasks=tasks, phones=f"mock:{phones}", episodes=1,
                                   run_id=tag, backend=backend)
                t0 = time.perf_counter()
                report = rollout(lake.uri, spec)
                seconds = time.perf_counter() - t0
                assert report.episodes == len(jobs_for(spec)), report.errors
                return report.episodes / seconds

            run("ray", 2, "warm")  # actor start-up code paths, imports
            local = run("local", 2, "local2")
            remote = run("ray", 2, "ray2")
            print(f"ray backend: oracle rollouts, {tasks}")
            print(f"  local runner, 2 phones   {local:6.2f} episodes/s")
            print(f"  ray backend, 2 actors    {remote:6.2f} episodes/s")
            print(f"  ratio ray/local          {remote / local:.2f}x   (target >= 0.85x)")
            for actors in (1, 2, 4):
                print(f"  ray, {actors} actor(s)           {run('ray', actors, f'ray{actors}x'):6.2f} episodes/s")
            bench_farm(quick, tmp)
    finally:
        ray.shutdown()


SERIALS = ("emulator-5554", "emulator-5556")  # the virtual adb server's two phones


def bench_farm(quick: bool, tmp: str) -> None:
    """`collect run` over two virtual-adb phones: Ray actors against the default threads."""
    from mockphone.adb import VirtualAdbServer

    tasks, seeds = ["NotesCreate", "ContactsAdd"], list(range(2 if quick else 4))
    with VirtualAdbServer(phones=2) as server:
        from collectors.farm import collect_on_devices

        def run(backend: str, tag: str) -> float:
            lake = Lake.init(f"{tmp}/farm-{tag}")
            t0 = time.perf_counter()
            report = collect_on_devices(lake, list(SERIALS), tasks, seeds=seeds, port=server.port, backend=backend)
            seconds = time.perf_counter() - t0
            assert report.written == len(tasks) * len(seeds), report.errors
            return report.written / seconds

        run("ray", "warm")
        threads, actors = run("local", "threads"), run("ray", "actors")
    print(f"adb farm: collect run, {len(tasks) * len(seeds)} jobs over 2 virtual-adb phones")
    print(f"  threads (default)        {threads:6.2f} episodes/s")
    print(f"  ray actors               {actors:6.2f} episodes/s")
    print(f"  ratio ray/threads        {actors / threads:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    args = parser.parse_args()
    with S3Server() as s3:
        s3.create_bucket("bench")
        uri = bench_s3_ingest(s3, 200 if args.quick else 2000)
        print("frame fetch:")
        bench_frame_fetch(s3, uri, 50 if args.quick else 300)
    bench_ray(args.quick)


if __name__ == "__main__":
    main()
