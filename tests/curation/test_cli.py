import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from phoneloop.cli import app

runner = CliRunner()
DEFAULT = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"
SAMPLE = Path(str(resources.files("phoneloop") / "sample" / "episodes.jsonl"))


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def lake_dir(tmp_path):
    path = tmp_path / "lake"
    invoke("lake", "init", "--lake", path)
    invoke("lake", "import", SAMPLE, "--lake", path)
    return path


def test_curate_then_list_show_diff_rebuild(lake_dir):
    built = invoke("curate", DEFAULT, "--lake", lake_dir, "--json")
    assert built.exit_code == 0, built.output
    dv = json.loads(built.output)
    assert dv["ref"] == "default@v1" and dv["counts"]["episodes"] > 0
    listed = json.loads(invoke("datasets", "list", "--lake", lake_dir, "--json").output)
    assert [v["ref"] for v in listed] == ["default@v1"]
    shown = json.loads(invoke("datasets", "show", "default@v1", "--lake", lake_dir, "--json").output)
    assert shown["fingerprint"] == dv["fingerprint"] and Path(shown["exports"]["path"]).is_dir()
    assert shown["exports"]["formats"]["sft"]
    rebuilt = invoke("datasets", "rebuild", "default@v1", "--lake", lake_dir, "--json")
    assert rebuilt.exit_code == 0 and json.loads(rebuilt.output)["same_fingerprint"] is True
    listed = json.loads(invoke("datasets", "list", "--lake", lake_dir, "--json").output)
    assert [v["ref"] for v in listed] == ["default@v1"]  # a rebuild registers nothing
    assert invoke("curate", DEFAULT, "--lake", lake_dir, "--json").exit_code == 0
    diff = json.loads(invoke("datasets", "diff", "default@v1", "default@v2", "--lake", lake_dir, "--json").output)
    assert diff["same_fingerprint"] is True and diff["recipe_diff"] == []


def test_curate_reports_recipe_errors_with_the_line(lake_dir, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEFAULT.read_text().replace("op: drop_loops", "op: drop_loopz"))
    result = invoke("curate", bad, "--lake", lake_dir)
    assert result.exit_code == 2
    assert "unknown op 'drop_loopz'" in result.output and "line" in result.output
    assert json.loads(invoke("datasets", "list", "--lake", lake_dir, "--json").output) == []


def test_unknown_dataset_is_a_clear_error(lake_dir):
    result = invoke("datasets", "show", "nope@v3", "--lake", lake_dir)
    assert result.exit_code == 2 and "no dataset 'nope@v3'" in result.output


def test_list_ops_names_every_op():
    result = invoke("curate", "--list-ops", "--json")
    ops = json.loads(result.output)
    assert {"filter", "dedup_near", "redact", "mix", "balance"} <= set(ops)
    assert all(info["doc"] for info in ops.values())


def test_push_sends_the_version_to_the_hub_with_its_tag(lake_dir, hub, monkeypatch):
    from huggingface_hub import HfApi

    invoke("curate", DEFAULT, "--lake", lake_dir)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    result = invoke("datasets", "push", "default@v1", "--repo", "phoneloop/demo", "--lake", lake_dir, "--json")
    assert result.exit_code == 0, result.output
    pushed = json.loads(result.stdout)  # huggingface_hub draws its progress bars on stderr
    assert pushed["tag"] == "default-v1"
    files = HfApi(endpoint=hub.url, token=hub.token).list_repo_files("phoneloop/demo", repo_type="dataset",
                                                                    revision="default-v1")
    assert "README.md" in files and any(f.startswith("sft/") for f in files)


def test_push_without_a_token_says_so_and_sends_nothing(lake_dir, hub, monkeypatch):
    invoke("curate", DEFAULT, "--lake", lake_dir)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    result = invoke("datasets", "push", "default@v1", "--repo", "phoneloop/demo", "--lake", lake_dir)
    assert result.exit_code == 2 and "HF_TOKEN" in result.output
    assert hub.requests == []


def test_two_datasets_pushed_to_one_repo_keep_their_own_tags(lake_dir, hub, monkeypatch, tmp_path):
    from huggingface_hub import HfApi

    other = tmp_path / "other.yaml"
    other.write_text(DEFAULT.read_text().replace("name: default", "name: other"))
    for recipe in (DEFAULT, other):
        assert invoke("curate", str(recipe), "--lake", lake_dir).exit_code == 0
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    for ref in ("default@v1", "other@v1"):
        result = invoke("datasets", "push", ref, "--repo", "phoneloop/shared", "--lake", lake_dir)
        assert result.exit_code == 0, result.output
    refs = HfApi(endpoint=hub.url, token=hub.token).list_repo_refs("phoneloop/shared", repo_type="dataset")
    assert sorted(t.name for t in refs.tags) == ["default-v1", "other-v1"]


