"""The exploits the verifier issue lists, each replayed: the task done *and* damage done, or guessed answers."""

import pytest

from datalake.types import Action
from mockphone.phone import MockPhone
from mockphone.tasks import statediff
from mockphone.tasks.answers import numbers, phone_numbers, times
from mockphone.tasks.oracle import UI, solve
from mockphone.tasks.registry import get


def started(name, params=None, seed=0):
    phone = MockPhone(seed=seed)
    task = get(name)(params, seed=seed) if params else get(name)(seed=seed)
    task.initialize_task(phone)
    return phone, task


def play(phone, package, steps):
    """Restart ``package`` (am force-stop: its back stack only) and run ``steps(ui)`` as an agent would."""
    phone.act(Action("shell", command=f"am force-stop {package}"))
    ui = UI(phone)
    for action in steps(ui):
        phone.act(action)


def send_text(phone, name, text):
    def steps(ui):
        yield from ui.open("messages")
        yield from ui.tap(rid="start_chat")
        yield from ui.type_into("to", name.split()[0])
        yield from ui.tap(text=name)
        yield from ui.type_into("compose", text)
        yield from ui.tap(rid="send")

    play(phone, "com.google.android.apps.messaging", steps)


def test_message_sent_to_a_second_contact_fails_messages_send():
    phone, task = started("MessagesSend", {"name": "Mia Chen", "text": "On my way!"})
    solve(phone, task)
    assert task.is_successful(phone) == 1.0
    send_text(phone, "Omar Haddad", "On my way!")
    assert task.is_successful(phone) == 0.0
    assert any(p.startswith("messages.threads[Omar Haddad]") for p in task.violations(phone))


def test_extra_alarm_fails_clock_add_alarm():
    phone, task = started("ClockAddAlarm", {"hour": 7, "minute": 50})
    solve(phone, task)
    assert task.is_successful(phone) == 1.0
    phone.act(Action("tool", name="clock.create_alarm", args={"hour": 6, "minute": 5}))
    assert task.is_successful(phone) == 0.0


def test_deleting_another_contact_fails_contacts_edit_phone():
    phone, task = started("ContactsEditPhone", {"name": "Omar Haddad", "number": "+1 555-867-5309"})
    solve(phone, task, terminate=False)
    assert task.is_successful(phone) == 1.0

    def delete_lena(ui):
        yield from ui.open("contacts")
        yield from ui.tap(text="Lena Fischer")
        yield from ui.tap(rid="delete")
        yield from ui.tap(text="DELETE")

    play(phone, "com.android.contacts", delete_lena)
    assert phone.state("contacts").find("Lena Fischer") is None
    assert task.is_successful(phone) == 0.0


@pytest.mark.parametrize("command", ["svc wifi disable", "settings put system screen_brightness 0"])
def test_shell_damage_fails_dark_theme_off(command):
    phone, task = started("SettingsDarkThemeOff")
    solve(phone, task)
    assert task.is_successful(phone) == 1.0
    phone.act(Action("shell", command=command))
    assert task.is_successful(phone) == 0.0


def test_answering_every_hotel_fails_hotel_answer_cheapest():
    phone, task = started("HotelAnswerCheapest", {"city": "Beijing"})
    for hotel in [h.name for h in phone.state("superapp").hotels if h.city == "Beijing"]:
        phone.act(Action("answer", text=hotel))
    assert task.is_successful(phone) == 0.0


def test_answering_every_alarm_fails_and_normalised_time_passes_clock_answer_earliest():
    phone, task = started("ClockAnswerEarliest")
    alarms = phone.state("clock").alarms
    phone.act(Action("answer", text=", ".join(a.time for a in alarms)))
    assert task.is_successful(phone) == 0.0
    first = min((a for a in alarms if a.enabled), key=lambda a: (a.hour, a.minute))
    half = "AM" if first.hour < 12 else "PM"
    phone2, task2 = started("ClockAnswerEarliest")
    phone2.act(Action("answer", text=f"{(first.hour - 1) % 12 + 1}:{first.minute:02d} {half}"))
    assert task2.is_successful(phone2) == 1.0


def test_all_numbers_in_one_answer_fails_contacts_lookup_number():
    phone, task = started("ContactsLookupNumber", {"name": "Mia Chen"})
    everyone = "; ".join(c.phone for c in phone.state("contacts").contacts)
    phone.act(Action("answer", text=everyone))
    assert task.is_successful(phone) == 0.0
    phone2, task2 = started("ContactsLookupNumber", {"name": "Mia Chen"})
    phone2.act(Action("answer", text=phone2.state("contacts").find("Mia Chen").phone))
    assert task2.is_successful(phone2) == 1.0


def test_second_answer_fails_even_when_the_first_was_right():
    phone, task = started("ContactsLookupNumber", {"name": "Mia Chen"})
    phone.act(Action("answer", text=phone.state("contacts").find("Mia Chen").phone))
    phone.act(Action("answer", text="+1 555-200-1001"))
    assert task.is_successful(phone) == 0.0


