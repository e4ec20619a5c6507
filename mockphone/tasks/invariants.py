"""The invariants every registered task must keep; shared by the tests and ``phoneloop tasks check``.

For a task class and a seed:

* ``start-zero``: the untouched start state scores exactly 0;
* ``oracle-one``: the oracle scores exactly 1.0 (a mixed task's by the GUI, the shell and a tool);
* ``wrong-endings``: every wrong-but-plausible ending scores < 1 — generic ones built here
  (``truncated``: the oracle one action short; ``side-effect``: the oracle plus one change the
  task does not allow; ``other-params``: the oracle of the same template with other params (a
  wrong contact, amount, item); ``also-other-params``: the oracle and then that one too (the
  text also sent to a second contact); ``second-answer``: an answer task answered twice) and the task's own ``wrong_endings()``;
* ``determinism``: the same seed gives the same actions, screens and score;
* ``render-xml``: the screenshot has the display's size and every clickable element of the
  dumped tree is hit by a tap at its centre;
* ``collateral``: the collateral-damage fuzzer (``fuzz``).

Every check runs on phones of one locale (``check(..., locale="zh-CN")``, default en-US), so
the oracles and verifiers are held to the same invariants on a localized screen.
Each check returns a list of :class:`Failure` (empty = the invariant holds).
"""

from __future__ import annotations

import contextvars
import copy
import io
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from datalake.types import Action
from mockphone import i18n
from mockphone.errors import MockPhoneError
from mockphone.phone import MockPhone
from mockphone.tasks import statediff
from mockphone.tasks.base import Task
from mockphone.tasks.oracle import UI, solve

LOCALE: contextvars.ContextVar[str] = contextvars.ContextVar("invariants_locale", default=i18n.DEFAULT)
INVARIANTS = ("start-zero", "oracle-one", "wrong-endings", "determinism", "render-xml", "collateral")
NOT_STATE = {"answer", "ask_user", "terminate"}  # actions that leave the phone's state alone
# changes tried, in order, by the generic side-effect ending: the first the task does not allow is used
SIDE_EFFECTS = (
    Action("shell", command="svc bluetooth enable"), Action("shell", command="svc wifi disable"),
    Action("shell", command="settings put system screen_brightness 0"),
    Action("tool", name="notes.create", args={"title": "Stray note", "body": "typed by mistake"}),
)


@dataclass(frozen=True)
class Failure:
    task: str
    seed: int
    invariant: str
    detail: str

    def __str__(self) -> str:
        return f"{self.task} seed {self.seed}: {self.invariant}: {self.detail}"


def start(cls: type[Task], seed: int, params: dict | None = None) -> tuple[MockPhone, Task]:
    phone = MockPhone(seed=seed, locale=LOCALE.get())
    task = cls(params, seed=seed) if params is not None else cls(seed=seed)
    task.initialize_task(phone)
    return phone, task


def run_oracle(phone: MockPhone, task: Task, terminate: bool = True) -> list[Action]:
    return solve(phone, task, terminate=terminate)


def check_start_zero(cls: type[Task], seed: int) -> list[Failure]:
    phone, task = start(cls, seed)
    score = task.is_successful(phone)
    return [] if score == 0 else [Failure(cls.name(), seed, "start-zero", f"start state scores {score}")]


def check_oracle_one(cls: type[Task], seed: int) -> list[Failure]:
    """The oracle scores 1.0; a mixed task's oracle by each path (GUI, shell, tool)."""
    out = []
    for via in _paths(cls):
        phone, task = start(cls, seed)
        label = "oracle" if via == "gui" else f"oracle via {via}"
        if via != "gui":
            task.via = via
        try:
            run_oracle(phone, task)
        except MockPhoneError as exc:
            out.append(Failure(cls.name(), seed, "oracle-one", f"{label} crashed: {exc}"))
            continue
        score = task.is_successful(phone)
        if score != 1.0:
            out.append(Failure(cls.name(), seed, "oracle-one",
                               f"{label} scores {score}; violations {task.violations(phone)[:5]}"))
    return out


def _paths(cls: type[Task]) -> tuple[str, ...]:
    """The ways a task can be solved: a mixed task's three paths, else the GUI."""
    return ("gui", "shell", "tool") if hasattr(cls, "via") else ("gui",)