def test_push_refuses_real_episodes_no_redact_op_scanned(lake_dir, hub, monkeypatch, tmp_path):
    bare = tmp_path / "bare.yaml"
    text = DEFAULT.read_text().replace("name: default", "name: bare")
    bare.write_text(text.replace("  - op: redact\n    blur: true\n", ""))
    assert "op: redact" not in bare.read_text()
    unblurred = tmp_path / "unblurred.yaml"
    unblurred.write_text(text.replace("name: bare", "name: unblurred").replace("blur: true", "blur: false"))
    assert invoke("curate", DEFAULT, "--lake", lake_dir).exit_code == 0
    for recipe in (bare, unblurred):
        assert invoke("curate", recipe, "--lake", lake_dir, "--allow-unredacted").exit_code == 0
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    for ref in ("bare@v1", "unblurred@v1"):
        refused = invoke("datasets", "push", ref, "--repo", "phoneloop/bare", "--lake", lake_dir)
        assert refused.exit_code == 2 and "no redact op scanned" in refused.output, ref
    assert hub.requests == []
    for args in (("default@v1", "--repo", "phoneloop/ok"), ("bare@v1", "--repo", "phoneloop/bare",
                                                          "--allow-unredacted")):
        result = invoke("datasets", "push", *args, "--lake", lake_dir)
        assert result.exit_code == 0, result.output


def test_curate_refuses_to_export_real_episodes_no_redact_op_scanned(lake_dir, tmp_path):
    bare = tmp_path / "bare.yaml"
    bare.write_text(DEFAULT.read_text().replace("name: default", "name: bare")
                    .replace("  - op: redact\n    blur: true\n", ""))
    refused = invoke("curate", bare, "--lake", lake_dir)
    assert refused.exit_code == 2 and "without a redact op scanning them" in refused.output, refused.output
    assert "--allow-unredacted" in refused.output and "Traceback" not in refused.output
    assert not (Path(lake_dir) / "datasets" / "bare").exists() or not any(
        p.name.startswith("v") for p in (Path(lake_dir) / "datasets" / "bare").iterdir())
    assert invoke("curate", bare, "--lake", lake_dir, "--allow-unredacted").exit_code == 0


def _push(lake_dir, ref="default@v1"):
    return invoke("datasets", "push", ref, "--repo", "phoneloop/demo", "--lake", lake_dir)


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.output.lstrip().startswith("error:") and result.output.count("error:") == 1, result.output
    assert "Traceback" not in result.output
    return " ".join(result.output.split())  # one message (rich wraps it at the terminal's width)


def test_push_of_a_missing_version_is_one_line_and_exit_2(lake_dir, hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    assert "default@v9" in _one_line_error(_push(lake_dir, "default@v9"))


def test_push_of_an_unreadable_export_is_one_line_and_exit_2(lake_dir, hub, monkeypatch):
    import os

    built = json.loads(invoke("curate", DEFAULT, "--lake", lake_dir, "--json").output)
    shard = next(Path(built["exports"]["path"]).glob("sft/*.parquet"))
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)
    real_open = open

    def unreadable(file, *args, **kwargs):  # a permission error even as root
        if os.fspath(file) == os.fspath(shard) if isinstance(file, (str, os.PathLike)) else False:
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", unreadable)
    monkeypatch.setattr(Path, "read_bytes", lambda self: unreadable(self, "rb").read())
    assert "Permission denied" in _one_line_error(_push(lake_dir))


def test_push_to_a_hub_that_is_down_is_one_line_and_exit_2(lake_dir, monkeypatch):
    import socket

    invoke("curate", DEFAULT, "--lake", lake_dir)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket is closed
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_TOKEN", "hf_x")
    _one_line_error(_push(lake_dir))


def test_push_maps_an_unexpected_error_to_one_line(lake_dir, hub, monkeypatch):
    invoke("curate", DEFAULT, "--lake", lake_dir)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", hub.token)

    def broken(*args, **kwargs):
        raise KeyError("sha256\nsecond line")

    monkeypatch.setattr("curation.hub.push_folder", broken)
    line = _one_line_error(_push(lake_dir))
    assert "KeyError" in line and "default@v1" in line