@pytest.mark.parametrize("name", ["CalendarReschedule", "NotesAppend", "QuickSettingsAirplaneMode",
                                  "ShopRemoveFromCart"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_formerly_half_scored_start_states_score_exactly_zero(name, seed):
    phone, task = started(name, seed=seed)
    assert task.is_successful(phone) == 0.0


def test_harmless_changes_do_not_fail_a_task():
    phone, task = started("SettingsWifiOff")
    solve(phone, task, terminate=False)
    for a in (Action("open_app", app="mail"), Action("scroll", direction="down"), Action("wait", seconds=30),
              Action("shell", command="uiautomator dump"), Action("key", key="home")):
        phone.act(a)
    assert task.violations(phone) == [] and task.is_successful(phone) == 1.0


@pytest.mark.parametrize("text,expected", [("7:50", ["07:50"]), ("07:50 AM", ["07:50"]), ("7:50 pm", ["19:50"]),
                                           ("12:05 AM", ["00:05"]), ("at 06:45 or 7:10", ["06:45", "07:10"])])
def test_times_are_normalised(text, expected):
    assert times(text) == expected


def test_numbers_and_phone_numbers_are_extracted():
    assert numbers("$1,234.50") == [1234.5] and numbers("120 kB") == [120.0]
    assert phone_numbers("+1 555-200-1000 or +1 555-200-1001") == ["15552001000", "15552001001"]


def test_snapshot_keys_records_by_identity_so_one_deletion_is_one_record():
    phone = MockPhone(seed=0)
    before = statediff.snapshot(phone)
    state = phone.app("contacts").state
    state.contacts = state.contacts[1:]
    changed = statediff.diff(before, statediff.snapshot(phone))
    assert changed and {p.split("]")[0] for p in changed} == {f"contacts.contacts[{before_name(before)}"}


def before_name(snap):
    return next(v for p, v in snap.items() if p.startswith("contacts.contacts[") and p.endswith(".name"))


def test_new_record_budget_allows_exactly_that_many():
    phone = MockPhone(seed=0)
    before = statediff.snapshot(phone)
    phone.act(Action("tool", name="notes.create", args={"title": "A", "body": "a"}))
    one = statediff.snapshot(phone)
    assert statediff.violations(before, one, ["notes.notes[+1]*"]) == []
    phone.act(Action("tool", name="notes.create", args={"title": "B", "body": "b"}))
    assert statediff.violations(before, statediff.snapshot(phone), ["notes.notes[+1]*"])


# --- found by the audit: allowed sets wider than the task, and guesses through a chat -----------------

def test_an_extra_folder_fails_files_create_folder():
    phone, task = started("FilesCreateFolder", {"folder": "Receipts"})
    solve(phone, task, terminate=False)
    assert task.is_successful(phone) == 1.0

    def another(ui):
        yield from ui.open("files")
        yield from ui.tap(rid="new_folder")
        yield from ui.type_into("folder_name", "Scans")
        yield from ui.tap(rid="create")

    play(phone, phone.app("files").package, another)
    assert "Scans" in phone.state("files").folders and task.is_successful(phone) == 0.0


def test_appending_the_line_twice_fails_notes_append():
    phone, task = started("NotesAppend", {"title": "Project plan", "line": "Buy batteries and tape"})
    solve(phone, task, terminate=False)
    assert task.is_successful(phone) == 1.0
    play(phone, phone.app("notes").package, lambda ui: solve_steps(ui, task))
    assert phone.state("notes").find("Project plan").body.count("Buy batteries and tape") == 2
    assert task.is_successful(phone) < 1.0


def solve_steps(ui, task):
    yield from task.oracle(ui)


def test_asking_the_assistant_for_every_date_fails_the_leave_request():
    from mockphone.tasks.cross_tasks import DATES

    phone, task = started("AssistantLeaveRequest", {"date": "April 3", "reason": "moving house"})
    solve(phone, task, terminate=False)
    assert task.is_successful(phone) == 1.0
    for date in DATES:  # the right request, then one for every other date too
        if date != "April 3":
            play(phone, phone.app("assistant").package,
                 lambda ui, d=date: solve_steps(ui, get("AssistantLeaveRequest")({"date": d, "reason": "moving house"})))
    assert task.is_successful(phone) < 1.0


def test_doing_the_task_and_the_same_to_a_second_target_is_a_wrong_ending():
    from mockphone.tasks import invariants

    # another seed names a contact of its own world, which this phone lacks: MessagesSend plays the same
    # ending with another contact of this phone (comm_tasks.AlsoAnother)
    endings = invariants.wrong_endings(get("MessagesSend")(seed=0), 0)
    assert "also-other-params" in endings or "also-another-person" in endings
    phone, task = started("MessagesSend", get("MessagesSend")(seed=0).params)
    endings["also-another-person"](phone, task)
    assert task.is_successful(phone) == 0.0
    right = {"name": "Mia Chen", "text": "On my way!"}
    phone, task = started("MessagesSend", right)
    sent = sum(m.sender == "me" for ms in phone.state("messages").threads.values() for m in ms)
    invariants._also_params({**right, "name": "Omar Haddad"})(phone, task)
    now = phone.state("messages").threads
    assert sum(m.sender == "me" for ms in now.values() for m in ms) == sent + 2
    assert now["Omar Haddad"][-1].text == "On my way!" and task.is_successful(phone) == 0.0
