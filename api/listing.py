"""Finding episodes: filters, word search, facet counts, sorting, neighbours in a listing.

Every list reads ``episodes_resolved`` (outcome and ``verified_by`` after human judgement),
through ``LISTING_SQL``: one row per episode, kept per lake snapshot as a temp table.
The query parameters are one pydantic model that forbids unknown fields, so ``?task=X``
or a typo answers 422 naming the parameter (API routes and viewer pages alike); an empty
value (the viewer's "any") means no filter.

- exact filters: ``source, app, category, task, template, policy, round, outcome,
  verified_by, perturbation, purpose, stop, eval_id, rollout_id``;
- ``template``, ``eval_id`` and ``rollout_id`` are read from the episode's meta JSON;
  ``stop`` is why the episode ended: its ``failure_reason`` (column or meta), else
  ``meta.stopped`` (``max_steps``), else ``terminated``;
- ``q``: ranked full-text search (api/search.py): every word must occur in the episode's
  instruction, task, app, model output, UI text or annotation notes, English or Chinese;
  the caller registers the matches as ``search_hits(row, score)`` (``row``: the listing's ``rowid``; ``Browser`` does, api/hits.py),
  and ``sort=relevance`` (the default when ``q`` is given) orders by their BM25 score;
- ``sort``: one of ``SORTS``; ties always break by episode id, so paging is stable.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from datalake.types import OUTCOMES, PURPOSES, SOURCES, VERIFIERS

_META = "json_extract_string(e.meta_json, '$.{key}')"
STOP_SQL = ("coalesce(e.failure_reason, json_extract_string(e.meta_json, '$.failure_reason'), "
            "json_extract_string(e.meta_json, '$.stopped'), 'terminated')")
# the verifier's score: the v2 column, else what the episode loop put in meta (phones/episode.py)
SCORE_SQL = "coalesce(e.score, try_cast(json_extract(e.meta_json, '$.score') AS DOUBLE))"
LIST_COLUMNS = ("episode_id", "instruction", "source", "app", "category", "task", "phone", "outcome",
                "verified_by", "recorded_outcome", "human_outcome", "policy", "round", "num_steps", "purpose",
                "perturbation", "created_at", "score", "stop")
# One row per episode with everything lists filter, sort and show, computed once per lake snapshot
# (Browser keeps it as a DuckDB temp table named ``listing``): no JSON or judgement work per query.
LISTING_SQL = f"""
    SELECT e.* EXCLUDE (score, meta_json, device_json), {SCORE_SQL} AS score, {STOP_SQL} AS stop,
           {_META.format(key="template")} AS template, {_META.format(key="eval_id")} AS eval_id,
           {_META.format(key="rollout_id")} AS rollout_id
    FROM episodes_resolved e"""
FILTERS = ("source", "app", "category", "task", "template", "policy", "round", "outcome", "verified_by",
           "perturbation", "purpose", "stop", "eval_id", "rollout_id")
FACETS = ("source", "app", "category", "task", "template", "policy", "round", "outcome", "verified_by",
          "perturbation", "stop")
SORTS = {
    "relevance": "h.score DESC, e.created_at DESC, e.episode_id",  # h: search_hits, joined when q searches
    "newest": "e.created_at DESC, e.batch_seq, e.episode_id",
    "oldest": "e.created_at, e.batch_seq, e.episode_id",
    "steps": "e.num_steps DESC, e.episode_id", "fewest-steps": "e.num_steps, e.episode_id",
    "score": "e.score DESC NULLS LAST, e.episode_id", "lowest-score": "e.score NULLS LAST, e.episode_id",
    "instruction": "e.instruction, e.episode_id", "task": "e.task NULLS LAST, e.episode_id",
}

Name = Field(None, min_length=1, max_length=200)


class EpisodeFilters(BaseModel):
    """What selects and orders episodes (shared by the list, the pages and prev/next links)."""

    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(None, max_length=200, description="words that must all occur in the episode's "
                          "instruction, task, app, model output, UI text or notes (ranked full-text search)")
    source: Literal[SOURCES] | None = None
    app: str | None = Name
    category: str | None = Name
    task: str | None = Name
    template: str | None = Field(None, min_length=1, max_length=500)
    policy: str | None = Name
    round: int | None = Field(None, ge=0, le=2**31 - 1)
    outcome: Literal[OUTCOMES] | None = None
    verified_by: Literal[VERIFIERS] | None = None
    perturbation: str | None = Name
    purpose: Literal[PURPOSES] | None = None
    stop: str | None = Name
    eval_id: str | None = Name
    rollout_id: str | None = Name
    sort: Literal[tuple(SORTS)] | None = Field(None, description="default: relevance with q, else newest")

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_none(cls, value: Any) -> Any:
        return None if value == "" else value

    def active(self) -> dict[str, Any]:
        """The parameters that were set (for links that keep the filter)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class EpisodeQuery(EpisodeFilters):
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10**9)


