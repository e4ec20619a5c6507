import csv
import io
import json
from importlib import resources
from pathlib import Path


import pytest
import typer.main
from typer.testing import CliRunner

from phoneloop.cli import app
from tests.factory import record, write_jsonl

SAMPLE = Path(str(resources.files("phoneloop") / "sample" / "episodes.jsonl"))
runner = CliRunner()


def commands(group, prefix=()):
    for name, cmd in group.commands.items():
        yield prefix + (name,)
        if hasattr(cmd, "commands"):
            yield from commands(cmd, prefix + (name,))


ALL = sorted(commands(typer.main.get_command(app)))


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("path", ALL, ids=" ".join)
def test_every_command_has_help(path):
    result = invoke(*path, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    leaf = typer.main.get_command(app)
    for name in path:
        leaf = leaf.commands[name]
    assert leaf.help and leaf.help.strip(), f"{' '.join(path)} has no help text"


def test_lake_commands_exist():
    assert {("lake", c) for c in ("init", "info", "sql", "show", "import", "export", "compact")} <= set(ALL)


@pytest.fixture
def lake_dir(tmp_path):
    path = tmp_path / "lake"
    assert invoke("lake", "init", "--lake", path).exit_code == 0
    return path


def test_init_then_info_json_reports_counts_and_schema(lake_dir):
    result = invoke("lake", "info", "--lake", lake_dir, "--json")
    info = json.loads(result.output)
    assert info["schema_version"] == 4 and info["rows"]["episodes"] == 0


def test_lake_from_environment_variable(lake_dir, monkeypatch):
    monkeypatch.setenv("PHONELOOP_LAKE", str(lake_dir))
    result = invoke("lake", "info", "--json")
    assert result.exit_code == 0 and json.loads(result.output)["uri"] == str(lake_dir)


def test_import_sql_show_export_round_trip(lake_dir, tmp_path):
    result = invoke("lake", "import", SAMPLE, "--lake", lake_dir, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["written"] == 6
    out = invoke("lake", "sql", "SELECT episode_id, source FROM episodes ORDER BY episode_id", "--lake", lake_dir,
                 "--format", "json")
    rows = json.loads(out.output)
    assert len(rows) == 6
    as_csv = list(csv.reader(io.StringIO(invoke("lake", "sql", "SELECT count(*) AS n FROM steps",
                                                "--lake", lake_dir, "--format", "csv").output)))
    assert as_csv == [["n"], ["20"]]
    shown = json.loads(invoke("lake", "show", rows[0]["episode_id"], "--lake", lake_dir, "--json").output)
    assert shown["episode_id"] == rows[0]["episode_id"] and shown["steps"]
    table = invoke("lake", "show", rows[0]["episode_id"], "--lake", lake_dir)
    assert table.exit_code == 0 and shown["instruction"] in table.output
    exported = invoke("lake", "export", tmp_path / "out", "--lake", lake_dir, "--where", "source = 'oracle'",
                      "--json")
    assert json.loads(exported.output)["episodes"] == 2
    assert len((tmp_path / "out" / "episodes.jsonl").read_text().splitlines()) == 2


def test_import_with_quarantined_records_exits_non_zero_and_reports(lake_dir, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    path = write_jsonl(folder / "x.jsonl", [record(1, folder), b"{oops", record(2, folder)])
    result = invoke("lake", "import", path, "--lake", lake_dir)
    assert result.exit_code == 1
    assert "2 episodes written" in result.output and "1 quarantined" in result.output
    assert "line 2" in result.output
    q = json.loads(invoke("lake", "sql", "SELECT reason FROM quarantine", "--lake", lake_dir, "-f", "json").output)
    assert "not valid JSON" in q[0]["reason"]


def test_import_with_workers_imports_every_file(lake_dir, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    files = [write_jsonl(folder / f"{i}.jsonl", [record(i * 10 + j, folder) for j in range(3)]) for i in range(3)]
    result = invoke("lake", "import", *files, "--lake", lake_dir, "--workers", 2, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["written"] == 9


def test_missing_lake_is_a_clear_error(tmp_path):
    result = invoke("lake", "info", "--lake", tmp_path / "none")
    assert result.exit_code == 2 and "phoneloop lake init" in result.output


def test_bad_sql_is_a_clear_error(lake_dir):
    result = invoke("lake", "sql", "SELEC nonsense", "--lake", lake_dir)
    assert result.exit_code == 2 and "query failed" in result.output


def test_sql_as_of_reads_an_older_version(lake_dir):
    invoke("lake", "import", SAMPLE, "--lake", lake_dir)
    out = invoke("lake", "sql", "SELECT count(*) AS n FROM episodes", "--lake", lake_dir, "-f", "json",
                 "--as-of", '{"episodes": 0, "steps": 0}')
    assert json.loads(out.output) == [{"n": 0}]


def test_compact_keeps_rows(lake_dir):
    invoke("lake", "import", SAMPLE, "--lake", lake_dir)
    result = invoke("lake", "compact", "--lake", lake_dir, "--json")
    assert result.exit_code == 0 and "steps" in json.loads(result.output)
    info = json.loads(invoke("lake", "info", "--lake", lake_dir, "--json").output)
    assert info["rows"]["episodes"] == 6 and info["rows"]["steps"] == 20


@pytest.mark.slow  # > 20 s on 2 cores
def test_demo_runs_a_loop_round_that_learns_and_is_safe_to_run_again(tmp_path):
    """The README's main job, small (``--quick``: examples/loop_quick.yaml): sample + mock demonstrations ->
    dataset -> SFT -> rollouts -> dataset -> GRPO with played online episodes -> eval on three suites of
    instances it never trained on, where the SFT model beats random and its replies parse."""
    from datalake.lake import Lake

    result = runner.invoke(app, ["demo", "--quick", "--lake", str(tmp_path / "lake"), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["imported"] == 6 and out["quarantined"] == 0
    r = out["round"]
    assert list(r) == ["tasks", "collect", "curate", "sft", "rollout", "correct", "curate_rollouts", "grpo", "eval"]
    failed = r["rollout"]["outcomes"].get("failure", 0)
    assert r["correct"]["failed_rollouts"] == failed - r["rollout"]["policy_errors"]
    rows = {(x["source"], x["phone"], x["category"]): x for x in out["summary"]}
    assert rows[("oracle", "mock", "single-app")]["success_rate"] == 1.0 and ("rollout", "mock", "single-app") in rows
    sft, grpo = r["sft"]["model"], r["grpo"]["model"]
    assert f"| suite | {sft} | {grpo} | oracle | random |" in out["eval_markdown"] and "| **all** |" in out["eval_markdown"]
    suites = r["tasks"]["suites"]
    assert [s.split("@")[0] for s in suites] == ["demo-loop-quick-id", "demo-loop-quick-ood-template",
                                                 "demo-loop-quick-ood-app"]
    overall = r["eval"]["overall"]
    assert overall["oracle"]["rate"] == 1.0 and overall[sft]["n"] == overall["random"]["n"] == 10  # 6 + 2 + 2
    assert overall[sft]["successes"] > overall["random"]["successes"], out["eval_markdown"]
    assert r["eval"]["held_out"] is True and set(r["eval"]["overlap"].values()) == {0}
    # held out by content, checked outside the loop: the fingerprints the collector and the rollouts recorded on
    # every training episode never meet a suite instance, and every evaluated episode is one
    lake = Lake.open(out["lake"])
    shared = lake.sql("SELECT count(*) FROM episodes e JOIN tasksets t ON e.instance = t.fingerprint "
                      "WHERE t.kind = 'suite' AND e.purpose = 'train'").column(0)[0].as_py()
    strays = lake.sql("SELECT count(*) FROM episodes WHERE purpose = 'eval' AND instance NOT IN "
                      "(SELECT fingerprint FROM tasksets WHERE kind = 'suite')").column(0)[0].as_py()
    assert shared == 0 and strays == 0
    evals = lake.sql("SELECT DISTINCT suite, overlap FROM evals").to_pylist()
    assert evals == [{"suite": ",".join(suites), "overlap": 0}]
    steps = lake.sql("SELECT count(*) AS n, count(*) FILTER (WHERE s.raw_output LIKE 'invalid: %') AS bad FROM steps s "
                     "JOIN episodes e USING (episode_id) WHERE e.purpose = 'eval' AND e.policy = ?", [sft]).to_pylist()[0]
    assert steps["n"] and steps["bad"] <= 0.3 * steps["n"], steps
    # GRPO's online rows were played on mock phones and scored by their verifiers
    played = [v for v in r["grpo"]["metrics"]["rewards/episode_reward/mean"] if v is not None]
    assert played, r["grpo"]["metrics"]
    from PIL import Image

    assert Image.open(r["eval"]["curves"]).size[0] > 800  # SFT loss, GRPO reward and variance, success per round
    again = json.loads(runner.invoke(app, ["demo", "--quick", "--lake", str(tmp_path / "lake"), "--json"]).stdout)
    assert again["imported"] == 0 and again["round"] == out["round"]  # nothing ran twice


def test_the_demo_loop_is_the_demo_task_set_with_held_out_seeds():
    """examples/loop.yaml (the README's main job): >= 12 templates with >= 2 cross-app and >= 2 mini-app ones, the
    element-list format, balanced SFT, seeds that never meet (demonstrations, rollouts, online GRPO, the suites'
    candidates), and suites drawn from the trained templates, 6 untrained templates of trained apps and 6
    templates of untrained apps."""
    from mockphone.tasks.registry import get
    from phoneloop.cli_tasks import seed_range
    from phoneloop.demo import DEFAULT_CONFIG
    from phoneloop.loop import LoopConfig
    from mockphone.tasks.sets import DEMO_TASKS
    from training.mock_episodes import ONLINE_SEED

    config = LoopConfig.load(DEFAULT_CONFIG)
    tasks = config.collect["tasks"].split(",")
    assert tuple(tasks) == DEMO_TASKS and all(getattr(config, s)["tasks"] == config.collect["tasks"]
                                              for s in ("rollout", "grpo"))
    categories = [get(t).category for t in tasks]
    assert len(tasks) >= 12 and categories.count("cross-app") >= 2 and categories.count("mini-app") >= 2
    assert config.sft["balance"] == "task" and "elements: true" in config.path(config.recipe).read_text()
    candidates = config.eval["suites"]["tasks"].split(",")
    assert candidates[:len(tasks)] == tasks
    trained_apps = {a for t in tasks for a in get(t).app_names}
    extra = [get(t) for t in candidates[len(tasks):]]
    assert sum(set(c.app_names) <= trained_apps for c in extra) == 6
    assert sum(not set(c.app_names) & trained_apps for c in extra) == 6
    train = set(config.collect["seeds"])
    evaluated = set(seed_range(config.eval["suites"]["seeds"]))
    rolled = set(range(config.rollout["seed"], config.rollout["seed"] + config.rollout["episodes"]))
    assert not (train & evaluated or rolled & evaluated or train & rolled)
    assert max(train | evaluated | rolled) < ONLINE_SEED