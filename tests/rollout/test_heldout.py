"""An evaluation is refused when a model trained on what it evaluates: by content, not by seed.

The model's training instances come from the manifest of the dataset it was trained on (episodes
recorded on mock phones by the collector); the evaluated instances are fingerprinted from the
phones the eval's jobs start on. A suite that repeats one training instance exits 2 naming it; a
clean suite runs and its evals rows record the suite and overlap 0.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from collectors.collect import collect
from curation.build import curate
from curation.recipe import parse_recipe
from datalake import tasksets
from datalake.lake import Lake
from mockphone.phone import MockPhone
from mockphone.tasks import instances, registry
from phoneloop.cli import app
from phones.episode import OraclePolicy
from training.registry import ModelEntry, register_model
from training.tiny import tiny_model

runner = CliRunner()
TRAIN = [("MailArchive", 0), ("MailArchive", 1)]
RECIPE = """name: mail
select: SELECT episode_id FROM episodes WHERE task = 'MailArchive'
split: {by: episode, seed: 0, fractions: {train: 1.0}}
exports:
  - {format: sft}
"""


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def suite_rows(jobs):
    rows = []
    for task, seed in jobs:
        found = instances.solve(registry.get(task), seed, wrong_endings=False)
        assert isinstance(found, instances.Instance), found
        rows.append(found.to_row())
    return rows


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A lake whose model ``mail-sft`` is registered on a dataset of MailArchive seeds 0 and 1."""
    lake = Lake.init(tmp_path_factory.mktemp("heldout") / "lake")
    phone = MockPhone()
    try:
        report = collect(lake, phone, OraclePolicy.factory, ["MailArchive"], seeds=[0, 1])
    finally:
        phone.close()
    assert report.episodes == 2
    dv = curate(lake, parse_recipe(RECIPE))
    register_model(lake, ModelEntry(name="mail-sft", path=str(tiny_model(lake.uri)), base_model="tiny",
                                    dataset=dv.ref, dataset_fingerprint=None, parent=None, config={}, metrics={}))
    return lake


def test_a_suite_that_repeats_one_training_instance_exits_2_naming_it(trained):
    rows = suite_rows([("MailArchive", 0), ("MailArchive", 7), ("SettingsWifiOn", 3)])
    tasksets.write(trained, "leaky", "suite", rows)
    result = invoke("eval", "--policies", "mail-sft,oracle", "--suite", "leaky", "--phones", "mock:1",
                    "--lake", trained.uri)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "mail-sft trained on 1 of the evaluated instance(s)" in text and rows[0]["fingerprint"] in text
    assert "MailArchive seed 0" in text and "mail@v1" in text
    trained.invalidate()
    assert trained.sql("SELECT count(*) FROM episodes WHERE purpose = 'eval'").column(0)[0].as_py() == 0  # nothing ran


def test_a_training_seed_named_by_tasks_and_seeds_is_refused_too(trained):
    result = invoke("eval", "--policies", "mail-sft", "--tasks", "MailArchive", "--seeds", "1-2",
                    "--phones", "mock:1", "--lake", trained.uri)
    assert result.exit_code == 2 and "MailArchive seed 1" in " ".join(result.output.split()), result.output


def test_a_clean_suite_runs_and_its_rows_record_the_suite_and_overlap_0(trained):
    tasksets.write(trained, "clean", "suite", suite_rows([("MailArchive", 7), ("SettingsWifiOn", 3)]))
    result = invoke("eval", "--policies", "mail-sft,oracle", "--suite", "clean", "--phones", "mock:1",
                    "--max-steps", "3", "--lake", trained.uri, "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["suites"] == ["clean@v1"] and out["overlap"] == {"mail-sft": 0, "oracle": 0}
    assert out["by_suite"]["clean@v1"]["oracle"]["n"] == 2
    trained.invalidate()
    rows = trained.sql("SELECT policy, suite, overlap, seeds_json FROM evals WHERE eval_id = ? ORDER BY policy",
                       [out["eval_id"]]).to_pylist()
    assert [(r["policy"], r["suite"], r["overlap"]) for r in rows] == [("mail-sft", "clean@v1", 0),
                                                                      ("oracle", "clean@v1", 0)]
    assert json.loads(rows[0]["seeds_json"]) == [3, 7]
    allowed = invoke("eval", "--policies", "oracle", "--tasks", "MailArchive", "--seeds", "0", "--phones", "mock:1",
                     "--lake", trained.uri)
    assert allowed.exit_code == 0, allowed.output  # a baseline trains on nothing: no overlap to refuse


def test_allow_overlap_runs_and_records_the_count(trained):
    result = invoke("eval", "--policies", "mail-sft", "--tasks", "MailArchive", "--seeds", "0-1", "--phones",
                    "mock:1", "--max-steps", "2", "--allow-overlap", "--lake", trained.uri, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["overlap"] == {"mail-sft": 2}


def test_a_suite_whose_instances_no_longer_generate_the_same_content_is_refused(trained):
    rows = suite_rows([("MailArchive", 9)])
    rows[0]["fingerprint"] = "0" * 32  # as if the template had changed since the suite was written
    tasksets.write(trained, "stale", "suite", rows)
    result = invoke("eval", "--policies", "oracle", "--suite", "stale", "--phones", "mock:1", "--lake", trained.uri)
    assert result.exit_code == 2 and "no longer generate" in " ".join(result.output.split()), result.output


def test_rollout_takes_seeds(trained):
    result = invoke("rollout", "--policy", "oracle", "--tasks", "SettingsWifiOn", "--seeds", "40,42",
                    "--phones", "mock:1", "--lake", trained.uri, "--json")
    assert result.exit_code == 0, result.output
    trained.invalidate()
    seeds = trained.sql("SELECT json_extract(meta_json, '$.seed')::INT AS s FROM episodes WHERE source = 'rollout' AND purpose = 'train' "
                        "ORDER BY s").column(0).to_pylist()
    assert seeds == [40, 42]
    bad = invoke("rollout", "--policy", "oracle", "--seeds", "5-2", "--lake", trained.uri)
    assert bad.exit_code == 2 and "bad seeds" in bad.output
