"""Every registered template brings wrong endings of its own, and each of them does something to the phone.

The generic endings (truncated, side effect, other params) are built by ``invariants`` for every template;
a template's own ones (``Task.own_endings``: a wrong entity, a wrong amount, a stricter filter, an extra side
effect, the task done and another one too) are the plausible mistakes of a model on that flow. "Changed
something" is read from the phone's event log (start snapshot against the last one, navigation left out),
never from the verifier; the sampled sweep in ``test_invariants`` plays them all.
"""

from datalake.types import Action
from mockphone.tasks import endings, invariants
from mockphone.tasks.registry import REGISTRY
from tests.mockphone.helpers import WifiOff


def test_every_registered_template_has_at_least_two_own_endings():
    few = {name: n for name, n in invariants.own_wrong_endings(REGISTRY.values()).items() if n < invariants.MIN_OWN}
    assert few == {}


class _Bare(WifiOff):
    """A template that brings no ending of its own (what a new template without them looks like)."""


class _Idle(_Bare):
    """Two own endings that change nothing: one stops short and claims success, one toggles and untoggles."""

    def wrong_endings(self):
        def nothing(phone, task):
            phone.act(Action("terminate", status="success"))

        def undone(phone, task):
            phone.act(Action("shell", command="svc bluetooth enable"))
            phone.act(Action("shell", command="svc bluetooth disable"))
            phone.act(Action("terminate", status="success"))
        return {"stopped-short": nothing, "on-and-off-again": undone}


class _Fine(_Bare):
    """Two own endings that change the phone: the switch beside it, and the task done with one more change."""

    swaps = ()

    def wrong_endings(self):
        return {"mobile-data-instead": endings.ending(lambda t: lambda ui: iter(
                    [Action("shell", command="svc data disable")])),
                "and-bluetooth-too": endings.after(lambda t: lambda ui: iter(
                    [Action("shell", command="svc bluetooth enable")]))}


def test_a_template_without_own_endings_fails_the_invariant():
    failures = invariants.check_wrong_endings(_Bare, 0)
    assert [f.detail for f in failures if f.invariant == "own-endings"] == ["only 0 wrong ending(s) of its own"]
    assert invariants.own_wrong_endings([_Bare]) == {"_Bare": 0}


def test_own_endings_that_change_nothing_fail_even_when_they_score_zero():
    failures = invariants.check_wrong_endings(_Idle, 0)
    assert sorted(f.detail for f in failures if f.invariant == "own-endings") == [
        "own ending 'on-and-off-again' changed nothing", "own ending 'stopped-short' changed nothing"]


def test_own_endings_that_change_the_phone_pass():
    assert invariants.check_wrong_endings(_Fine, 0) == []


def test_an_answer_or_a_question_is_a_deliberate_ending():
    from mockphone.tasks.play import start

    phone, _ = start(_Bare, 0)
    assert not invariants.ending_changed(phone)  # nothing happened yet
    phone.act(Action("terminate", status="success"))
    assert not invariants.ending_changed(phone)  # a bare claim of success changes nothing
    assert invariants.ending_changed(phone, infeasible=True)  # on an infeasible task the claim is the ending
    phone.act(Action("answer", text="It is off"))
    assert invariants.ending_changed(phone)


# --- the verifiers the fuzzer fooled ---------------------------------------------------------------------

def test_a_labelled_alarm_created_and_then_switched_off_is_not_the_alarm_asked_for():
    from mockphone.tasks.endings import play
    from mockphone.tasks.play import run_oracle, start

    phone, task = start(REGISTRY["ClockAddLabeledAlarm"], 0)
    run_oracle(phone, task, terminate=False)
    time = f"{task.params['hour']:02d}:{task.params['minute']:02d}"
    assert task.is_successful(phone) == 1.0

    def switch_off(ui):
        yield Action("shell", command=f"am force-stop {phone.app('clock').package}")
        yield from ui.open("clock")
        yield from ui.tap(text=time)  # the alarm's row is its switch

    play(phone, switch_off)
    assert phone.state("clock").find(time).enabled is False  # the switch was hit, read from the store
    assert task.is_successful(phone) < 1.0
