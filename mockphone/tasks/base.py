"""The task shape (after android_world's TaskEval), with parameters that are actually validated.

A task class has a ``template`` instruction, the ``app_names`` it touches, a
``category`` (``CATEGORIES``), a ``complexity`` (rough number of
screens a human passes through) and a ``schema`` of parameters. An instance is
built from explicit params or from a seed; ``initialize_task`` puts the phone in the
start state and snapshots the whole phone; ``is_successful`` reads state (never the
agent's trace): 0 when anything outside the task's ``allowed`` changes (and the central
``statediff.HARMLESS`` list) changed, 0 for an untouched phone, else the task's own
``check`` (0..1). ``oracle`` yields Actions computed from the live UI tree.
"""

from __future__ import annotations

import random
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator

from datalake.types import Action
from mockphone import i18n, world
from mockphone.errors import InvalidTaskParams, TaskNotInitialized
from mockphone.tasks import events, statediff

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.world import World
    from mockphone.tasks.oracle import UI

CATEGORIES = ("single-app", "cross-app", "mini-app", "safety", "privacy", "infeasible", "mixed")


@dataclass(frozen=True)
class Param:
    """One parameter of a task: its type and, optionally, allowed choices or an inclusive range."""

    type: type
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    doc: str = ""

    def check(self, task: str, name: str, value: Any) -> None:
        if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
            raise InvalidTaskParams(f"{task}: parameter {name!r} must be {self.type.__name__}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise InvalidTaskParams(f"{task}: parameter {name!r} must be one of {list(self.choices)}, got {value!r}")
        if self.min is not None and value < self.min or self.max is not None and value > self.max:
            raise InvalidTaskParams(f"{task}: parameter {name!r}={value!r} is outside [{self.min}, {self.max}]")
        if self.type is str and not value.strip():
            raise InvalidTaskParams(f"{task}: parameter {name!r} must not be empty")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type.__name__}
        if self.choices is not None:
            out["enum"] = list(self.choices)
        if self.min is not None:
            out["minimum"] = self.min
        if self.max is not None:
            out["maximum"] = self.max
        if self.doc:
            out["description"] = self.doc
        return out


