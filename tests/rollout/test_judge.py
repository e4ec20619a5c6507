"""The outcome judge: it reads the final screen, the UI dump and the actions, never the mock phone's state."""

import ast
import copy
import pathlib

import pytest

import tests.adb.helpers  # noqa: F401,E402  (points adbutils away from a real adb server first)

from phones.adb_phone import AdbPhone  # noqa: E402
from datalake.types import Action, Observation  # noqa: E402
from mockphone import reallike  # noqa: E402
from mockphone.tasks import registry  # noqa: E402
from mockphone.tasks.oracle import solve  # noqa: E402
from rollout import judge_eval  # noqa: E402
from phones.judge import JudgeTask, Verdict, family_of, judge  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_judge_module_imports_nothing_but_the_shared_types():
    tree = ast.parse((ROOT / "phones" / "judge.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not [m for m in imported if m and m.split(".")[0] in ("mockphone", "collectors", "training")]
    assert {m for m in imported if m and m.startswith("datalake")} <= {"datalake.types", "datalake.uitree"}


def _oracle_actions(name: str, seed: int) -> list[Action]:
    """The oracle's actions, solved on an identical real-like phone in process (the served one stays unread)."""
    cls = registry.get(name)
    probe = reallike.phone(seed)
    task = cls(seed=seed)
    task.initialize_task(probe)
    return solve(probe, task)


@pytest.fixture
def served():
    server = reallike.server(phones=1, latency=False).start()
    yield server
    server.stop()


def _rewind(name: str, seed: int):
    """A poison that puts every app's state and the system's back to the task's start state (nothing redrawn)."""
    def poison(phone):
        twin = reallike.phone(seed)
        registry.get(name)(seed=seed).initialize_task(twin)
        for package, app in phone.apps.items():
            app.state = copy.deepcopy(twin.apps[package].state)
        phone.system = copy.deepcopy(twin.system)
        if getattr(phone, "event_log", None) is not None:  # the episode's event log is state too: a fresh one
            from mockphone.tasks import events

            events.start(phone)
    return poison


@pytest.mark.parametrize("name,poison", [
    ("SettingsWifiOff", lambda phone: phone.system.settings.__setitem__("global/wifi_on", "1")),
    ("SettingsBluetoothOn", lambda phone: phone.system.settings.__setitem__("global/bluetooth_on", "0")),
    ("MessagesSend", _rewind("MessagesSend", 0)),
])
def test_judge_reward_is_unchanged_when_the_state_store_is_poisoned(served, name, poison):
    seed = 0
    adb = AdbPhone("emulator-5554", port=served.port)
    adb.start_task(registry.get(name)(seed=seed), seed)
    actions = _oracle_actions(name, seed)
    for a in actions:
        adb.act(a)
    device = served.devices[0]
    task = JudgeTask.of(device.task)
    before = adb.observe()
    verdict = judge(task, before, actions)
    verified = device.task.is_successful(device.phone)

    poison(device.phone)  # the verified value flipped in the state store; the screen is not redrawn
    after = adb.observe()

    assert after.screenshot == before.screenshot and after.ui_tree == before.ui_tree
    assert (verdict.outcome, verified) == ("success", 1.0)
    assert judge(task, after, actions) == verdict
    assert device.task.is_successful(device.phone) < 1.0  # the hidden verifier saw the poison


@pytest.mark.parametrize("name", ["ContactsLookupNumber", "InfeasibleDeleteMissingNote", "NotesCreate"])
def test_judge_reward_is_unchanged_when_the_state_store_is_rewound_in_process(name):
    """Answers and give-ups are logged by the phone, not sent over adb: these run on an in-process real-like phone
    (the judge still gets only the observation and the actions)."""
    phone = reallike.phone(0)
    task = registry.get(name)(seed=0)
    task.initialize_task(phone)
    actions = solve(phone, task)
    before = phone.observe()
    spec = JudgeTask.of(task)
    verdict = judge(spec, before, actions)
    assert (verdict.outcome, task.is_successful(phone)) == ("success", 1.0)

    _rewind(name, 0)(phone)  # no invalidate: the screen stays as it was
    after = phone.observe()

    assert after.screenshot == before.screenshot and after.ui_tree == before.ui_tree
    assert judge(spec, after, actions) == verdict
    assert task.is_successful(phone) == 0.0


def test_a_real_like_device_refuses_to_verify(served):
    adb = AdbPhone("emulator-5554", port=served.port)
    adb.start_task(registry.get("SettingsWifiOff")(seed=0), 0)
    code, err, _ = adb.shell("phoneloop task check")
    assert code != 0 and "no verifier" in err


def _obs(xml: str) -> Observation:
    from tests.factory import png

    return Observation(screenshot=png(0), ui_tree=xml, package="p", activity=".A")


def test_an_answer_family_episode_with_two_answers_fails():
    task = JudgeTask("ContactsLookupNumber", {"name": "Mia Chen"})
    actions = [Action("answer", text="555-0101"), Action("answer", text="555-0102")]
    xml = '<hierarchy rotation="0"><node index="0" text="555-0101" class="android.widget.TextView" ' \
          'package="p" bounds="[0,0][10,10]" /></hierarchy>'
    assert judge(task, _obs(xml), actions).outcome == "failure"


def test_giving_up_on_a_feasible_task_fails_and_on_an_infeasible_one_succeeds():
    xml = '<hierarchy rotation="0"></hierarchy>'
    give_up = [Action("terminate", status="infeasible")]
    assert judge(JudgeTask("NotesCreate", {"title": "a"}), _obs(xml), give_up).outcome == "failure"
    assert judge(JudgeTask("InfeasibleDeleteMissingNote", {"title": "a"}), _obs(xml), give_up).outcome == "success"


def test_every_template_has_a_family():
    assert {family_of(n) for n in registry._collect()} <= {"infeasible", "toggle", "answer", "send", "generic"}
    assert Verdict("unknown", "x", "generic").reward is None


# one template per family (two generic: a creation, a removal), seed 0, over oracle, random and wrong-ending
# episodes on real-like phones; measured 2026-12-03: 33 episodes, precision 1.00, recall 0.83 (the removal's oracle
# is unknown by design). bench/judge_bench.py prints the full table over 57 templates.
FLOOR_TEMPLATES = ("SettingsWifiOff", "ContactsLookupNumber", "MessagesSend", "InfeasibleDeleteMissingNote",
                   "NotesCreate", "CalendarDeleteEvent")


def test_judge_precision_and_recall_against_the_hidden_verifier_stay_above_a_floor():
    rows = judge_eval.measure(FLOOR_TEMPLATES, seeds=(0,))
    kinds = {r.kind.split(":")[0] for r in rows}
    s = judge_eval.scores(rows)
    assert kinds == {"oracle", "random", "wrong"}
    assert s["verified"] == len(FLOOR_TEMPLATES)  # every oracle episode, and only those, verified
    assert s["precision"] >= 0.9
    assert s["recall"] >= 0.75


def test_a_collected_real_like_episode_has_no_verifier_and_is_judged_from_what_it_recorded(served):
    from phones.episode import run_episode
    from phones.judge import judge_episode

    class Replay:  # the oracle's actions, solved on an in-process twin (the served phone's state stays unread)
        source, name = "oracle", "replay"

        def __init__(self, actions):
            self.plan = iter(actions)

        def act(self, instruction, observation, history):
            return next(self.plan, Action("terminate", status="success")), None

    adb = AdbPhone("emulator-5554", port=served.port)
    task = registry.get("SettingsBluetoothOn")(seed=1)
    assert not adb.runs_tasks()  # a real-like device presents as a real phone
    adb.start_task(task, 1)  # the operator's set-up, as seeding a real phone
    episode = run_episode(adb, Replay(_oracle_actions("SettingsBluetoothOn", 1)), task, seed=1, reset=False,
                          max_steps=60)
    assert (episode.outcome, episode.verified_by) == ("unknown", "none")
    assert "score" not in episode.meta
    judged = judge_episode(episode, JudgeTask.of(task))
    assert (judged.outcome, judged.verified_by) == ("success", "judge")
    assert judged.meta["judge"]["family"] == "toggle"
    assert served.devices[0].task.is_successful(served.devices[0].phone) == 1.0  # the hidden check agrees