# --- wrong-but-plausible endings -----------------------------------------------------------

Ending = Callable[[MockPhone, Task], None]  # plays a wrong ending on an initialised phone


def _truncated(phone: MockPhone, task: Task) -> None:
    probe, probe_task = start(type(task), phone.seed, task.params)
    actions = run_oracle(probe, probe_task, terminate=False)
    if actions and actions[-1].type == "terminate":
        actions = actions[:-1]
    for a in actions[:-1]:
        phone.act(a)
    phone.act(Action("terminate", status="success"))


def _ending_of(actions: list[Action]) -> Action:
    """The oracle's own terminate (infeasible tasks end with one), else ``terminate(success)``."""
    return actions[-1] if actions and actions[-1].type == "terminate" else Action("terminate", status="success")


def _side_effect(phone: MockPhone, task: Task) -> None:
    ending = _ending_of(run_oracle(phone, task, terminate=False))
    for effect in SIDE_EFFECTS:  # until one of them is a change the task does not allow
        phone.act(effect)
        if task.violations(phone):
            break
    phone.act(ending)


def _outcome(cls: type[Task], seed: int, params: dict, player: dict) -> dict[str, Any] | None:
    """The meaningful end state of playing ``player``'s oracle on a phone set up for ``params``."""
    phone, task = start(cls, seed, params)
    try:
        _play(phone, cls(player))
    except Exception:  # noqa: BLE001 - another instance's oracle may not find its items on this phone
        return None
    return {p: v for p, v in statediff.snapshot(phone).items() if not statediff.allowed(p, ("system.*",))}


def _other_params(task: Task, seed: int) -> dict | None:
    """Params of the same template whose oracle ends in a different state (a wrong contact, amount, item)."""
    right = _outcome(type(task), seed, task.params, task.params)
    differ = getattr(type(task), "other_params_differ", ())  # keys whose change makes an outcome wrong
    for s in range(1000, 1012):
        other = type(task)(seed=s).params
        if any(other[k] == task.params[k] for k in differ):
            continue
        if other != task.params and _outcome(type(task), seed, task.params, other) != right:
            return other
    return None


def _play(phone: MockPhone, other: Task) -> None:
    probe = MockPhone(seed=phone.seed, locale=phone.locale)
    other.initialize_task(probe)  # set up on its own phone: only its oracle's choices are used
    ui = UI(phone)
    for a in other.oracle(ui):
        phone.act(a)
        for extra in ui.interruptions():
            phone.act(extra)


def _with_params(params: dict) -> Ending:
    def play(phone: MockPhone, task: Task) -> None:
        try:
            _play(phone, type(task)(params))
        except Exception:  # noqa: BLE001 - the wrong item is not there: the agent stops and claims success
            pass
        phone.act(Action("terminate", status="success"))

    return play


def _also_params(params: dict) -> Ending:
    """The task done, and then the same done to a second target (the text also sent to another contact)."""
    def play(phone: MockPhone, task: Task) -> None:
        ending = _ending_of(run_oracle(phone, task, terminate=False))
        _also_play(phone, task, params)
        phone.act(ending)

    return play


def _also_play(phone: MockPhone, task: Task, params: dict) -> None:
    for app in task.app_names:  # start the apps afresh, as an agent going back to them would
        phone.act(Action("shell", command=f"am force-stop {phone.app(app).package}"))
    try:
        _play(phone, type(task)(params))
    except Exception:  # noqa: BLE001 - the second target is not there: what was done so far stays
        pass


def _also_changes(task: Task, seed: int, params: dict) -> bool:
    """Whether doing ``params``' oracle after the task's own changes the phone's state any further."""
    phone, own = start(type(task), seed, task.params)
    run_oracle(phone, own, terminate=False)
    done = {p: v for p, v in statediff.snapshot(phone).items() if not statediff.allowed(p, ("system.*",))}
    _also_play(phone, own, params)
    return done != {p: v for p, v in statediff.snapshot(phone).items() if not statediff.allowed(p, ("system.*",))}


def _second_answer(phone: MockPhone, task: Task) -> None:
    actions = run_oracle(phone, task, terminate=False)
    given = next((a.text for a in actions if a.type == "answer"), "")
    phone.act(Action("answer", text=f"{given} or maybe something else"))
    phone.act(Action("terminate", status="success"))


