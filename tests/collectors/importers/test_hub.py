"""lake -> `datasets push` (curation's episodes export) -> loopback Hub -> `lake import hf://...` -> another lake."""

from dataclasses import replace
from pathlib import Path

import pytest

from collectors.importers import import_dataset
from collectors.importers.hub import parse_url
from curation.build import curate
from curation.hub import push_folder
from curation.recipe import parse_recipe
from datalake.errors import InvalidRecord
from datalake.lake import Lake
from tests.factory import episode
from tests.hub_server import HubServer

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
RECIPE = """name: pub
select: SELECT episode_id FROM episodes
ops:
  - op: filter
    min_steps: 1
exports:
  - format: episodes
"""


def _rich(k: int):
    """An episode with every field the lake keeps: trees, thoughts, model output, step and
    episode meta, device extras, policy, round, score, failure reason."""
    ep = episode(k, n_steps=2 + k, app=f"app{k}", source=("human", "agent")[k % 2],
                 outcome=("success", "failure")[k % 2], policy=f"policy-{k}", round=k, score=k / 4,
                 failure_reason=None if k % 2 == 0 else "max_steps", meta={"note": f"ep {k}", "seed": k})
    steps = tuple(replace(s, thought=f"thinking {k}.{i}", raw_output=f"<tool_call>{i}</tool_call>",
                          meta={"tree_lag_ms": 10 * i, "pairing": "ok"}) for i, s in enumerate(ep.steps))
    return replace(ep, steps=steps, device=replace(ep.device, extra={"serial": f"SER{k}", "dpi": 420}))


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """A lake of four episodes curated into a version and pushed to a loopback Hub as v1."""
    root = tmp_path_factory.mktemp("hub")
    source = Lake.init(root / "source")
    source.write_episodes([_rich(k) for k in range(4)])
    dv = curate(source, parse_recipe(RECIPE), allow_unredacted=True)  # the round trip keeps every field as written
    with HubServer() as hub:
        push_folder(Path(dv.path),
                    "team/phone-episodes", revision_tag="v1", token=hub.token, endpoint=hub.url)
        yield source, hub


def test_hub_round_trip_gives_identical_episodes(published, tmp_path, monkeypatch):
    source, hub = published
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    target = Lake.init(tmp_path / "target")
    report = import_dataset(target, "hub", ["hf://datasets/team/phone-episodes@v1"])
    assert (report.written, report.quarantined) == (4, 0)
    ids = source.sql("SELECT episode_id FROM episodes ORDER BY episode_id").column(0).to_pylist()
    assert target.sql("SELECT episode_id FROM episodes ORDER BY episode_id").column(0).to_pylist() == ids
    for episode_id in ids:
        a, b = source.episode(episode_id), target.episode(episode_id)
        assert b.meta.pop("dataset")["name"] == "hf://datasets/team/phone-episodes"
        assert a == b  # every field, every step: trees, thoughts, outputs, meta, device, score
        b.meta["dataset"] = {"name": "hf://datasets/team/phone-episodes",
                             "revision": target.episode(episode_id).meta["dataset"]["revision"]}
        assert b.meta["dataset"]["name"] == "hf://datasets/team/phone-episodes" and len(b.meta["dataset"]["revision"]) == 40
    again = import_dataset(target, "hub", ["hf://datasets/team/phone-episodes@v1"])
    assert (again.written, again.skipped) == (0, 4)


def test_a_repo_without_an_episodes_export_is_reported(published, tmp_path, monkeypatch):
    _, hub = published
    folder = tmp_path / "v"
    (folder / "sft").mkdir(parents=True)
    (folder / "sft" / "train-00000-of-00001.parquet").write_bytes(b"PAR1")
    (folder / "README.md").write_text("---\nconfigs: []\n---\n")
    push_folder(folder, "team/only-sft", revision_tag="v1", token=hub.token, endpoint=hub.url)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    report = import_dataset(Lake.init(tmp_path / "l"), "hub", ["hf://datasets/team/only-sft"])
    assert report.quarantined == 1 and "no episodes/*.parquet export" in report.reasons[0]


@pytest.mark.parametrize("url", ["hf://models/a/b", "https://huggingface.co/datasets/a/b", "hf://datasets/a"])
def test_bad_hub_urls_are_refused(url):
    with pytest.raises(InvalidRecord, match="is not hf://datasets/ORG/NAME"):
        parse_url(url)


def test_hub_url_revision_defaults_to_main():
    assert parse_url("hf://datasets/a/b") == ("a/b", "main")
    assert parse_url("hf://datasets/a/b@v3") == ("a/b", "v3")


def test_cli_imports_from_the_hub_and_names_a_missing_repo(published, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from phoneloop.cli import app

    _, hub = published
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    lake = tmp_path / "lake"
    Lake.init(lake)
    runner = CliRunner()
    ok = runner.invoke(app, ["lake", "import", "hf://datasets/team/phone-episodes@v1", "--lake", str(lake)])
    assert ok.exit_code == 0 and "4 episodes written" in ok.output
    missing = runner.invoke(app, ["lake", "import", "hf://datasets/team/nothing-here", "--lake", str(lake)])
    assert missing.exit_code == 2 and "cannot read hf://datasets/team/nothing-here from the Hub" in missing.output


def test_hub_round_trip_keeps_the_source_datasets_provenance_with_the_hub_origin_nested(tmp_path, monkeypatch):
    imported = replace(episode(9, n_steps=2, source="public"),
                       meta={"dataset": {"name": "aitw", "split": "train", "episode_id": "e9",
                                         "files": ["general-00000-of-00321"]}})
    source = Lake.init(tmp_path / "source")
    source.write_episodes([imported])
    dv = curate(source, parse_recipe(RECIPE), allow_unredacted=True)  # synthetic real-phone rows, exported on purpose
    with HubServer() as hub:
        push_folder(Path(dv.path), "team/from-aitw", revision_tag="v1", token=hub.token, endpoint=hub.url)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_TOKEN", hub.token)
        target = Lake.init(tmp_path / "target")
        assert import_dataset(target, "hub", ["hf://datasets/team/from-aitw@v1"]).written == 1
    meta = target.episode(imported.episode_id).meta["dataset"]
    hub_origin = meta.pop("hub")
    assert meta == imported.meta["dataset"]
    assert hub_origin["name"] == "hf://datasets/team/from-aitw" and len(hub_origin["revision"]) == 40
    assert hub_origin["file"].startswith("episodes/")
