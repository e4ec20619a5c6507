"""Pydantic models of the HTTP edge; nothing else imports them.

Requests (``Edge``) forbid unknown fields; responses (``Out``) document what a route
returns and drop anything else the library hands back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Problem(Out):
    detail: str


class Health(Out):
    status: str
    lake: str = Field(description="the lake's folder name (never its path)")
    schema_version: int


class EpisodeSummary(Out):
    episode_id: str
    instruction: str
    source: str
    app: str | None
    category: str | None
    task: str | None
    phone: str
    outcome: str = Field(description="after human judgement (episodes_resolved)")
    verified_by: str
    recorded_outcome: str
    human_outcome: str | None = Field(description="the annotators' resolved judgement, if any")
    policy: str | None
    round: int | None
    num_steps: int
    score: float | None
    purpose: str
    perturbation: str | None
    stop: str = Field(description="failure_reason, else meta.stopped (max_steps), else terminated")
    created_at: datetime


class FacetValue(Out):
    value: str
    n: int


class EpisodePage(Out):
    total: int
    limit: int
    offset: int
    items: list[EpisodeSummary]
    facets: dict[str, list[FacetValue]] = Field(description="episodes per value of each facet, under the filters")


class NeighboursOut(Out):
    prev: str | None
    next: str | None
    pos: int | None = Field(description="1-based position in the listing")
    total: int | None


class ModelOutput(Out):
    valid: bool = Field(description="whether the output parsed into the recorded action")
    error: str | None = Field(description="why it did not parse (or was out of the screen)")
    text: str | None = Field(description="the model's raw text")


class TreeNode(Out):
    index: int
    depth: int
    parent: int | None
    class_name: str
    resource_id: str
    text: str
    content_desc: str
    bounds: list[int]
    clickable: bool


class TreeOut(Out):
    episode_id: str
    step_index: int
    nodes: list[TreeNode]
    target: int | None = Field(description="index of the node the recorded action targets")


class StepOut(Out):
    step_index: int
    frame_sha: str
    frame_url: str
    frame_width: int
    frame_height: int
    package: str | None
    activity: str | None
    thought: str | None
    raw_output: str | None
    output: ModelOutput | None = Field(description="what the model said, parsed or not")
    invalid: bool = Field(description="the model's output did not parse: the recorded wait is a placeholder")
    meta: dict[str, Any]
    pairing: str | None
    has_tree: bool
    action: dict[str, Any] = Field(description="the recorded action")
    correction: dict[str, Any] | None = Field(description="the latest accepted human correction, if any")
    corrected: bool
    step_correct: bool | None
    annotation_id: str | None


class AnnotationOut(Out):
    annotation_id: str
    target: str
    episode_id: str
    step_index: int | None
    status: str
    action: dict[str, Any] | None
    step_correct: bool | None
    outcome: str | None
    note: str | None
    annotator: str | None
    origin: str | None
    created_at: datetime


class EpisodeOut(Out):
    episode_id: str
    instruction: str
    source: str
    app: str | None
    category: str | None
    task: str | None
    phone: str
    device_width: int
    device_height: int
    device: dict[str, Any]
    outcome: str = Field(description="after human judgement (episodes_resolved)")
    verified_by: str
    recorded_outcome: str
    recorded_verified_by: str
    human_outcome: str | None
    resolved_by: str | None = Field(description="review | majority | latest, when people judged")
    judged_by: str | None
    policy: str | None
    round: int | None
    num_steps: int
    score: float | None
    failure_reason: str | None
    stop: str
    purpose: str
    perturbation: str | None
    rollout_id: str | None
    eval_id: str | None
    seed: Any
    meta: dict[str, Any]
    created_at: datetime
    steps: list[StepOut]
    annotations: list[AnnotationOut]


class DatasetOut(Out):
    name: str
    version: int
    fingerprint: str
    recipe: str
    parents: Any
    table_versions: Any
    counts: Any
    exports: Any
    created_at: datetime


class DatasetVersionOut(DatasetOut):
    episodes: dict[str, list[str]] | None = Field(description="episode ids by split; None when the exports "
                                                  "cannot be read")


class ModelOut(Out):
    name: str
    path: str
    base_model: str
    dataset: str | None
    dataset_fingerprint: str | None
    parent: str | None
    config: Any
    metrics: Any
    created_at: datetime


class DatasetDiffOut(Out):
    name: str
    a: int
    b: int
    fingerprints: dict[str, str]
    counts: list[dict[str, Any]]
    table_versions: list[dict[str, Any]]
    recipe_diff: list[str]
    episodes_added: list[str] | None = Field(description="None when a version's exports cannot be read")
    episodes_removed: list[str] | None


class EvalPolicyLine(Out):
    policy: str
    status: str
    error: str | None
    episodes: int
    successes: int | None
    rate: float | None


class EvalSummaryOut(Out):
    eval_id: str
    name: str | None
    task_set: str | None
    perturbation: str | None
    round: int | None
    loop: str | None
    created_at: datetime
    policies: list[EvalPolicyLine]


class EvalOut(Out):
    eval_id: str
    name: str | None
    task_set: str | None
    perturbation: str | None
    round: int | None
    loop: str | None
    created_at: datetime
    policies: list[str]
    rows: list[dict[str, Any]] = Field(description="one per policy: the evals row with its JSON decoded")
    table: list[dict[str, Any]] = Field(description="per category, app and overall: {by, group, cells: {policy: "
                                                    "{n, successes, rate, low, high}}}")
    tasks: list[dict[str, Any]] = Field(description="per task: {task, category, app, by_policy: {policy: "
                                                    "{n, successes, episodes: [{seed, episode_id, outcome, score}]}}}")


class CompareOut(Out):
    left: dict[str, str]
    right: dict[str, str]
    counts: dict[str, int] = Field(description="pairs both solved, only left, only right, neither")
    tasks: list[dict[str, Any]]
    pairs: list[dict[str, Any]]


class SqlIn(Edge):
    query: str = Field(min_length=1, max_length=100_000, examples=["SELECT app, count(*) FROM episodes GROUP BY app"])


class SqlOut(Out):
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(description="the result was cut at the row limit or the byte limit")
    truncated_by: Literal["rows", "bytes"] | None = Field(None, description="which limit cut it")
    bytes: int = Field(description="size of the returned rows as JSON text")
    row_limit: int
    max_bytes: int


class WebhookOut(Out):
    delivery_id: str = Field(description="sha256 of the body: the delivery's id (its row in the lake's "
                                         "webhook_inbox once the journal is committed)")
    status: str = Field(description="queued: stored durably; the annotations row follows from the background ingest")