class Task:
    """Base class; a concrete task sets the class attributes and the four methods below."""

    template: ClassVar[str] = ""
    app_names: ClassVar[tuple[str, ...]] = ()
    category: ClassVar[str] = "single-app"
    complexity: ClassVar[float] = 1.0
    schema: ClassVar[dict[str, Param]] = {}
    # glob patterns over ``statediff`` paths this task may change, formatted with the params
    # ("contacts.contacts[{name}].phone"); anything else changed fails the task
    allowed: ClassVar[tuple[str, ...]] = ()
    # a task whose success needs no state change (answers, refusals, infeasible): an untouched
    # phone is not scored 0 by rule, its own check decides
    changes_state: ClassVar[bool] = True
    # a template whose instances do not change with the world (one instruction, one oracle path):
    # allowed only with a reason, for at most 5% of templates (``tasks stats`` reports the share)
    fixed: ClassVar[bool] = False
    fixed_reason: ClassVar[str] = ""
    # this template's own near misses: (name, params -> changed params); the wrong ending plays the oracle
    # with the params changed (ten times the amount, the other half of the day, one digit off)
    near_misses: ClassVar[tuple[tuple[str, Callable[[dict], dict]], ...]] = ()
    # this template's own wrong answers: (name, (task, phone) -> answer text) (the other account's balance,
    # the alarm that is off, another contact's number)
    wrong_answers: ClassVar[tuple[tuple[str, Callable[[Any, Any], str]], ...]] = ()
    # this template's own wrong entity: (param, pick) with ``pick(task, phone)`` another item of that kind on the
    # phone (``endings.record``, ``endings.choice``...): the oracle for it instead, and the task done and then for
    # it too; an answer task (``changes_state`` False) answers it instead ("answered-for-another-PARAM")
    swaps: ClassVar[tuple[tuple, ...]] = ()

    def __init__(self, params: dict[str, Any] | None = None, seed: int = 0, locale: str = i18n.DEFAULT) -> None:
        self.locale = i18n.check(locale)  # the instruction's language; initialize_task takes the phone's
        self.seed = seed
        # the world this instance's parameters come from: the seed's, in the instruction's locale
        self.world = world.generate(seed, self.locale)
        if params is None:
            params = self.generate_random_params(random.Random(f"{self.name()}:{seed}"), self.world)
        self.params = dict(params)
        self.validate(self.params)
        # phone -> its state snapshot right after initialize_task; weak keys, so a freed phone's
        # snapshot can never be read for a new phone that happens to reuse its id()
        self._starts: weakref.WeakKeyDictionary[MockPhone, dict[str, Any]] = weakref.WeakKeyDictionary()

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def validate(cls, params: dict[str, Any]) -> None:
        missing = sorted(set(cls.schema) - set(params))
        extra = sorted(set(params) - set(cls.schema))
        if missing or extra:
            raise InvalidTaskParams(f"{cls.name()}: missing parameter(s) {missing}, unknown parameter(s) {extra}")
        for key, spec in cls.schema.items():
            spec.check(cls.name(), key, params[key])

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        return {"type": "object", "properties": {k: p.to_json() for k, p in cls.schema.items()},
                "required": sorted(cls.schema), "additionalProperties": False}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world: World | None = None) -> dict[str, Any]:
        """Draw parameters from ``world`` (the seed's :mod:`mockphone.world`) and ``rng``.

        The default picks uniformly from each parameter's choices; a template whose instances
        should change with the world overrides this and draws from ``world`` (its people, mail,
        products...); ``setup`` must then make sure whatever the params name exists on the phone.
        """
        out = {}
        for key, spec in cls.schema.items():
            if spec.choices is None:
                raise NotImplementedError(f"{cls.name()} must draw parameter {key!r} itself")
            out[key] = rng.choice(spec.choices)
        return out

    @property
    def goal(self) -> str:
        """The instruction in this task's locale (the phone's, once ``initialize_task`` ran)."""
        return self.instruction(self.locale)

    def instruction(self, locale: str = i18n.DEFAULT) -> str:
        """The instruction in ``locale`` (``mockphone.tasks.instructions`` holds the translations)."""
        from mockphone.tasks.instructions import render

        return render(self, locale)

    def initialize_task(self, phone: MockPhone) -> None:
        """Put ``phone`` (fresh from ``reset(seed)``) in the start state: home screen, then ``setup``."""
        phone.nav.home()
        self.locale = getattr(phone, "locale", i18n.DEFAULT)
        self._starts.pop(phone, None)
        self.setup(phone)
        phone.invalidate()
        self._starts[phone] = statediff.snapshot(phone)
        events.start(phone)  # every later action and the state it leaves, in order (safety, infeasible)

    def start_state(self, phone: MockPhone) -> dict[str, Any]:
        """The state snapshot taken right after ``initialize_task`` on ``phone``."""
        try:
            return self._starts[phone]
        except KeyError:
            raise TaskNotInitialized(f"{self.name()} was not initialized on this phone; call initialize_task first") \
                from None

    def allowed_changes(self, start: dict[str, Any] | None = None) -> tuple[str, ...]:
        """This instance's allowed-change patterns, with the params filled in (plus ``derived_allowed``)."""
        own = tuple(p.format(**self.params) for p in self.allowed)
        return own + (tuple(self.derived_allowed(start)) if start is not None else ())

    def derived_allowed(self, start: dict[str, Any]) -> list[str]:
        """Allowed patterns that depend on the start state (an email's id, a product's id); default none."""
        return []

    def setup(self, phone: MockPhone) -> None:
        """Task-specific start state (default: none beyond the phone's seeded state)."""

    def is_successful(self, phone: MockPhone) -> float:
        before, after = self.start_state(phone), statediff.snapshot(phone)
        if statediff.violations(before, after, self.allowed_changes(before)):
            return 0.0  # collateral damage: something outside the declared set changed
        if self.changes_state and not statediff.meaningful(before, after):
            return 0.0  # an untouched phone scores exactly 0
        return float(self.check(phone))

    def fingerprint(self, phone: MockPhone | None = None) -> str:
        """This instance's identity by content (``mockphone.tasks.identity.fingerprint``): template, params,
        instruction and, once initialised on ``phone``, the start state of the apps it touches."""
        from mockphone.tasks.identity import fingerprint

        return fingerprint(self, self.start_state(phone) if phone is not None else None)

    def violations(self, phone: MockPhone) -> list[str]:
        """Changed state paths outside this task's allowed set (empty when there is no collateral damage)."""
        start = self.start_state(phone)
        return statediff.violations(start, statediff.snapshot(phone), self.allowed_changes(start))

    def own_endings(self) -> dict[str, Any]:
        """Every wrong ending of this template's own: the declared ones (``near_misses``, ``wrong_answers``,
        ``swaps``) and the scripted ones of an overriding ``wrong_endings``."""
        return {**Task.wrong_endings(self), **self.wrong_endings()}

    def wrong_endings(self) -> dict[str, Any]:
        """Wrong-but-plausible endings beyond the generic ones ``invariants`` builds.

        name -> ``fn(phone, task)`` that plays the ending on a phone this task initialised
        (the invariant tests require each to score < 1). The default builds them from ``near_misses``,
        ``wrong_answers`` and ``swaps``.
        """
        out: dict[str, Any] = {name: near_miss(self, change(dict(self.params))) for name, change in self.near_misses}
        out.update({name: answer_ending(text) for name, text in self.wrong_answers})
        from mockphone.tasks import endings

        for key, pick, *modes in self.swaps:  # modes: "instead", "also" (default both)
            if self.changes_state:
                if not modes or "instead" in modes:
                    out[f"another-{key}"] = endings.instead(key, pick)
                if not modes or "also" in modes:
                    out[f"also-another-{key}"] = endings.also(key, pick)
            else:  # its oracle answers: played for the other item, it answers for that one
                out[f"answered-for-another-{key}"] = endings.instead(key, pick)
        return out

    def check(self, phone: MockPhone) -> float:
        raise NotImplementedError

    def oracle(self, ui: UI) -> Iterator[Action]:
        raise NotImplementedError

    def tear_down(self, phone: MockPhone) -> None:
        self._starts.pop(phone, None)


