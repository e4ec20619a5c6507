"""Every command on a lake in S3-compatible storage (moto on 127.0.0.1): lake info, curate,
the API (episodes, frames, read-only SQL) and the frame URLs Label Studio tasks carry."""

from __future__ import annotations

import json
import re
import uuid
from importlib import resources
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from annotate import push
from annotate.tasks import step_tasks
from api.app import create_app
from api.settings import ApiSettings
from api.signing import FrameSigner
from datalake import interchange
from datalake.lake import Lake
from datalake.storage import filesystem, resolve_folder
from phoneloop.cli import app

SAMPLE = Path(str(resources.files("phoneloop") / "sample" / "episodes.jsonl"))
RECIPE = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"
TOKEN = "s3-api-token"


@pytest.fixture(scope="module")
def s3_lake(s3) -> Lake:
    """The packaged sample, imported into a fresh lake on the S3 server."""
    lake = Lake.init(f"s3://lake/{uuid.uuid4().hex}", storage_options=s3.storage_options)
    report = interchange.import_jsonl(lake, SAMPLE)
    assert report.written > 0
    return Lake.open(lake.uri, storage_options=s3.storage_options)


@pytest.fixture(scope="module")
def api(s3_lake):
    return TestClient(create_app(s3_lake, ApiSettings(token=TOKEN, auth_reads=True, refresh_s=0.0)))


def test_lake_info_reads_an_s3_lake_with_credentials_from_the_environment(s3, s3_lake):
    result = CliRunner().invoke(app, ["lake", "info", "--json", "--lake", s3_lake.uri], env=s3.env)
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["rows"]["episodes"] == s3_lake.info()["rows"]["episodes"] > 0
    assert info["uri"] == s3_lake.uri


def test_curate_builds_a_dataset_version_into_the_bucket(s3, s3_lake):
    result = CliRunner().invoke(app, ["curate", str(RECIPE), "--json", "--lake", s3_lake.uri], env=s3.env)
    assert result.exit_code == 0, result.output
    dv = json.loads(result.output[result.output.index("{"):])
    folder = dv["exports"]["path"]
    assert folder.startswith(s3_lake.uri + "/datasets/default/v1-")
    fs, root = filesystem(folder, s3.storage_options)
    files = {info.path.removeprefix(root + "/") for info in fs.get_file_info(_selector(root)) if info.is_file}
    assert {"manifest.json", "README.md", "report.html", "recipe.yaml"} <= files
    assert any(name.startswith("sft/") and name.endswith(".parquet") for name in files), sorted(files)
    with fs.open_input_stream(f"{root}/manifest.json") as f:
        manifest = json.loads(f.read())
    assert manifest["fingerprint"] == dv["fingerprint"]
    listed = Lake.open(s3_lake.uri, storage_options=s3.storage_options).sql(
        "SELECT name, version FROM datasets").to_pylist()
    assert listed == [{"name": "default", "version": 1}]


def _selector(root: str):
    import pyarrow.fs as pafs

    return pafs.FileSelector(root, recursive=True)


def test_the_api_lists_episodes_fetches_frames_and_runs_sql_on_an_s3_lake(s3_lake, api):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    page = api.get("/api/episodes?limit=5", headers=auth)
    assert page.status_code == 200, page.text
    episodes = page.json()["items"]
    assert episodes
    one = api.get(f"/api/episodes/{episodes[0]['episode_id']}", headers=auth).json()
    sha = one["steps"][0]["frame_sha"]
    frame = api.get(f"/frames/{sha}.png", headers=auth)
    assert frame.status_code == 200 and frame.content == s3_lake.frame(sha)
    assert frame.content.startswith(b"\x89PNG")
    sql = api.post("/api/sql", headers=auth, json={"query": "SELECT count(*) AS n FROM steps"})
    assert sql.status_code == 200, sql.text
    assert sql.json()["rows"] == [[s3_lake.info()["rows"]["steps"]]]
    write = api.post("/api/sql", headers=auth, json={"query": "DELETE FROM steps"})
    assert write.status_code >= 400  # read-only on S3 too


def test_label_studio_frame_urls_resolve_through_the_api_to_the_s3_frames(s3_lake, api):
    rows = push.select_steps(s3_lake, where="true")
    signer = FrameSigner.from_api_token(TOKEN)
    tasks = step_tasks(rows, "http://testserver", signer.query)
    assert len(tasks) == len(rows) > 0
    for task, row in list(zip(tasks, rows))[:6]:
        url = task["data"]["image"]
        assert url.startswith(f"http://testserver/frames/{row['frame_sha']}.png?token=")
        got = api.get(url.removeprefix("http://testserver"))  # the browser's plain <img>: no bearer token
        assert got.status_code == 200 and got.content == s3_lake.frame(row["frame_sha"])


def test_a_dataset_built_on_s3_rebuilds_to_the_same_fingerprint(s3, s3_lake):
    from curation.build import rebuild

    lake = Lake.open(s3_lake.uri, storage_options=s3.storage_options)
    if not lake.sql("SELECT count(*) AS n FROM datasets").to_pylist()[0]["n"]:
        CliRunner().invoke(app, ["curate", str(RECIPE), "--lake", s3_lake.uri], env=s3.env)
        lake.invalidate()
    result = rebuild(lake, "default@v1")
    assert result["same"] and result["differing_files"] == [], result


