"""The one episode loop: every collector (oracle, agent, human-driven) and every rollout produces episodes here.

    episode = run_episode(phone, policy, task_or_instruction, seed=0, max_steps=30)

Each step observes the phone, asks the policy for ``(action, raw_text)`` given the
instruction, the observation and the steps so far, records the step, and performs the
action. A ``terminate`` action is performed (mock phones record it for verifiers) and
ends the episode. With a task on a verifiable phone (a mock phone), the phone is reset
and the task initialised first, and the verifier sets the outcome; an AdbPhone on a
phoneloop virtual device does the same through the device's ``phoneloop task`` command;
otherwise the outcome stays ``unknown``. Mock phones also record ``meta["perturbation"]``
(profile and seed of their interruptions). A phone that goes offline (or whose adb server dies) mid-episode ends the episode as a
failure whose ``meta["failure_reason"]`` says why (``device offline: ...``, ``host unreachable: ...``); one that is gone before the first
step raises ``EpisodeAborted`` (there is nothing to record). A ``tool`` call the phone rejects
(unknown tool, bad arguments) is an error step: recorded, shown to the policy on the next
screen (a mock phone toasts the error), listed in ``meta["tool_errors"]``, and the episode goes on.

A policy is any object with ``name``, ``source`` (the lake's episode source: agent,
oracle, rollout, human) and ``act(instruction, observation, history) -> (Action, raw_text)``.
``collectors`` (collection into the lake) and ``rollout`` (policies on phones) both run it.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Protocol

from datalake.types import Action, Episode, Observation, Step
from phones.errors import AdbServerUnreachable, DeviceOffline, EpisodeAborted
from phones.protocol import Phone, is_verifiable


class Policy(Protocol):
    name: str
    source: str

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]: ...


PolicyFactory = Callable[[Phone, Any], Policy]  # (phone, task or None) -> a fresh policy for one episode


class OraclePolicy:
    """The task's oracle demonstration, one action per call, computed from the phone's live UI tree.

    Works on any phone with ``ui_tree()`` (a mock phone, or an AdbPhone on a virtual device);
    interruptions are dismissed after every oracle action, as ``mockphone.tasks.oracle.solve`` does.
    """

    source = "oracle"

    def __init__(self, phone: Phone, task: Any) -> None:
        from mockphone.tasks.oracle import UI

        self.name = f"oracle:{task.name()}"
        self._ui = UI(phone)  # type: ignore[arg-type]  # UI reads only ui_tree()
        self._plan = self._actions(task)

    def _actions(self, task: Any) -> Iterator[Action]:
        for action in task.oracle(self._ui):
            yield action
            yield from self._ui.interruptions()
        yield Action("terminate", status="success")

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]:
        action = next(self._plan, None)
        return (action or Action("terminate", status="success")), None

    @classmethod
    def factory(cls, phone: Phone, task: Any) -> OraclePolicy:
        if task is None:
            raise ValueError("the oracle policy needs a task, not a bare instruction")
        return cls(phone, task)


def run_episode(phone: Phone, policy: Policy, task_or_instruction: Any, *, seed: int = 0, max_steps: int = 30,
                reset: bool = True, round: int | None = None, meta: dict[str, Any] | None = None) -> Episode:
    """Run one episode of ``policy`` on ``phone``; see the module docstring."""
    task = None if isinstance(task_or_instruction, str) else task_or_instruction
    instruction = task_or_instruction if task is None else task.goal
    verifiable = task is not None and is_verifiable(phone)
    remote = task is not None and not verifiable and callable(getattr(phone, "runs_tasks", None))
    steps: list[Step] = []
    extra: dict[str, Any] = {"seed": seed, **(meta or {})}
    failure: str | None = None
    device = None
    try:
        if verifiable:
            phone.reset(seed)
            task.initialize_task(phone)
            extra["instance"] = task.fingerprint(phone)  # the instance's identity by content, not by seed
        elif remote and phone.runs_tasks():
            phone.start_task(task, seed)
        else:
            remote = False
            if reset:
                phone.reset(seed)
        device = phone.device()
        if callable(getattr(phone, "perturbation_meta", None)):  # mock phones: profile and seed of interruptions
            extra["perturbation"] = phone.perturbation_meta()
        if isinstance(getattr(phone, "locale", None), str):  # mock phones: the language of screens and instruction
            extra["locale"] = phone.locale
            if task is not None:
                instruction = task.instruction(phone.locale)
        for _ in range(max_steps):
            observation = phone.observe()
            action, raw = policy.act(instruction, observation, steps)
            steps.append(Step(observation=observation, action=action, raw_output=raw))
            result = phone.act(action)
            if action.type == "tool" and getattr(result, "ok", True) is False:  # an error step, not a crash
                extra.setdefault("tool_errors", []).append({"step": len(steps) - 1, "tool": action.name,
                                                            "error": getattr(result, "output", "")})
            if action.type == "terminate":
                break
        else:
            extra["stopped"] = "max_steps"
    except DeviceOffline as exc:
        failure = f"device offline: {exc}"
    except AdbServerUnreachable as exc:  # the phone's host (its adb server) died mid-episode
        failure = f"host unreachable: {exc}"
    if not steps or device is None:
        raise EpisodeAborted(f"no step recorded for {instruction!r}: {failure or 'max_steps is 0'}")
    outcome, verified_by = "unknown", "none"
    if failure is not None:
        outcome, extra["failure_reason"] = "failure", failure
    elif verifiable or remote:
        try:
            score = task.is_successful(phone) if verifiable else phone.check_task()
            outcome, verified_by, extra["score"] = ("success" if score >= 1.0 else "failure"), "verifier", score
        except DeviceOffline as exc:
            extra["failure_reason"] = f"device offline before verification: {exc}"
    if task is not None:
        extra.setdefault("template", task.name())  # the viewer's template facet
    score = extra.get("score")
    return Episode(
        instruction=instruction, source=policy.source, device=device, steps=tuple(steps),
        app=task.app_names[0] if task is not None and task.app_names else None,
        category=getattr(task, "category", None), task=task.name() if task is not None else None,
        outcome=outcome, verified_by=verified_by, policy=policy.name, round=round, meta=extra,
        score=min(1.0, max(0.0, float(score))) if isinstance(score, (int, float)) else None,
    )


def instantiate(item: Any, seed: int) -> Any:
    """A task instance from a task class, a registered name, or an instance; None for a plain instruction."""
    from mockphone.tasks import registry

    if isinstance(item, str):
        if item in registry.REGISTRY:
            return registry.get(item)(seed=seed)
        return None
    if isinstance(item, type):
        return item(seed=seed)
    return item
