"""Exact dedup by task instance: episodes recorded on real mock phones, different worlds never merge."""

from __future__ import annotations

from typing import Iterator

import pytest

from curation import workset
from curation.ops import OPS
from curation.ops.base import Context
from datalake.lake import Lake
from datalake.types import Action
from mockphone.phone import MockPhone
from mockphone.tasks import registry
from mockphone.tasks.base import Task
from phones.episode import OraclePolicy, run_episode


class OpenForms(Task):
    """Open Web Forms (a test template over an app whose start state does not depend on the seed)."""

    template = "Open Web Forms."
    app_names = ("forms",)
    changes_state = False

    def check(self, phone) -> float:
        return float("com.phoneloop.forms" in phone.system_state().opened)

    def oracle(self, ui) -> Iterator[Action]:
        yield from ui.open("forms")


def record(task_cls, seeds):
    phone = MockPhone()
    return [run_episode(phone, OraclePolicy(phone, task_cls(seed=s)), task_cls(seed=s), seed=s) for s in seeds]


@pytest.fixture
def lake(tmp_path):
    return Lake.init(str(tmp_path / "lake"))


def test_dedup_exact_keeps_every_world_of_mail_archive(lake):
    episodes = record(registry.get("MailArchive"), range(5))
    instances = {e.meta["instance"] for e in episodes}
    assert len(instances) == 5  # five inboxes: five instances, whatever the instruction says
    lake.write_episodes(episodes)
    ws = workset.load(lake, [e.episode_id for e in episodes])
    kept = OPS["dedup_exact"].fn(ws, Context(lake))
    assert len(kept) == 5
    stored = {r["instance"] for r in lake.sql("SELECT instance FROM episodes").to_pylist()}
    assert stored == instances


def test_dedup_exact_merges_two_seeds_that_generated_the_same_instance(lake):
    registry.register(OpenForms)
    try:
        episodes = record(OpenForms, (3, 11))
    finally:
        registry.unregister("OpenForms")
    assert episodes[0].meta["seed"] != episodes[1].meta["seed"]
    assert episodes[0].meta["instance"] == episodes[1].meta["instance"]
    assert episodes[0].episode_id != episodes[1].episode_id  # ids carry the seed: the two jobs never collide
    assert lake.write_episodes(episodes).written == 2
    ws = workset.load(lake, [e.episode_id for e in episodes])
    kept = OPS["dedup_exact"].fn(ws, Context(lake))
    assert [e.episode_id for e in kept] == [episodes[0].episode_id]


def test_two_jobs_with_identical_looking_episodes_get_different_ids_and_one_job_keeps_its_id(lake):
    import dataclasses

    ep = record(registry.get("SettingsWifiOn"), (0,))[0]
    alike = [dataclasses.replace(ep, episode_id=None, meta={**ep.meta, "seed": s}) for s in (0, 7)]
    assert [e.steps for e in alike][0] == alike[1].steps  # the same screens and actions
    assert alike[0].episode_id != alike[1].episode_id  # but two jobs: never "duplicate episode_id in one batch"
    assert dataclasses.replace(alike[0], episode_id=None).episode_id == alike[0].episode_id  # re-import: same id
    report = lake.write_episodes(alike)
    assert report.written == 2 and not report.quarantined