class EpisodePageQuery(EpisodeFilters):
    page: int = Field(1, ge=1, le=10**6)


def where(filters: EpisodeFilters) -> tuple[str, list[Any]]:
    """``WHERE ...`` over ``listing e`` and its parameters ('' when nothing filters)."""
    clauses, params = [], []
    for name in FILTERS:
        value = getattr(filters, name)
        if value is not None:
            clauses.append(f'e."{name}" = ?')
            params.append(value)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def searching(filters: EpisodeFilters) -> bool:
    """Whether ``q`` searches (a ``q`` of punctuation alone has no word, so it matches nothing)."""
    return bool(filters.q and filters.q.strip())


def sort_name(filters: EpisodeFilters) -> str:
    """The sort in force: the one asked for, else ``relevance`` when ``q`` searches, else
    ``newest`` (``relevance`` without ``q`` is ``newest`` too)."""
    if filters.sort in (None, "relevance"):
        return "relevance" if searching(filters) else "newest"
    return filters.sort


def sort_of(filters: EpisodeFilters) -> str:
    """The ORDER BY of ``sort_name(filters)``."""
    return SORTS[sort_name(filters)]


def source(filters: EpisodeFilters) -> str:
    """What lists read: ``listing e``, joined to ``search_hits h`` (by the listing's rowid) when ``q`` searches."""
    return "listing e JOIN search_hits h ON h.row = e.rowid" if searching(filters) else "listing e"


def list_sql(filters: EpisodeFilters) -> tuple[str, str, list[Any]]:
    """(count SQL, page SQL with two trailing ``LIMIT ? OFFSET ?`` placeholders, parameters)."""
    cond, params = where(filters)
    cols = ", ".join(f"e.{c}" for c in LIST_COLUMNS)
    count = f"SELECT count(*) AS n FROM {source(filters)} {cond}"
    page = f"SELECT {cols} FROM {source(filters)} {cond} ORDER BY {sort_of(filters)} LIMIT ? OFFSET ?"
    return count, page, params


def facets_sql(filters: EpisodeFilters) -> tuple[str, list[Any]]:
    """One query counting episodes per value of every facet, under the current filters."""
    cond, params = where(filters)
    exprs = ", ".join(f'e."{f}"::VARCHAR AS {f}' for f in FACETS)
    sets = ", ".join(f"({f})" for f in FACETS)
    which = " ".join(f"WHEN grouping({f}) = 0 THEN '{f}'" for f in FACETS)
    value = " ".join(f"WHEN grouping({f}) = 0 THEN {f}" for f in FACETS)
    sql = (f"SELECT CASE {which} END AS facet, CASE {value} END AS value, count(*) AS n "
           f"FROM (SELECT {exprs} FROM {source(filters)} {cond}) GROUP BY GROUPING SETS ({sets})")
    return sql, params


def facets_from_rows(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """``{facet: [{value, n}, ...]}``, biggest first, NULL values left out."""
    out: dict[str, list[dict[str, Any]]] = {f: [] for f in FACETS}
    for row in rows:
        if row["value"] is not None:
            out[row["facet"]].append({"value": row["value"], "n": row["n"]})
    for values in out.values():
        values.sort(key=lambda v: (-v["n"], v["value"]))
    return out


def neighbours_sql(filters: EpisodeFilters) -> tuple[str, list[Any]]:
    """The episodes before and after one (its ``episode_id`` is the last parameter) in the listing."""
    cond, params = where(filters)
    sql = (f"SELECT prev, next, pos, total FROM (SELECT e.episode_id, "
           f"lag(e.episode_id) OVER w AS prev, lead(e.episode_id) OVER w AS next, "
           f"row_number() OVER w AS pos, count(*) OVER () AS total "
           f"FROM {source(filters)} {cond} WINDOW w AS (ORDER BY {sort_of(filters)})) WHERE episode_id = ?")
    return sql, params
