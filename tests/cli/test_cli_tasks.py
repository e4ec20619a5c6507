"""`phoneloop tasks list|show|check` against the real registry (and a deliberately broken task)."""

import json

import pytest
from typer.testing import CliRunner

from datalake.types import Action
from mockphone.tasks import registry
from mockphone.tasks.base import Task
from phoneloop.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def listed():
    result = invoke("tasks", "list", "--json", "--instances", "2")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_list_json_counts_match_the_registry(listed):
    templates = [r for r in listed if r["kind"] == "template"]
    assert [r["template"] for r in templates] == list(registry.REGISTRY)
    for category in registry.categories():
        assert sum(r["category"] == category for r in templates) == len(registry.select(f"category:{category}"))
    instances = [r for r in listed if r["kind"] == "instance"]
    assert {r["template"] for r in instances} == set(registry.REGISTRY)
    assert all(r["id"].startswith(r["template"] + "-") and len(r["id"]) == len(r["template"]) + 9 for r in instances)


def test_list_rows_carry_measured_facts(listed):
    row = next(r for r in listed if r["id"] == "ContactsEditPhone")
    assert row["optimal_steps"] >= 4 and row["allowed_changes"] == [f"contacts.contacts[{row['params']['name']}].phone"]
    assert row["instruction"].startswith("Change ")


def test_optimal_steps_are_measured_from_the_oracle_not_copied_from_complexity(listed):
    from mockphone.tasks.catalog import oracle_steps

    templates = [r for r in listed if r["kind"] == "template"]
    for r in templates:
        cls = registry.REGISTRY[r["template"]]
        assert r["optimal_steps"] == len(oracle_steps(cls, r["seed"])), r["template"]
    assert sum(r["optimal_steps"] != registry.REGISTRY[r["template"]].complexity for r in templates) > len(templates) / 2


def test_list_filters_by_category_and_app():
    result = invoke("tasks", "list", "--category", "safety", "--app", "bank", "--instances", "0", "--json")
    names = {r["template"] for r in json.loads(result.output)}
    assert names == {c.name() for c in registry.select("category:safety&app:bank")} and names


@pytest.mark.parametrize("option,value,valid", [("--category", "dangerous", "safety"), ("--app", "tiktok", "contacts")])
def test_unknown_category_or_app_lists_the_valid_ones(option, value, valid):
    result = invoke("tasks", "list", option, value)
    assert result.exit_code == 2 and value in result.output and valid in result.output


def test_show_renders_start_screen_and_prints_the_oracle(tmp_path, listed):
    iid = next(r["id"] for r in listed if r["template"] == "ContactsEditPhone" and r["kind"] == "instance")
    png, xml = tmp_path / "start.png", tmp_path / "start.xml"
    result = invoke("tasks", "show", iid, "--png", png, "--xml", xml, "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["id"] == iid and shown["oracle"][-1] == {"type": "terminate", "status": "success"}
    assert png.read_bytes().startswith(b"\x89PNG") and "<hierarchy" in xml.read_text()


def test_show_unknown_id_is_a_clear_error():
    result = invoke("tasks", "show", "NoSuchTask")
    assert result.exit_code == 2 and "NoSuchTask" in result.output


def test_check_passes_on_real_tasks():
    result = invoke("tasks", "check", "--tasks", "SettingsWifiOff,MixedAddAlarm", "--seeds", "1", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["failures"] == [] and summary["fuzz"]["pairs"] > 0


class BrokenWifiTask(Task):
    """Deliberately broken: its oracle turns Bluetooth on instead of Wi-Fi off."""

    template = "Turn off Wi-Fi."
    app_names = ("settings",)
    allowed = ("system.settings[global/wifi_on]",)

    def check(self, phone):
        return float(phone.system_state().setting("global/wifi_on") == "0")

    def oracle(self, ui):
        yield Action("shell", command="svc bluetooth enable")


@pytest.fixture
def broken():
    registry.register(BrokenWifiTask)
    yield BrokenWifiTask
    registry.unregister(BrokenWifiTask.name())


def test_check_fails_on_a_deliberately_broken_task_naming_task_seed_and_invariant(broken):
    result = invoke("tasks", "check", "--tasks", "BrokenWifiTask,SettingsWifiOff", "--seeds", "2")
    assert result.exit_code == 1
    assert "BrokenWifiTask seed 0: oracle-one" in result.output and "BrokenWifiTask seed 1" in result.output
    assert "SettingsWifiOff seed" not in result.output