def _built(s3, s3_lake) -> Lake:
    lake = Lake.open(s3_lake.uri, storage_options=s3.storage_options)
    if not lake.sql("SELECT count(*) AS n FROM datasets").to_pylist()[0]["n"]:
        result = CliRunner().invoke(app, ["curate", str(RECIPE), "--lake", s3_lake.uri], env=s3.env)
        assert result.exit_code == 0, result.output
        lake.invalidate()
    return lake


def test_the_viewer_shows_the_report_and_card_of_a_dataset_version_in_the_bucket(s3, s3_lake):
    lake = _built(s3, s3_lake)  # credentials only in storage_options: none in this process's environment
    viewer = TestClient(create_app(lake, ApiSettings(token=TOKEN, auth_reads=False, refresh_s=0.0)))
    folder = lake.sql("SELECT exports_json FROM datasets WHERE name = 'default' AND version = 1").to_pylist()[0]
    fs, root = filesystem(resolve_folder(lake.uri, json.loads(folder["exports_json"])["path"]), s3.storage_options)
    page = viewer.get("/datasets/default/v1")
    assert page.status_code == 200 and 'href="/datasets/default/v1/report"' in page.text
    for kind, name in (("report", "report.html"), ("card", "README.md")):
        got = viewer.get(f"/datasets/default/v1/{kind}")
        with fs.open_input_stream(f"{root}/{name}") as f:
            stored = f.read()
        assert got.status_code == 200, (kind, got.text)
        assert got.content == stored and len(stored) > 100  # the file in the bucket, byte for byte
        assert got.headers["content-security-policy"] == "script-src 'none'"
    assert viewer.get("/datasets/default/v9/report").status_code == 404


def _version_episodes(lake: Lake, s3) -> dict[str, list[str]]:
    """The episode ids in default@v1's sft export files, read straight from the bucket (boto3)."""
    import io

    import pyarrow.parquet as pq

    exports = json.loads(lake.sql("SELECT exports_json FROM datasets WHERE name = 'default' AND version = 1")
                         .to_pylist()[0]["exports_json"])
    bucket, _, prefix = resolve_folder(lake.uri, exports["path"]).removeprefix("s3://").partition("/")
    out = {}
    for split, info in sorted(exports["formats"]["sft"].items()):
        ids = []
        for rel in info["files"]:
            body = s3.client().get_object(Bucket=bucket, Key=f"{prefix}/{rel}")["Body"].read()
            ids += pq.read_table(io.BytesIO(body), columns=["episode_id"]).column(0).to_pylist()
        out[split] = list(dict.fromkeys(ids))
    return out


def test_the_viewer_lists_the_episodes_of_a_dataset_version_in_the_bucket(s3, s3_lake):
    lake = _built(s3, s3_lake)  # credentials only in storage_options: none in this process's environment
    expected = _version_episodes(lake, s3)
    assert sum(map(len, expected.values())) > 0
    all_ids = {r["episode_id"] for r in lake.sql("SELECT episode_id FROM episodes").to_pylist()}
    assert {i for ids in expected.values() for i in ids} <= all_ids
    viewer = TestClient(create_app(lake, ApiSettings(token=TOKEN, auth_reads=False, refresh_s=0.0)))
    got = viewer.get("/api/datasets/default/v1")
    assert got.status_code == 200, got.text
    assert got.json()["episodes"] == expected and got.json()["fingerprint"]
    page = viewer.get("/datasets/default/v1")
    assert page.status_code == 200 and "cannot be read here" not in page.text
    for split, ids in expected.items():
        block = page.text.split(f'data-split="{split}">', 1)[1].split("</p>", 1)[0]
        assert [i[:12] for i in ids] == re.findall(r'<a href="/episodes/[^"]+">([^<]+)</a>', block)
        assert all(f'href="/episodes/{i}"' in block for i in ids)
    assert viewer.get("/api/datasets/default/v9").status_code == 404
    diff = viewer.get("/api/datasets/diff?name=default&a=1&b=1").json()
    assert diff["episodes_added"] == [] and diff["episodes_removed"] == []  # read, not unknown (None)


def test_a_version_naming_files_outside_its_folder_in_the_bucket_lists_none_of_them(s3, s3_lake):
    from tests.api.conftest import dataset_row

    lake = _built(s3, s3_lake)
    real = json.loads(lake.sql("SELECT exports_json FROM datasets WHERE name = 'default' AND version = 1")
                      .to_pylist()[0]["exports_json"])
    real_file = real["formats"]["sft"]["train"]["files"][0]
    folder = f"{s3_lake.uri}/datasets/sneaky/v1"
    row = dataset_row(name="sneaky", folder=folder)
    climbing = f"../../default/{real['path'].rsplit('/', 1)[1]}/{real_file}"
    row["exports_json"] = json.dumps({"path": folder, "formats": {"sft": {"train": {
        "files": [climbing, f"{real['path']}/{real_file}", "/" + real_file]}}}})
    lake.append("datasets", [row])
    viewer = TestClient(create_app(Lake.open(lake.uri, storage_options=s3.storage_options),
                                   ApiSettings(token=TOKEN, auth_reads=False, refresh_s=0.0)))
    assert viewer.get("/api/datasets/sneaky/v1").json()["episodes"] == {"train": []}
