"""Pydantic models of the HTTP edge; nothing else imports them.

Requests (``Edge``) forbid unknown fields; responses (``Out``) document what a route
returns and drop anything else the library hands back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Problem(Out):
    detail: str


class Health(Out):
    status: str
    lake: str


class EpisodeSummary(Out):
    episode_id: str
    instruction: str
    source: str
    app: str | None
    category: str | None
    task: str | None
    phone: str
    outcome: str
    verified_by: str
    policy: str | None
    round: int | None
    num_steps: int
    created_at: datetime
    human_outcome: str | None = Field(description="latest accepted episode judgement from an annotator")


class EpisodePage(Out):
    total: int
    limit: int
    offset: int
    items: list[EpisodeSummary]


class StepOut(Out):
    step_index: int
    frame_sha: str
    frame_url: str
    frame_width: int
    frame_height: int
    package: str | None
    activity: str | None
    thought: str | None
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
    outcome: str
    verified_by: str
    human_outcome: str | None
    judged_by: str | None
    policy: str | None
    round: int | None
    num_steps: int
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


class SqlIn(Edge):
    query: str = Field(min_length=1, max_length=100_000, examples=["SELECT app, count(*) FROM episodes GROUP BY app"])


class SqlOut(Out):
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(description="more rows existed than the row limit")
    row_limit: int


class WebhookOut(Out):
    annotation_id: str
    target: str
    episode_id: str
    step_index: int | None