def near_miss(task: Task, changes: dict[str, Any]):
    """A wrong ending: ``task``'s oracle with ``changes`` to its params (set up on a probe phone, played on the
    episode's), then ``terminate(success)``."""
    def ending(phone: MockPhone, _task: Task) -> None:
        import copy

        from mockphone.tasks.play import play_other as _play

        other = copy.copy(task)
        other.params = {**task.params, **changes}
        other._starts = weakref.WeakKeyDictionary()
        try:
            _play(phone, other)
        except Exception:  # noqa: BLE001 - the near miss cannot be played to the end: what was done stays
            pass
        phone.act(Action("terminate", status="success"))
    return ending


def answer_ending(text: Callable[[Any, Any], str]):
    """A wrong ending: answer ``text(task, phone)`` (read from the phone the task initialised), then terminate."""
    def ending(phone: MockPhone, task: Task) -> None:
        phone.act(Action("answer", text=text(task, phone)))
        phone.act(Action("terminate", status="success"))
    return ending


def oracle_answer(task: Task, phone: MockPhone) -> str:
    """The right answer as the oracle reads it off the screen (a probe phone of the same seed and locale)."""
    from mockphone.tasks.play import oracle_answer as answer

    return answer(task, phone)


def other_candidate(task: Task, phone: MockPhone) -> str:
    """One of ``task.answer_candidates(phone)`` that is not the right answer nor part of it (a near miss)."""
    right = oracle_answer(task, phone)
    return next(c for c in task.answer_candidates(phone) if c != right and c not in right and right not in c)


def later(time: str, hours: int = 1) -> str:
    """``HH:MM`` moved by ``hours`` (mod 24): a near-miss time."""
    h, m = map(int, time.split(":"))
    return f"{(h + hours) % 24:02d}:{m:02d}"


def digit_off(number: str) -> str:
    """``number`` with its last digit changed: a near-miss number."""
    return number[:-1] + str((int(number[-1]) + 1) % 10) if number and number[-1].isdigit() else number + "1"


def final_answer(phone: MockPhone) -> str | None:
    """The episode's one answer, or None when there was none or more than one (guessing fails)."""
    answers = phone.system_state().answers
    return answers[0] if len(answers) == 1 else None


def fraction(*checks: bool) -> float:
    """Score a multi-part task: the share of parts that hold."""
    return sum(bool(c) for c in checks) / len(checks) if checks else 0.0
