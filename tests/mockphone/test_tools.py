"""The documented tool set: MCP-listable schemas, validated arguments, errors as results the policy sees."""

import json

import jsonschema
import pytest

from datalake.types import Action
from mockphone.tools import TOOLS, specs


def test_tool_list_is_mcp_shaped_and_schemas_are_valid_json_schema():
    listed = specs()
    assert [t["name"] for t in listed] == sorted(TOOLS) and len(listed) >= 5
    for tool in listed:
        assert set(tool) == {"name", "description", "inputSchema"} and tool["description"]
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        assert tool["inputSchema"]["additionalProperties"] is False


def test_tool_changes_the_same_state_the_gui_reads(phone):
    result = phone.act(Action("tool", name="calendar.create_event",
                              args={"title": "Dentist", "date": "2026-03-12", "time": "15:00"}))
    assert result.ok and phone.state("calendar").find("Dentist").time == "15:00"
    listed = json.loads(phone.act(Action("tool", name="calendar.list_events", args={"date": "2026-03-12"})).output)
    assert {"title": "Dentist", "date": "2026-03-12", "time": "15:00", "location": ""} in listed


@pytest.mark.parametrize("name,args,says", [
    ("calendar.create_event", {"title": "X", "date": "12 March", "time": "15:00"}, "date"),
    ("calendar.create_event", {"title": "X", "date": "2026-02-30", "time": "15:00"}, "not a real date"),
    ("clock.create_alarm", {"hour": 24, "minute": 0}, "hour"),
    ("contacts.create", {"name": "Ada"}, "phone"),
    ("notes.create", {"title": "T", "body": "b", "colour": "red"}, "colour"),
    ("no.such_tool", {}, "not registered"),
])
def test_bad_tool_calls_are_error_results_shown_on_screen(phone, name, args, says):
    before = repr([phone.state(a) for a in ("calendar", "clock", "contacts", "notes")])
    result = phone.act(Action("tool", name=name, args=args))
    assert not result.ok and says in result.output
    assert "Tool error" in phone.ui_tree()  # visible to the policy on the next observation
    assert repr([phone.state(a) for a in ("calendar", "clock", "contacts", "notes")]) == before
    assert phone.system_state().tool_calls[-1][2] is False


def test_a_registered_tool_that_raises_is_an_error_result_not_a_crash(phone):
    phone.register_tool("flaky", lambda p, args: 1 / 0)
    result = phone.act(Action("tool", name="flaky"))
    assert not result.ok and "division by zero" in result.output


def test_shell_content_provider_goes_through_the_same_tools(phone):
    out = phone.act(Action("shell", command="content insert --uri content://com.phoneloop.notes/notes "
                                            "--bind title:s:Groceries --bind 'body:s:eggs, milk'"))
    assert out.exit_code == 0 and phone.state("notes").find("Groceries").body == "eggs, milk"
    bad = phone.act(Action("shell", command="content insert --uri content://com.android.deskclock/alarms "
                                            "--bind hour:i:99 --bind minute:i:0"))
    assert bad.exit_code == 1 and "hour" in bad.output
