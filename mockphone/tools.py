"""The mock phone's documented tool set: JSON-schema'd functions a ``tool`` action calls.

Every MockPhone registers these at construction (``install(phone)``); ``specs()`` lists
them as an MCP client would (``name``, ``description``, ``inputSchema``). Arguments are
validated with ``jsonschema`` before the tool runs; an unknown tool or bad arguments is a
:class:`ToolError`, which the phone turns into an error step (see ``gestures.tool``)::

    calendar.create_event {"title": "Dentist", "date": "2026-03-12", "time": "15:00"}
    contacts.search {"query": "Mia"}            -> JSON list of matching contacts
    notes.create {"title": "Groceries", "body": "eggs, milk"}

Tools change the same app state the GUI does, so a verifier cannot tell which path was taken.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import jsonschema

from mockphone.errors import MockPhoneError

if TYPE_CHECKING:
    from mockphone.phone import MockPhone


class ToolError(MockPhoneError):
    """A tool call named an unknown tool, had arguments that do not fit its schema, or could not be done."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    fn: Callable[[MockPhone, dict[str, Any]], str]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


def _obj(required: tuple[str, ...], **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


STR = {"type": "string", "minLength": 1}
DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
TIME = {"type": "string", "pattern": r"^\d{2}:\d{2}$"}


def _create_event(phone: MockPhone, args: dict[str, Any]) -> str:
    from mockphone.apps.calendar import Event

    try:
        dt.datetime.strptime(f"{args['date']} {args['time']}", "%Y-%m-%d %H:%M")
    except ValueError:
        raise ToolError(f"not a real date/time: {args['date']} {args['time']}") from None
    state = phone.app("calendar").state
    if state.find(args["title"]) is not None:
        raise ToolError(f"an event titled {args['title']!r} already exists")
    state.events.append(Event(args["title"], args["date"], args["time"], args.get("location", "")))
    return f"created event {args['title']!r}"


def _list_events(phone: MockPhone, args: dict[str, Any]) -> str:
    events = phone.app("calendar").state.agenda()
    return json.dumps([{"title": e.title, "date": e.date, "time": e.time, "location": e.location}
                       for e in events if e.date == args.get("date", e.date)])


def _search_contacts(phone: MockPhone, args: dict[str, Any]) -> str:
    q = args["query"].lower()
    return json.dumps([{"name": c.name, "phone": c.phone, "email": c.email}
                       for c in phone.app("contacts").state.contacts if q in c.name.lower()])


def _create_contact(phone: MockPhone, args: dict[str, Any]) -> str:
    from mockphone.apps.contacts import Contact

    state = phone.app("contacts").state
    if state.find(args["name"]) is not None:
        raise ToolError(f"a contact named {args['name']!r} already exists")
    state.contacts.append(Contact(args["name"], args["phone"], args.get("email", "")))
    return f"created contact {args['name']!r}"


def _create_note(phone: MockPhone, args: dict[str, Any]) -> str:
    from mockphone.apps.notes import Note

    state = phone.app("notes").state
    if state.find(args["title"]) is not None:
        raise ToolError(f"a note titled {args['title']!r} already exists")
    state.notes.insert(0, Note(args["title"], args["body"]))
    return f"created note {args['title']!r}"


def _create_alarm(phone: MockPhone, args: dict[str, Any]) -> str:
    from mockphone.apps.clock import Alarm

    state = phone.app("clock").state
    alarm = Alarm(args["hour"], args["minute"], args.get("label", ""))
    if state.find(alarm.time) is not None:
        raise ToolError(f"an alarm at {alarm.time} already exists")
    state.alarms.append(alarm)
    return f"alarm set for {alarm.time}"


TOGGLES = {"wifi": "global/wifi_on", "bluetooth": "global/bluetooth_on", "airplane_mode": "global/airplane_mode_on",
           "do_not_disturb": "global/do_not_disturb"}


def _set_toggle(phone: MockPhone, args: dict[str, Any]) -> str:
    phone.put_setting(TOGGLES[args["name"]], args["on"])
    return f"{args['name']} {'on' if args['on'] else 'off'}"


TOOLS: dict[str, ToolSpec] = {s.name: s for s in (
    ToolSpec("calendar.create_event", "Create a calendar event.",
             _obj(("title", "date", "time"), title=STR, date=DATE, time=TIME, location={"type": "string"}),
             _create_event),
    ToolSpec("calendar.list_events", "List calendar events, optionally of one date (JSON).",
             _obj((), date=DATE), _list_events),
    ToolSpec("contacts.search", "Contacts whose name contains the query (JSON list).",
             _obj(("query",), query=STR), _search_contacts),
    ToolSpec("contacts.create", "Create a contact.",
             _obj(("name", "phone"), name=STR, phone=STR, email={"type": "string"}), _create_contact),
    ToolSpec("notes.create", "Create a note.", _obj(("title", "body"), title=STR, body=STR), _create_note),
    ToolSpec("clock.create_alarm", "Set an alarm.",
             _obj(("hour", "minute"), hour={"type": "integer", "minimum": 0, "maximum": 23},
                  minute={"type": "integer", "minimum": 0, "maximum": 59}, label={"type": "string"}),
             _create_alarm),
    ToolSpec("settings.set_toggle", "Turn a quick setting on or off.",
             _obj(("name", "on"), name={"type": "string", "enum": sorted(TOGGLES)}, on={"type": "boolean"}),
             _set_toggle),
)}


# ``content insert|query --uri URI`` in the shell calls these tools (Android's content-provider CLI)
CONTENT_URIS = {"content://com.android.calendar/events": "calendar.create_event",
                "content://com.android.contacts/contacts": "contacts.create",
                "content://com.phoneloop.notes/notes": "notes.create",
                "content://com.android.deskclock/alarms": "clock.create_alarm"}
QUERY_URIS = {"content://com.android.contacts/contacts": "contacts.search"}


def specs() -> list[dict[str, Any]]:
    """The tool set as an MCP ``tools/list`` result would show it, sorted by name."""
    return [TOOLS[n].to_json() for n in sorted(TOOLS)]


def _checked(spec: ToolSpec) -> Callable[[MockPhone, dict[str, Any]], str]:
    def call(phone: MockPhone, args: dict[str, Any]) -> str:
        try:
            jsonschema.validate(args, spec.input_schema)
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "arguments"
            raise ToolError(f"{spec.name}: bad {where}: {exc.message}") from None
        return spec.fn(phone, args)

    return call


def install(phone: MockPhone) -> None:
    """Register the whole tool set on ``phone`` (idempotent)."""
    for spec in TOOLS.values():
        phone.register_tool(spec.name, _checked(spec))