def answers_in_oracle(cls: type[Task], seed: int = 0) -> bool:
    phone, task = start(cls, seed)
    return any(a.type == "answer" for a in run_oracle(phone, task, terminate=False))


def wrong_endings(task: Task, seed: int = 0) -> dict[str, Ending]:
    """Every wrong-but-plausible ending of ``task``: the generic ones and the task's own."""
    endings: dict[str, Ending] = {"truncated": _truncated, "side-effect": _side_effect}
    other = _other_params(task, seed) if task.schema else None
    if other is not None:
        endings["other-params"] = _with_params(other)
        if _also_changes(task, seed, other):  # the second target exists on this phone
            endings["also-other-params"] = _also_params(other)
    if answers_in_oracle(type(task), seed):
        endings["second-answer"] = _second_answer
    endings.update(task.wrong_endings())
    return endings


def check_wrong_endings(cls: type[Task], seed: int) -> list[Failure]:
    out = []
    names = wrong_endings(cls(seed=seed), seed)
    for name, ending in names.items():
        phone, task = start(cls, seed)
        try:
            ending(phone, task)
        except MockPhoneError as exc:
            out.append(Failure(cls.name(), seed, "wrong-endings", f"{name} crashed: {exc}"))
            continue
        score = task.is_successful(phone)
        if score >= 1.0:
            out.append(Failure(cls.name(), seed, "wrong-endings", f"wrong ending {name!r} scores {score}"))
    if len(names) < 2:
        out.append(Failure(cls.name(), seed, "wrong-endings", f"only {len(names)} wrong ending(s)"))
    return out


def check_determinism(cls: type[Task], seed: int) -> list[Failure]:
    runs = []
    for _ in range(2):
        phone, task = start(cls, seed)
        first = phone.screenshot()
        actions = run_oracle(phone, task)
        runs.append((first, actions, phone.ui_tree(), task.is_successful(phone), task.goal))
    if runs[0] != runs[1]:
        parts = ("start screen", "actions", "final tree", "score", "goal")
        bad = [p for p, a, b in zip(parts, *runs) if a != b]
        return [Failure(cls.name(), seed, "determinism", f"two runs differ in {', '.join(bad)}")]
    return []


def check_render_xml(cls: type[Task], seed: int) -> list[Failure]:
    from PIL import Image

    from datalake.uitree import parse_ui_tree
    from mockphone.gestures import hit

    phone, _ = start(cls, seed)
    obs = phone.observe()
    size = Image.open(io.BytesIO(obs.screenshot)).size
    out = []
    if size != (phone.display.width, phone.display.height):
        out.append(Failure(cls.name(), seed, "render-xml", f"screenshot is {size}, display is {phone.display.width}x"
                                                            f"{phone.display.height}"))
    for el in parse_ui_tree(obs.ui_tree):
        if el.clickable and el.bounds[2] > el.bounds[0] and el.bounds[3] > el.bounds[1]:
            if hit(phone, *el.center, "clickable") is None:
                out.append(Failure(cls.name(), seed, "render-xml", f"clickable {el.resource_id or el.text!r} at "
                                                                    f"{el.center} is not hit by a tap"))
    return out


# --- the collateral-damage fuzzer ----------------------------------------------------------

@dataclass
class FuzzReport:
    pairs: int = 0
    unchanged: int = 0  # extras changed nothing: the task must still score 1.0
    damaged: int = 0  # extras changed state outside the allowed set: must score < 1
    inside: int = 0  # extras changed only allowed or harmless state: no expectation
    failures: list[Failure] = field(default_factory=list)


def _pool(classes: Iterable[type[Task]], seed: int) -> dict[str, list[Action]]:
    """Each task's oracle actions (a mixed task's shell and tool paths too), without answer/ask/terminate."""
    pool = {}
    for cls in classes:
        for via in _paths(cls):
            phone, task = start(cls, seed)
            task.via = via
            try:
                actions = run_oracle(phone, task, terminate=False)
            except MockPhoneError:
                continue
            pool[cls.name() if via == "gui" else f"{cls.name()}/{via}"] = [a for a in actions if a.type not in NOT_STATE]
    return pool


