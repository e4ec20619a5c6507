"""A listing with ``q`` over 100k episodes: the whole request over HTTP, and the old join against the new.

    .venv/bin/python bench/search_bench.py               # 100k episodes, 3 rounds of 12 queries
    .venv/bin/python bench/search_bench.py --n 20000

The lake is ``bench/api_bench.py``'s ranked-search lake (one-step episodes whose steps hold
model output, a tenth with Chinese instructions). In one process, on one snapshot:

- **HTTP**: GET /api/episodes?q=...&limit=50 (count, page of 50, facet counts) from a
  uvicorn server on 127.0.0.1 in this process: p50/p99 (the target is p50 <= 50 ms);
- **new, in process**: ``Browser.list_episodes`` as the route calls it (hits joined to the
  listing by rowid, count and facets in numpy: ``api/hits.py``);
- **old, in process** (the baseline): what main did, on the same connection: the hits as a
  table of episode-id strings, then the count, the page and the facets as three SQL
  queries each joining the hits on the episode id;
- **index alone**: ``SearchIndex.search_docs``.
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pyarrow as pa
import uvicorn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import api_bench  # noqa: E402
from api import listing  # noqa: E402
from api.app import create_app  # noqa: E402
from api.listing import EpisodeQuery  # noqa: E402
from api.settings import ApiSettings  # noqa: E402
from datalake.lake import Lake  # noqa: E402

QUERIES = [*api_bench.WORDS, "alarm number", "wifi42", "confirm", "scroll down", "无线网络", "短信", "zzz-nothing"]


def old_listing(browser, q: str) -> dict:
    """main's path: string hits, then count, page and facets, each joining on the episode id."""
    with browser.lock:
        browser._listing()
        browser._update_search()
        ids, scores = browser._search.search(q)
        con = browser.lake.con
        con.register("old_hits", pa.table({"episode_id": pa.array(ids, pa.string()),
                                           "score": pa.array(scores, pa.float32())}))
        source = "listing e JOIN old_hits h ON h.episode_id = e.episode_id"
        filters = EpisodeQuery(q=q, limit=50)
        cols = ", ".join(f"e.{c}" for c in listing.LIST_COLUMNS)
        total = con.sql(f"SELECT count(*) AS n FROM {source}").fetchall()[0][0]
        rows = con.sql(f"SELECT {cols} FROM {source} ORDER BY {listing.sort_of(filters)} LIMIT 50").to_arrow_table()
        facets, _ = listing.facets_sql(filters)
        counted = con.sql(facets.replace("listing e JOIN search_hits h ON h.row = e.rowid", source)).to_arrow_table()
        con.unregister("old_hits")
        return {"total": total, "items": rows.to_pylist(), "facets": listing.facets_from_rows(counted.to_pylist())}


def timed(run, rounds: int) -> dict[str, float]:
    times = []
    for _ in range(rounds):
        for q in QUERIES:
            start = time.perf_counter()
            run(q)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"p50": statistics.median(times), "p99": times[min(len(times) - 1, int(0.99 * len(times)))]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="episodes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lake", help="reuse (or build once into) this lake folder")
    args = parser.parse_args()
    folder = Path(args.lake) if args.lake else Path(tempfile.mkdtemp(prefix="phoneloop-search-bench-")) / "lake"
    try:
        if not (folder / "tables").exists():
            t0 = time.perf_counter()
            lake = Lake.init(folder)
            api_bench.write_filler(lake, api_bench.filler(args.n, b"", chinese=True), api_bench.screens(1)[0],
                                   said=True)
            print(f"{args.n:,} episodes with model output written in {time.perf_counter() - t0:.1f} s")
        app = create_app(Lake.open(str(folder)), ApiSettings(refresh_s=3600))
        browser = app.state.browser
        t0 = time.perf_counter()
        browser.list_episodes(EpisodeQuery(q="warm", limit=50))
        print(f"  index and listing built in {time.perf_counter() - t0:.1f} s ({len(browser._search):,} documents)")
        for q in QUERIES:  # the same answer both ways
            new, old = browser.list_episodes(EpisodeQuery(q=q, limit=50)), old_listing(browser, q)
            assert (new["total"], new["facets"]) == (old["total"], old["facets"]), q
            assert [e["episode_id"] for e in new["items"]] == [e["episode_id"] for e in old["items"]], q
        port = api_bench.free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        with httpx.Client(trust_env=False, timeout=60) as http:
            def over_http(q: str) -> None:
                r = http.get(f"http://127.0.0.1:{port}/api/episodes", params={"q": q, "limit": 50})
                r.raise_for_status()

            over_http("warm")
            results = {"HTTP GET /api/episodes?q= (new)": timed(over_http, args.rounds),
                       "new, in process": timed(lambda q: browser.list_episodes(EpisodeQuery(q=q, limit=50)),
                                                args.rounds),
                       "old, in process (main's string join)": timed(lambda q: old_listing(browser, q), args.rounds),
                       "index alone": timed(lambda q: browser._search.search_docs(q), args.rounds)}
        server.should_exit = True
        print(f"listing with q (count + page of 50 + facets) over {len(browser._search):,} episodes, "
              f"{args.rounds} rounds of {len(QUERIES)} queries:")
        for name, r in results.items():
            print(f"  {name:40s} p50 {r['p50']:7.2f} ms  p99 {r['p99']:7.2f} ms")
        old, new = results["old, in process (main's string join)"], results["new, in process"]
        print(f"  old / new in process: {old['p50'] / new['p50']:.1f}x at p50, {old['p99'] / new['p99']:.1f}x at p99 "
              f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    finally:
        if not args.lake:
            shutil.rmtree(folder.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
