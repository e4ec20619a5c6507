"""Functions run in spawned child processes by the concurrency tests (must be importable)."""

import time

from datalake.lake import Lake
from tests.factory import episode


def append_batches(uri: str, worker: int, batches: int, per_batch: int) -> int:
    lake = Lake.open(uri)
    written = 0
    for b in range(batches):
        eps = [episode(worker * 10_000 + b * 100 + i, instruction=f"w{worker} b{b} e{i}") for i in range(per_batch)]
        written += lake.write_episodes(eps).written
    return written


def write_then_hang(uri: str, ready) -> None:
    """Commit one batch fully, then hang after the steps commit of the second batch."""
    lake = Lake.open(uri)
    lake.write_episodes([episode(1), episode(2)])

    def on_commit(table: str, rows: int) -> None:
        if table == "steps":
            ready.set()
            time.sleep(600)  # killed here: steps committed, episodes not

    lake.writer(on_commit=on_commit).write([episode(3), episode(4)])