def _state(phone: MockPhone) -> Any:
    s = phone.system
    # the draft log counts: privacy verifiers read what was ever typed
    return ({n: app.state for n, app in phone.apps.items()}, s.settings, s.clipboard, phone.files, s.drafts)


def fuzz(classes: list[type[Task]], seeds: Iterable[int] = (0,), rng_seed: int = 12, per_task: int = 3,
         pool: dict[int, dict[str, list[Action]]] | None = None) -> FuzzReport:
    """Oracle + actions drawn from other tasks' oracles; collateral damage must fail the task.

    For each task, seed and ``per_task`` draws: one to three slices of another task's oracle
    (taps, typing, shell, tool calls; never answer/ask/terminate) run after the oracle. If the
    whole state is equal (deep compare) before and after them the score must stay 1.0; if the
    snapshot diff shows a change outside the allowed set it must be < 1; a deep change the
    snapshot misses is itself a failure (a blind spot of the verifier).
    """
    rng = random.Random(rng_seed)
    report = FuzzReport()
    for seed in seeds:
        actions = (pool or {}).get(seed) or _pool(classes, seed)
        donors = sorted(actions)
        for cls in classes:
            for _ in range(per_task):
                donor = rng.choice([d for d in donors if d.split("/")[0] != cls.name()] or donors)
                _fuzz_one(cls, seed, actions[donor], donor, rng, report)
    return report


def _fuzz_one(cls: type[Task], seed: int, donor_actions: list[Action], donor: str, rng: random.Random,
              report: FuzzReport) -> None:
    phone, task = start(cls, seed)
    ending = _ending_of(run_oracle(phone, task, terminate=False))
    before, snap = copy.deepcopy(_state(phone)), statediff.snapshot(phone)
    extras = []
    for _ in range(rng.randint(1, 3)):
        if donor_actions:
            i = rng.randrange(len(donor_actions))
            extras += donor_actions[i:i + rng.randint(1, 4)]
    for a in extras:
        phone.act(a)
    phone.act(ending)
    report.pairs += 1
    score = task.is_successful(phone)
    changed = _state(phone) != before
    damage = statediff.violations(task.start_state(phone), statediff.snapshot(phone),
                                  task.allowed_changes(task.start_state(phone)))
    label = f"with {len(extras)} action(s) from {donor}"
    if not changed:
        report.unchanged += 1
        if score != 1.0:
            report.failures.append(Failure(cls.name(), seed, "collateral", f"{label} changed nothing but scores {score}"))
    elif damage:
        report.damaged += 1
        if score >= 1.0:
            report.failures.append(Failure(cls.name(), seed, "collateral", f"{label} damaged {damage[:3]}, scores 1"))
    else:
        report.inside += 1
        if not statediff.diff(snap, statediff.snapshot(phone)):
            report.failures.append(Failure(cls.name(), seed, "collateral",
                                           f"{label} changed app state the snapshot does not see"))


def check(classes: list[type[Task]], seeds: Iterable[int] = (0, 1, 2), fuzz_per_task: int = 3,
          progress: Callable[[str], None] | None = None,
          locale: str = i18n.DEFAULT) -> tuple[list[Failure], FuzzReport]:
    """Run every invariant over ``classes`` and ``seeds`` on ``locale`` phones; returns (failures, fuzz report)."""
    token = LOCALE.set(i18n.check(locale))
    try:
        return _check(classes, list(seeds), fuzz_per_task, progress)
    finally:
        LOCALE.reset(token)


def _check(classes: list[type[Task]], seeds: list[int], fuzz_per_task: int,
           progress: Callable[[str], None] | None) -> tuple[list[Failure], FuzzReport]:
    failures: list[Failure] = []
    checks = (check_start_zero, check_oracle_one, check_wrong_endings, check_determinism, check_render_xml)
    for cls in classes:
        for seed in seeds:
            for fn in checks:
                try:
                    failures += fn(cls, seed)
                except Exception as exc:  # noqa: BLE001 - a broken task is a failure to report, not a crash
                    failures.append(Failure(cls.name(), seed, fn.__name__.replace("check_", "").replace("_", "-"),
                                            f"{type(exc).__name__}: {exc}"))
        if progress is not None:
            progress(cls.name())
    report = fuzz(classes, seeds, per_task=fuzz_per_task)
    return failures + report.failures, report
