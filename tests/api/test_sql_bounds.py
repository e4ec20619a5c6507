"""The SQL service's bounds against a real server process: rows and bytes cut while streaming,
and four oversized queries at once leave the server's memory where it was.

Run as a script (``python tests/api/test_sql_bounds.py``) it prints the peaks for the code on
``PYTHONPATH``, e.g. to measure the old in-process behaviour on another checkout.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from tests.api.conftest import TOKEN, free_port

OVERSIZED = "select repeat('x', 1000000) AS s from range(1000)"
SERVER_GROWTH_MB = 150  # the bound: what four oversized queries may add to the server's own RSS
PROCESS_MB = 1024


@contextmanager
def server(lake_uri: str, **env: str):
    """``phoneloop serve`` as a real subprocess on 127.0.0.1; yields (port, psutil.Process)."""
    port = free_port()
    environ = {**os.environ, "PHONELOOP_LAKE": lake_uri, "PHONELOOP_API_TOKEN": TOKEN, **env}
    proc = subprocess.Popen([sys.executable, "-m", "phoneloop.cli", "serve", "--port", str(port)], env=environ,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "phoneloop serve did not answer"
            time.sleep(0.1)
        yield port, psutil.Process(proc.pid)
    finally:
        proc.terminate()
        proc.wait(20)


def post_sql(port: int, query: str, timeout: float = 120) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", "/api/sql", body=json.dumps({"query": query}),
                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    response = conn.getresponse()
    body = response.read()
    return response.status, json.loads(body) if body else {}


def _rss(process: psutil.Process, children: bool) -> int:
    total = process.memory_info().rss
    if children:
        for child in process.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.NoSuchProcess:
                pass
    return total


def peaks_under_load(port: int, process: psutil.Process, queries: int = 4) -> dict:
    """Send ``queries`` oversized SELECTs at once; the server's RSS (and with its children) before and at peak."""
    post_sql(port, "SELECT count(*) FROM episodes")  # warm: the first query loads what every query needs
    before = process.memory_info().rss
    peak = {"server": before, "with_children": _rss(process, True)}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            try:
                peak["server"] = max(peak["server"], process.memory_info().rss)
                peak["with_children"] = max(peak["with_children"], _rss(process, True))
            except psutil.NoSuchProcess:
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    with ThreadPoolExecutor(queries) as pool:
        answers = list(pool.map(lambda _: post_sql(port, OVERSIZED), range(queries)))
    done.set()
    watcher.join()
    return {"before_mb": before >> 20, "server_peak_mb": peak["server"] >> 20,
            "with_children_peak_mb": peak["with_children"] >> 20, "answers": [a[0] for a in answers],
            "bodies": [a[1] for a in answers]}


def test_four_oversized_queries_leave_the_server_rss_under_the_bound(shared_lake):
    with server(shared_lake.uri, PHONELOOP_SQL_PROCESS_MB=str(PROCESS_MB), PHONELOOP_SQL_TIMEOUT_S="60") as (port, process):
        result = peaks_under_load(port, process)
    print(json.dumps({k: v for k, v in result.items() if k != "bodies"}))
    assert result["server_peak_mb"] - result["before_mb"] <= SERVER_GROWTH_MB, result
    # every query's child is capped too: the machine's total stays within the caps it was given
    assert result["with_children_peak_mb"] <= result["before_mb"] + 4 * PROCESS_MB, result
    for status, body in zip(result["answers"], result["bodies"]):
        if status == 200:  # cut by bytes while streaming
            assert body["truncated"] is True and body["truncated_by"] == "bytes" and body["bytes"] <= 16 << 20
        else:  # or refused by its memory cap, with the reason
            assert status == 400 and "more memory" in body["detail"], body


def test_a_result_over_the_byte_cap_is_cut_while_streaming_with_the_reason(shared_lake):
    with server(shared_lake.uri, PHONELOOP_SQL_MAX_BYTES_MB="1") as (port, _):
        status, body = post_sql(port, "select repeat('x', 100000) AS s from range(1000)")
        assert status == 200 and body["truncated"] is True and body["truncated_by"] == "bytes"
        assert 5 <= len(body["rows"]) <= 10 and body["bytes"] <= 1 << 20 and body["max_bytes"] == 1 << 20
        status, body = post_sql(port, "select range from range(5000)")
        assert status == 200 and body["truncated_by"] == "rows" and len(body["rows"]) == 1000


def test_a_query_past_its_memory_cap_fails_naming_the_limit(shared_lake):
    with server(shared_lake.uri, PHONELOOP_SQL_MEMORY_MB="64", PHONELOOP_SQL_PROCESS_MB="400") as (port, process):
        before = process.memory_info().rss
        status, body = post_sql(port, "select string_agg(repeat('x', 1000), ',') from range(1000000)")
        assert status == 400 and "more memory" in body["detail"] and "PHONELOOP_SQL_PROCESS_MB" in body["detail"]
        assert process.memory_info().rss - before < 100 << 20


if __name__ == "__main__":  # measure the code on PYTHONPATH (e.g. another checkout's) on a fresh lake
    import tempfile

    from datalake.lake import Lake

    lake = Lake.init(Path(tempfile.mkdtemp()) / "lake")
    with server(lake.uri) as (port, process):
        result = peaks_under_load(port, process)
    result["bodies"] = [str(b)[:120] for b in result["bodies"]]
    print(json.dumps(result, indent=1))
