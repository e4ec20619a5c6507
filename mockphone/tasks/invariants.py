"""The invariants every registered task must keep; shared by the tests and ``phoneloop tasks check``.

For a task class and a seed:

* ``start-zero``: the untouched start state scores exactly 0;
* ``oracle-one``: the oracle scores exactly 1.0 (a mixed task's by the GUI, the shell and a tool);
* ``wrong-endings``: every wrong-but-plausible ending scores < 1 — generic ones built here
  (``truncated``: the oracle one action short; ``side-effect``: the oracle plus one change the
  task does not allow; ``other-params``: the oracle of the same template with other params (a
  wrong contact, amount, item); ``also-other-params``: the oracle and then that one too (the
  text also sent to a second contact); ``second-answer``: an answer task answered twice) and the task's own
  (``Task.own_endings``: at least two, each of which changed something on the phone, read from its event log;
  ``own-endings`` failures otherwise);
* ``determinism``: the same seed gives the same actions, screens and score;
* ``render-xml``: the screenshot has the display's size and every clickable element of the
  dumped tree is hit by a tap at its centre;
* ``collateral``: the collateral-damage fuzzer (``fuzz``).

Every check runs on phones of one locale (``check(..., locale="zh-CN")``, default en-US), so
the oracles and verifiers are held to the same invariants on a localized screen.
Each check returns a list of :class:`Failure` (empty = the invariant holds).
"""

from __future__ import annotations

import io
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from datalake.types import Action
from mockphone import i18n
from mockphone.errors import MockPhoneError
from mockphone.phone import MockPhone
from mockphone.tasks import events, statediff
from mockphone.tasks.base import Task

from mockphone.tasks.play import LOCALE, run_oracle, start  # noqa: E402  (re-exported: the checks' phones)
from mockphone.tasks.play import play_other as _play  # noqa: E402
from mockphone.tasks.play import also_params as _also_params  # noqa: E402
from mockphone.tasks.play import also_play as _also_play  # noqa: E402
from mockphone.tasks.play import ending_of as _ending_of  # noqa: E402
INVARIANTS = ("start-zero", "oracle-one", "wrong-endings", "own-endings", "determinism", "render-xml", "collateral")
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


def _with_params(params: dict) -> Ending:
    def play(phone: MockPhone, task: Task) -> None:
        try:
            _play(phone, type(task)(params))
        except Exception:  # noqa: BLE001 - the wrong item is not there: the agent stops and claims success
            pass
        phone.act(Action("terminate", status="success"))

    return play


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
    endings.update(task.own_endings())
    return endings


def check_wrong_endings(cls: type[Task], seed: int) -> list[Failure]:
    """Every wrong ending scores < 1; the template's own (at least ``MIN_OWN``) each changed something."""
    out = []
    names = wrong_endings(cls(seed=seed), seed)
    own = cls(seed=seed).own_endings()
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
        if name in own and not ending_changed(phone, cls.category == "infeasible"):
            out.append(Failure(cls.name(), seed, "own-endings", f"own ending {name!r} changed nothing"))
    if len(names) < 2:
        out.append(Failure(cls.name(), seed, "wrong-endings", f"only {len(names)} wrong ending(s)"))
    if len(own) < MIN_OWN:
        out.append(Failure(cls.name(), seed, "own-endings", f"only {len(own)} wrong ending(s) of its own"))
    return out


# navigation and the agent's own log: a change here alone is not something an ending did to the phone
NAVIGATION = ("system.clock_s", "system.opened", "system.permissions*", "system.answers", "system.questions",
              "system.terminated", "system.drafts", "system.notifications*", "system.tool_calls", "system.clipboard",
              "*.read", "messages.unread", "files[*.xml]")
DELIBERATE = {"answer", "ask_user"}  # an ending that answers or asks is a deliberate ending even if nothing changed
MIN_OWN = 2
_NAV = re.compile("|".join(re.escape(p).replace(r"\*", ".*") for p in NAVIGATION) + r"\Z")


def ending_changed(phone: MockPhone, infeasible: bool = False) -> bool:
    """Whether the episode on ``phone`` changed something relative to its start, read from the phone's event log
    (its start snapshot against the one after the last action, navigation left out), not from the verifier
    (neither its score nor its allowed changes);
    an answer, a question or a terminate other than ``success`` (any terminate, on an ``infeasible`` task: the
    false claim is the ending) is a deliberate ending and counts too."""
    log = events.log_of(phone)
    if log is None or not log.events:
        return False
    if any(e.action in DELIBERATE or e.action == "terminate" and (infeasible or e.text != "success")
           for e in log.events):
        return True
    last = log.events[-1].after
    return any(not _NAV.match(p) for p in statediff.diff(log.start, last))


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
# "Damaged" is decided here from raw copies of the phone's stores, never by the verifier's own
# ``statediff.violations`` or its allowed patterns: a pair damages the phone when its extra actions change a
# stored value the oracle did not change. Volatile parts (navigation-like state every task may touch:
# read marks, the current search, the clock, the agent's own log...) are listed below, on their own.

