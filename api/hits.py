"""Search hits joined to the listing by row number, and facet counts of a set of rows in numpy.

    rows = ListingRows.build(con, index)        # once per snapshot (listing temp table + index)
    hits = rows.hits(docs, scores)              # -> pa.table(row, score), registered as search_hits
    total, facets = rows.facets(con, where_sql, params)

Why: a listing with ``q`` over 100k episodes spent ~180 ms in three SQL queries (count, page,
facets) that each joined the hits to ``listing`` on the episode id string, after turning up
to 100k index numbers into Python strings. Here the search index's document numbers map to
the ``listing`` temp table's ``rowid`` once per snapshot (an int64 array), so the hits are two
numpy arrays registered without a copy and joined on an integer; the count and the facet
counts of the matching rows come from ``np.bincount`` over each facet's dictionary codes
(built once per snapshot), so only the page is a SQL query (and, with other filters, one
query for the matching rows). The facets read as ``api.listing.facets_from_rows`` gives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from api import listing


@dataclass(frozen=True)
class ListingRows:
    row_of_doc: np.ndarray  # index document number -> listing rowid (-1: not in the listing)
    codes: dict[str, np.ndarray]  # facet -> per listing rowid, the value's code (-1: NULL)
    values: dict[str, list[str]]  # facet -> the value of each code
    indexed: int  # documents in the index when built

    @classmethod
    def build(cls, con, ids: list[str]) -> ListingRows:
        exprs = ", ".join(f'"{f}"::VARCHAR AS "{f}"' for f in listing.FACETS)
        table = con.sql(f"SELECT rowid AS row, episode_id, {exprs} FROM listing ORDER BY rowid").to_arrow_table()
        rowids = table["row"].to_numpy()
        if len(rowids) and (rowids[0] != 0 or rowids[-1] != len(rowids) - 1):
            raise ValueError("the listing's rowids are not 0..n-1")  # never for a freshly created temp table
        position = pc.index_in(pa.array(ids, pa.string()), value_set=table["episode_id"])
        row_of_doc = position.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        codes, values = {}, {}
        for facet in listing.FACETS:
            encoded = pc.dictionary_encode(table[facet]).combine_chunks()
            codes[facet] = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            values[facet] = encoded.dictionary.to_pylist()
        return cls(row_of_doc=row_of_doc, codes=codes, values=values, indexed=len(ids))

    def hits(self, docs: np.ndarray, scores: np.ndarray) -> pa.Table:
        """``search_hits(row, score)``: the matches that are listed, best first."""
        rows = self.row_of_doc[docs] if len(docs) else np.zeros(0, dtype=np.int64)
        keep = rows >= 0
        return pa.table({"row": pa.array(rows[keep], pa.int64()), "score": pa.array(scores[keep], pa.float32())})

    def facets(self, rows: np.ndarray) -> dict[str, list[dict[str, Any]]]:
        """Facet counts of these listing rows, as ``listing.facets_from_rows`` gives them."""
        out: dict[str, list[dict[str, Any]]] = {}
        for facet in listing.FACETS:
            codes = self.codes[facet][rows]
            counts = np.bincount(codes[codes >= 0], minlength=len(self.values[facet]))
            named = [{"value": self.values[facet][i], "n": int(n)} for i in np.flatnonzero(counts)
                     for n in (counts[i],)]
            out[facet] = sorted(named, key=lambda v: (-v["n"], v["value"]))
        return out


def matching_rows(con, hits: pa.Table, filters: listing.EpisodeFilters) -> np.ndarray:
    """The listing rows the hits and the other filters select (no SQL when nothing else filters)."""
    cond, params = listing.where(filters)
    if not cond:
        return hits["row"].to_numpy()
    table = con.sql(f"SELECT e.rowid AS row FROM {listing.source(filters)} {cond}", params=params).to_arrow_table()
    return table["row"].to_numpy()
