import json
from pathlib import Path

import pytest
import yaml
from datasets import load_dataset

from curation.build import curate, rebuild
from curation.errors import EmptySelection, RecipeError
from curation.recipe import load_recipe, parse_recipe
from curation.versions import get_version, list_versions
from datalake.lake import Lake
from tests.curation.data import corpus, episode

DEFAULT = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"


@pytest.fixture
def lake(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    lake.write_episodes(list(corpus().values()))
    return lake


def data_files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.glob("*/*.parquet"))}


def test_default_recipe_builds_a_loadable_version(lake):
    dv = curate(lake, load_recipe(DEFAULT))
    assert dv.ref == "default@v1" and len(dv.fingerprint) == 64
    root = Path(dv.path)
    for name in ("README.md", "report.html", "manifest.json", "recipe.yaml", "redactions.jsonl"):
        assert (root / name).is_file(), name
    sft = load_dataset(str(root), "sft", split="train")
    assert sft.num_rows == dv.exports["formats"]["sft"]["train"]["rows"] > 0
    assert sft[0]["messages"][-1]["role"] == "assistant" and "<tool_call>" in sft[0]["messages"][-1]["content"][0]["text"]
    assert sft[0]["images"][0].size == (270, 600)
    grpo = load_dataset(str(root), "grpo", split="train")
    assert json.loads(grpo[0]["target_action"])["type"]
    eps = load_dataset(str(root), "episodes", split="train")
    assert all(row["outcome"] == "success" for row in eps)
    total_steps = sum(s["steps"] for s in dv.counts["splits"].values())
    assert sum(i["rows"] for i in dv.exports["formats"]["sft"].values()) == total_steps == dv.counts["steps"]


def test_default_recipe_removes_what_it_should(lake):
    dv = curate(lake, load_recipe(DEFAULT))
    ops = {o["op"]: o for o in dv.counts["ops"]}
    assert ops["select"]["episodes_out"] == len(corpus()) - 2  # all but the failed and the unverified one
    ids = set(load_dataset(dv.path, "episodes", split="train")["episode_id"])
    ids |= {r["episode_id"] for split in ("val", "test") if split in dv.exports["formats"]["episodes"]
            for r in load_dataset(dv.path, "episodes", split=split)}
    named = {k: v.episode_id for k, v in corpus().items()}
    for gone in ("failed", "unverified", "exact_dup", "near_dup", "loop"):
        assert named[gone] not in ids, gone
    records = [json.loads(line) for line in open(Path(dv.path) / "redactions.jsonl")]
    assert {r["episode_id"] for r in records} <= {named["pii"], named["payment"]}  # "Transfer $20 to Bob": a name


def test_card_declares_configs_and_lineage(lake):
    dv = curate(lake, load_recipe(DEFAULT))
    text = (Path(dv.path) / "README.md").read_text()
    meta = yaml.safe_load(text.split("---")[1])
    assert {c["config_name"] for c in meta["configs"]} == {"sft", "grpo", "episodes"}
    assert dv.fingerprint in text and "select:" in text


def test_card_shows_the_recipe_sql_with_literals_replaced_by_placeholders(lake):
    text = DEFAULT.read_text().replace("name: default", "name: literal").replace(
        "    AND purpose <> 'eval'", "    AND purpose <> 'eval' AND instruction NOT LIKE '%Priya Raman%' AND 41 < 42")
    dv = curate(lake, parse_recipe(text))
    recipe = (Path(dv.path) / "README.md").read_text().split("## Recipe")[1]
    assert "Priya" not in recipe and "41" not in recipe and "'success'" not in recipe
    assert "outcome = ? AND verified_by IN (?, ?)" in recipe and "instruction NOT LIKE ? AND ? < ?" in recipe


def test_recipe_file_in_the_folder_masks_sql_literals_and_redact_names(lake):
    text = DEFAULT.read_text().replace("name: default", "name: literal").replace(
        "    AND purpose <> 'eval'", "    AND purpose <> 'eval' AND instruction NOT LIKE '%Priya Raman%' AND 41 < 42"
    ).replace("  - op: redact\n    blur: true", "  - op: redact\n    blur: true\n    names: [Wang Xiaoming, 王小明]")
    assert "王小明" in text and "Priya" in text  # the recipe as written names them
    dv = curate(lake, parse_recipe(text))
    published = (Path(dv.path) / "recipe.yaml").read_text(encoding="utf-8")
    for secret in ("Priya", "41", "'success'", "Wang Xiaoming", "王小明", "Xiaoming"):
        assert secret not in published, secret
    parsed = yaml.safe_load(published)
    assert "outcome = ? AND verified_by IN (?, ?)" in parsed["select"]
    assert [op for op in parsed["ops"] if op["op"] == "redact"] == [{"op": "redact", "blur": True, "names": ["?", "?"]}]
    assert get_version(lake, dv.ref).recipe == text  # the lake keeps the recipe as written: rebuilds read it
    assert rebuild(lake, dv.ref)["same"]