# any app's fields of these names: read marks, the current search, the shop's cart and the food basket
# (drafts: nothing is bought or changed for anyone until checkout, which shows up in ``orders``) and the
# assistant's chat turns
# (the agent's scratch pad: what it carries elsewhere shows up where it lands)
VOLATILE_FIELDS = {"read", "unread", "search", "hotel_search", "scroll", "page", "cart", "basket", "basket_restaurant",
                   "turns"}
VOLATILE_SYSTEM = ("clock_s", "opened", "permissions", "notifications", "answers", "questions", "terminated",
                   "drafts", "tool_calls", "clipboard")


MIN_DONORS = 5


@dataclass
class FuzzReport:
    pairs: int = 0  # pairs whose extras changed the phone's stores (the ones with an expectation or "inside")
    unchanged: int = 0  # draws whose extras changed nothing stored: reported, dropped from ``pairs``
    damaged: int = 0  # extras changed a stored value the oracle did not change: must score < 1
    inside: int = 0  # extras changed only values the oracle changed too: no expectation
    failures: list[Failure] = field(default_factory=list)

    @property
    def changed_share(self) -> float:
        """Of every draw, the share whose extras changed something."""
        return self.pairs / (self.pairs + self.unchanged) if self.pairs + self.unchanged else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "unchanged_dropped": self.unchanged, "changed_share": round(self.changed_share, 3),
                "damaged": self.damaged, "caught": self.damaged - sum(f.detail.startswith("missed") for f in
                                                                      self.failures),
                "inside": self.inside}


def stores(phone: MockPhone) -> dict[str, Any]:
    """The phone's stores as plain nested data (an independent copy, not ``statediff.snapshot``)."""
    out: dict[str, Any] = {}
    for name, app in sorted(phone.apps.items()):
        if app.state is not None:
            out[name] = _plain(app.state)
    s = phone.system
    out["system"] = {"settings": dict(s.settings)}
    out["files"] = {k: v for k, v in phone.files.items() if not k.endswith(".xml")}
    return out