def test_rebuild_verifies_the_fingerprint_without_registering_a_version(lake):
    first = curate(lake, load_recipe(DEFAULT))
    lake.write_episodes([episode(99, task="new.task")])  # the lake moves on
    checked = rebuild(lake, first.ref)
    assert checked["same"] is True and checked["fingerprint"] == first.fingerprint
    assert checked["differing_files"] == [] and checked["counts"] == first.counts
    assert [v.ref for v in list_versions(lake)] == ["default@v1"]
    assert not [p for p in Path(first.path).parent.iterdir() if p.name.startswith(".")]
    second = curate(lake, load_recipe(DEFAULT))
    assert second.fingerprint != first.fingerprint and second.table_versions != first.table_versions
    assert [v.ref for v in list_versions(lake)] == ["default@v1", "default@v2"]
    assert get_version(lake, "default").ref == "default@v2"


def test_rebuild_names_the_files_that_differ(lake):
    first = curate(lake, load_recipe(DEFAULT))
    victim = Path(first.path) / first.exports["formats"]["sft"]["train"]["files"][0]
    victim.chmod(0o644)
    victim.write_bytes(victim.read_bytes() + b"tampered")
    checked = rebuild(lake, first.ref)
    assert checked["same"] is True  # the fingerprint is computed from the rebuilt bytes
    assert checked["differing_files"] == [first.exports["formats"]["sft"]["train"]["files"][0]]


def test_manifest_records_code_and_library_versions(lake):
    import phoneloop

    dv = curate(lake, load_recipe(DEFAULT))
    software = json.loads((Path(dv.path) / "manifest.json").read_text())["software"]
    assert software["phoneloop"] == phoneloop.__version__
    for lib in ("deltalake", "duckdb", "pyarrow", "datasets", "Pillow"):
        assert software[lib] and software[lib][0].isdigit(), lib
    assert software["git_commit"] is None or len(software["git_commit"].split("-")[0]) == 40


def test_shards_respect_the_size_cap(lake):
    dv = curate(lake, load_recipe(DEFAULT), max_shard_bytes=20_000)
    files = dv.exports["formats"]["sft"]["train"]["files"]
    assert len(files) > 1 and all("-of-" in f for f in files)
    assert load_dataset(dv.path, "sft", split="train").num_rows == dv.exports["formats"]["sft"]["train"]["rows"]


RECIPE = """name: t
select: SELECT episode_id FROM episodes
ops:
  - op: filter
    min_steps: 1
exports:
  - format: sft
"""


@pytest.mark.parametrize("text, message, line", [
    (RECIPE.replace("op: filter", "op: sparkle"), "unknown op 'sparkle'", 4),
    (RECIPE.replace("min_steps: 1", "min_stepz: 1"), "has no parameter 'min_stepz'", 5),
    (RECIPE.replace("min_steps: 1", "min_steps: lots"), "min_steps = 'lots' is not a", 5),
    (RECIPE.replace("format: sft", "format: csv"), "needs format", 7),
    (RECIPE + "    coords: furlongs\n", "coords must be one of", 8),
    (RECIPE + "colour: blue\n", "unknown field 'colour'", 8),
    (RECIPE.replace("name: t", "name: Bad Name!"), "name must be", 1),
    ("name: t\nselect: [\n", "not valid YAML", None),
])
def test_bad_recipes_name_the_line(text, message, line):
    with pytest.raises(RecipeError) as err:
        parse_recipe(text, source="r.yaml")
    assert message in str(err.value)
    if line:
        assert f"line {line}" in str(err.value)


@pytest.mark.parametrize("select, error, message", [
    ("SELEC episode_id FROM episodes", RecipeError, "select"),
    ("SELECT app FROM episodes", RecipeError, "must return an episode_id column"),
    ("SELECT episode_id FROM episodes WHERE app = 'nope'", EmptySelection, "matched no episodes"),
])
def test_bad_selections_register_nothing(lake, select, error, message):
    recipe = parse_recipe(RECIPE.replace("SELECT episode_id FROM episodes", select))
    with pytest.raises(error, match=message):
        curate(lake, recipe)
    assert list_versions(lake) == []
    assert not list((Path(lake.uri) / "datasets").glob("*/*")) if (Path(lake.uri) / "datasets").exists() else True


def test_an_op_that_empties_the_set_registers_nothing(lake):
    recipe = parse_recipe(RECIPE.replace("min_steps: 1", "min_steps: 1000"))
    with pytest.raises(EmptySelection, match="line 4: op 'filter' left no episodes"):
        curate(lake, recipe)
    assert list_versions(lake) == []


def test_real_mock_recipe_mixes_steps_one_to_one(lake):
    dv = curate(lake, load_recipe(DEFAULT.parent / "real_mock_1to1.yaml"))
    mix = next(o for o in dv.counts["ops"] if o["op"] == "mix")
    eps = [r for split in dv.exports["formats"]["episodes"]
           for r in load_dataset(dv.path, "episodes", split=split)]
    real = sum(len(r["actions"]) for r in eps if r["phone"] == "real")
    mock = sum(len(r["actions"]) for r in eps if r["phone"] == "mock")
    # mock steps are scarce in this corpus: all 4 stay, and real episodes are cut to at most as many steps
    assert mix["steps_out"] == real + mock and mock == 4 and 0 < real <= mock


def test_vacuum_refuses_while_a_registered_version_needs_the_files(lake):
    from curation.errors import VersionUnrebuildable
    from datalake.errors import VacuumRefused

    first = curate(lake, load_recipe(DEFAULT))
    lake.write_episodes([episode(98, task="another.task")])  # more files for compaction to merge
    with pytest.raises(VacuumRefused, match="default@v1 needs"):
        lake.compact(vacuum=True)
    assert rebuild(lake, first.ref)["same"] is True  # nothing was deleted
    report = lake.compact(vacuum=True, force=True)
    assert report["unrebuildable"] == ["default@v1"]
    with pytest.raises(VersionUnrebuildable, match=r"default@v1 cannot be rebuilt: .*episodes v\d"):
        rebuild(lake, first.ref)


def test_vacuum_without_registered_versions_goes_ahead(lake):
    lake.write_episodes([episode(97, task="another.task")])
    report = lake.compact(vacuum=True)
    assert report["unrebuildable"] == [] and sum(r["vacuumed"] for k, r in report.items() if k != "unrebuildable")


def test_recipe_keys_keep_human_verified_and_drop_human_rejected(tmp_path):
    from datalake import schema as S

    lake = Lake.init(tmp_path / "judged")
    eps = [episode(s, verified_by="verifier", instruction=f"judged task {s}") for s in range(4)]
    lake.write_episodes(eps)
    lake.append("annotations", [
        {"annotation_id": f"a{k}", "target": "episode", "episode_id": eps[k].episode_id, "status": "accepted",
         "outcome": outcome, "annotator": "judge@example.com", "created_at": S.now()}
        for k, outcome in ((0, "success"), (1, "failure"))])
    base = ("name: judged\nselect: SELECT episode_id FROM episodes\n{extra}"
            "split: {{by: episode, seed: 0, fractions: {{train: 1.0}}}}\nexports:\n  - {{format: episodes}}\n")
    human = curate(lake, parse_recipe(base.format(extra="verified_by: human\n")), allow_unredacted=True)
    assert human.counts["episodes"] == 2  # only the two a person judged
    kept = curate(lake, parse_recipe(base.format(extra="exclude: [human_rejected]\n").replace("judged", "kept", 1)),
                  allow_unredacted=True)
    assert kept.counts["episodes"] == 3  # everything but the episode a person rejected
    with pytest.raises(RecipeError, match="unknown 'humans'"):
        parse_recipe(base.format(extra="verified_by: humans\n"))


def test_the_manifest_and_the_version_record_the_split_rule(lake):
    dv = curate(lake, load_recipe(DEFAULT))
    manifest = json.loads((Path(dv.path) / "manifest.json").read_text())
    assert manifest["split_rule"]["rule"] == "hash" and "sha256" in manifest["split_rule"]["position"]
    assert get_version(lake, dv.ref).exports["split_rule"] == "hash"
    assert rebuild(lake, dv.ref)["same"]