def _plain(value: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.name not in VOLATILE_FIELDS}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def raw_changes(before: Any, after: Any, path: str = "") -> set[str]:
    """Paths (list items by position) whose values differ between two ``stores`` copies; a message received
    from someone else (appended, sender not "me") is the world, not the agent."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: set[str] = set()
        for k in before.keys() | after.keys():
            out |= raw_changes(before.get(k, _GONE), after.get(k, _GONE), f"{path}/{k}")
        return out
    if isinstance(before, list) and isinstance(after, list):
        if len(before) == len(after) and sorted(map(repr, before)) == sorted(map(repr, after)):
            return set()  # the same records in another order (a sort) is not a stored change
        out = set()
        for i in range(max(len(before), len(after))):
            b = before[i] if i < len(before) else _GONE
            a = after[i] if i < len(after) else _GONE
            if b is _GONE and isinstance(a, dict) and a.get("sender", "me") != "me" and "text" in a:
                continue
            out |= raw_changes(b, a, f"{path}/{i}")
        return out
    return set() if before == after else {path}


_GONE = object()


def _pool(classes: Iterable[type[Task]], seed: int) -> dict[str, list[Action]]:
    """Each task's oracle actions (a mixed task's shell and tool paths too), without answer/ask/terminate;
    tasks whose oracle changes nothing stored are left out (their slices could only change nothing)."""
    pool = {}
    for cls in classes:
        for via in _paths(cls):
            phone, task = start(cls, seed)
            task.via = via
            before = stores(phone)
            try:
                actions = run_oracle(phone, task, terminate=False)
            except MockPhoneError:
                continue
            if not raw_changes(before, stores(phone)):
                continue
            log = events.log_of(phone)
            kept = [(a, bool(e.changed) and not all(statediff.allowed(p, ()) for p in e.changed))
                    for a, e in zip(actions, log.events) if a.type not in NOT_STATE]
            donor = Donor(a for a, _ in kept)
            donor.changing = [i for i, (_, changed) in enumerate(kept) if changed]
            pool[cls.name() if via == "gui" else f"{cls.name()}/{via}"] = donor
    return pool


class Donor(list):
    """A donor task's oracle actions; ``changing``: the indices of those that changed its phone's state."""

    changing: list[int] = []


def fuzz(classes: list[type[Task]], seeds: Iterable[int] = (0,), rng_seed: int = 12, per_task: int = 3,
         pool: dict[int, dict[str, list[Action]]] | None = None, tries: int = 4) -> FuzzReport:
    """Oracle + actions drawn from other tasks' oracles; collateral damage must fail the task.

    For each task, seed and ``per_task`` pairs: one to three slices of another task's oracle (taps,
    typing, shell, tool calls; never answer/ask/terminate) run after the oracle; a draw whose extras
    change nothing stored is counted in ``unchanged``, dropped, and drawn again (up to ``tries`` times).
    A pair whose extras change a stored value the oracle did not change (decided by ``raw_changes`` on
    ``stores`` copies, not by the verifier) must score < 1; one that changes only what the oracle changed
    has no expectation, but a change the verifier's snapshot cannot see is a failure (a blind spot).
    """
    rng = random.Random(rng_seed)
    report = FuzzReport()
    for seed in seeds:
        actions = (pool or {}).get(seed) or _pool(classes, seed)
        if len(actions) < MIN_DONORS:  # a small selection: draw donors from the whole registry too
            from mockphone.tasks.registry import REGISTRY

            actions = {**_pool(REGISTRY.values(), seed), **actions}
        donors = sorted(actions)
        for cls in classes:
            for _ in range(per_task):
                for _attempt in range(tries):
                    donor = rng.choice([d for d in donors if d.split("/")[0] != cls.name()] or donors)
                    if _fuzz_one(cls, seed, actions[donor], donor, rng, report):
                        break
    return report


def _extras(donor_actions: list[Action], rng: random.Random) -> list[Action]:
    """One to three slices of a donor's oracle; most of the time the first slice ends on a step that changed
    the donor's own phone (with up to six steps of context before it, or its whole path from the home screen)."""
    extras: list[Action] = []
    changing = getattr(donor_actions, "changing", None) or [i for i, a in enumerate(donor_actions)
                                                             if a.type in ("shell", "tool")]
    for k in range(rng.randint(1, 3)):
        if not donor_actions:
            break
        if k == 0 and changing and rng.random() < 0.8:
            j = rng.choice(changing)
            if rng.random() < 0.5:  # the donor's path from the home screen up to that step
                extras += [Action("key", key="home"), *donor_actions[:j + 1]]
            else:
                extras += donor_actions[max(0, j - rng.randint(0, 6)):j + 1]
        else:
            i = rng.randrange(len(donor_actions))
            extras += donor_actions[i:i + rng.randint(1, 4)]
    return extras


def _fuzz_one(cls: type[Task], seed: int, donor_actions: list[Action], donor: str, rng: random.Random,
              report: FuzzReport) -> bool:
    """Play one draw; False when its extras changed nothing stored (dropped: the caller draws again)."""
    phone, task = start(cls, seed)
    initial = stores(phone)
    ending = _ending_of(run_oracle(phone, task, terminate=False))
    before, snap = stores(phone), statediff.snapshot(phone)
    extras = _extras(donor_actions, rng)
    for a in extras:
        phone.act(a)
    phone.act(ending)
    score = task.is_successful(phone)
    after = stores(phone)
    by_extras = raw_changes(before, after)
    label = f"with {len(extras)} action(s) from {donor}"
    if not by_extras:  # reported and dropped: no expectation (a task may also want, say, the shade closed)
        report.unchanged += 1
        return False
    report.pairs += 1
    damage = sorted(by_extras - raw_changes(initial, before))
    if damage:
        report.damaged += 1
        if score >= 1.0:
            report.failures.append(Failure(cls.name(), seed, "collateral", f"missed: {label} changed {damage[:3]}, "
                                                                            f"scores 1"))
    else:
        report.inside += 1
        if not statediff.diff(snap, statediff.snapshot(phone)):
            report.failures.append(Failure(cls.name(), seed, "collateral",
                                           f"{label} changed app state the snapshot does not see"))
    return True


def own_wrong_endings(classes: Iterable[type[Task]]) -> dict[str, int]:
    """How many wrong endings each template defines itself (``Task.wrong_endings``, beyond the generic ones)."""
    out = {}
    for cls in classes:
        try:
            out[cls.name()] = len(cls(seed=0).own_endings())
        except Exception:  # noqa: BLE001 - a template that cannot build its endings defines none that run
            out[cls.name()] = 0
    return out


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
