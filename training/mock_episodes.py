"""Element-format episodes on mock phones, played by any actor: evaluation, and GRPO's online episodes.

An *actor* answers one step: ``(messages, images, marks, size) -> reply text``. The prompt is
the exports' own (``curation.exports.build_prompt``: the screen's numbered UI elements, the
task, the last actions, one screenshot), so a checkpoint SFT'd on an element-list export
meets exactly the rows it was trained on. Each reply is parsed against the element list of
that very screen (``parse_with_marks``) and executed on the phone; a reply that does not
parse wastes the step (it is remembered as a wait). Success is the task's verifier
(``is_successful`` == 1), read from the phone's state, never the model's claim.

- ``run_episode``: one (template, seed) episode from its start state, or from ``prefix``
  (stored actions replayed first, shown as history), optionally with the first reply given
  (``first_reply``: a GRPO completion);
- ``oracle_demo``: the oracle's episode of a (template, seed), verified, as the lake stores it;
- ``online_rows`` and ``EpisodeReward``: GRPO on *online* mock-phone episodes for single-turn
  policies (the embedded default's element-list ``json`` actions, which TRL's tool-calling
  environments cannot drive). A row is a start state on a fresh seed (``ONLINE_SEED``
  onwards, apart from the demonstrations and the held-out evaluation seeds), possibly some
  oracle steps in; the completion is the next action; the reward plays it on a mock phone and
  lets the policy being trained finish the episode greedily, and the verifier scores the
  end state: the return of that action under the current policy (a Monte-Carlo estimate).

Every function that plays takes ``env``: ``mock`` (the stock phone; success is the verifier's) or
``real-like`` (:mod:`mockphone.reallike`'s skin, the phone a real deployment meets; success is the
outcome judge's verdict, :mod:`phones.judge`, over the final observation and the actions alone: the
phone's state is never read for it, and a verdict of ``unknown`` scores 0). The operator's set-up
(``initialize_task``) still runs on a real-like phone, as seeding an account on a real one does.
"""

from __future__ import annotations

import functools
import io
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from curation.elements import Mark, marks, parse_with_marks, render_marks
from curation.exports import build_prompt
from curation.formats import ActionParseError
from datalake.types import Action, Device, Episode, Step

Actor = Callable[[list, list, list, tuple], str]  # (messages, images, marks, size) -> reply text
ONLINE_SEED = 1000  # online GRPO episodes use seeds from here: never demonstrated, never evaluated
EXTRA_STEPS = 2  # an episode may run this many steps past the oracle's length
ENVS = ("mock", "real-like")


@dataclass(frozen=True)
class EpisodeFormat:
    """The element-list prompt a policy answers (an export's ``action_format``, ``coords``, ``history``)."""
    action_format: str = "json"
    coords: str = "rel1000"
    history: int = 4

    @property
    def params(self) -> dict:
        return {"coords": self.coords, "action_format": self.action_format, "history": self.history,
                "previous_screenshot": False, "thought": False, "elements": True}


@dataclass
class EpisodeResult:
    task: str
    seed: int
    success: bool
    steps: int
    parsed: int  # replies that parsed into an action
    replies: list[str] = field(default_factory=list)
    env: str = "mock"
    verdict: str | None = None  # real-like: the judge's outcome (success, failure or unknown)


def start(task_name: str, seed: int, perturb: str = "none", env: str = "mock"):
    """A phone in the task's start state: ``mock``, the stock screen demonstrations are recorded at, or
    ``real-like``, the realish skin (``mockphone.reallike``)."""
    from mockphone import reallike
    from mockphone.phone import MockPhone
    from mockphone.tasks.registry import get

    if env not in ENVS:
        raise ValueError(f"env must be one of {ENVS}, not {env!r}")
    phone = MockPhone(perturbations=perturb) if env == "mock" else reallike.phone(seed, perturbations=perturb)
    phone.reset(seed)
    task = get(task_name)(seed=seed)
    task.initialize_task(phone)
    return phone, task


def oracle_demo(task_name: str, seed: int, env: str = "mock") -> Episode:
    """The oracle's episode of one template and seed, with a closing terminate(success)."""
    from mockphone.tasks.oracle import UI

    phone, task = start(task_name, seed, env=env)
    steps = []
    for action in task.oracle(UI(phone)):
        steps.append(Step(phone.observe(), action))
        phone.act(action)
    if not steps or steps[-1].action.type != "terminate":
        steps.append(Step(phone.observe(), Action("terminate", status="success")))
    outcome = "success" if task.is_successful(phone) == 1.0 else "failure"
    w, h = phone.device().width, phone.device().height
    return Episode(instruction=task.goal, source="oracle", device=Device(w, h, kind="mock"), app=task.app_names[0],
                   task=task_name, outcome=outcome, verified_by="verifier", steps=tuple(steps),
                   meta={} if env == "mock" else {"skin": "realish"})


def outcome(env: str, phone, task, actions: Sequence[Action]) -> tuple[bool, str | None]:
    """(success, the judge's verdict or None) of an episode that ended on ``phone``: the verifier on a mock
    phone; on a real-like one the judge over the final observation and ``actions`` only."""
    if env == "mock":
        return task.is_successful(phone) == 1.0, None
    from phones.judge import JudgeTask, judge

    verdict = judge(JudgeTask.of(task), phone.observe(), actions)
    return verdict.outcome == "success", verdict.outcome


@functools.lru_cache(maxsize=None)
def oracle_actions(task_name: str, seed: int, env: str = "mock") -> tuple[Action, ...]:
    """``oracle_demo``'s actions without its screenshots (the oracle reads UI trees only), once per process."""
    from mockphone.tasks.oracle import UI

    phone, task = start(task_name, seed, env=env)
    try:
        actions = []
        for action in task.oracle(UI(phone)):
            actions.append(action)
            phone.act(action)
    finally:
        phone.close()
    if not actions or actions[-1].type != "terminate":
        actions.append(Action("terminate", status="success"))
    return tuple(actions)


def oracle_length(task_name: str, seed: int) -> int:
    """Steps of the oracle's episode (the base of an episode's step budget)."""
    return len(oracle_actions(task_name, seed))


def step_prompt(phone, goal: str, history: list, fmt: EpisodeFormat) -> tuple[list, Any, list[Mark], tuple]:
    """(messages, screenshot, marks, size) of the phone's current screen, as the exports build them."""
    from PIL import Image

    obs = phone.observe()
    size = (phone.device().width, phone.device().height)
    items = marks(obs.ui_tree, size)
    messages = build_prompt(goal, history[-fmt.history:] if fmt.history else [], fmt.params, 1,
                            elements=render_marks(items, fmt.coords, size))
    return messages, Image.open(io.BytesIO(obs.screenshot)), items, size


def run_episode(actor: Actor, fmt: EpisodeFormat, task_name: str, seed: int, max_steps: int, *,
                prefix: Sequence[Action] = (), first_reply: str | None = None,
                perturb: str = "none", env: str = "mock") -> EpisodeResult:
    """Play one episode; ``prefix`` actions are replayed first (and count towards ``max_steps``)."""
    phone, task = start(task_name, seed, perturb, env)
    size = (phone.device().width, phone.device().height)
    history: list = []
    played: list[Action] = []
    result = EpisodeResult(task_name, seed, False, 0, 0, env=env)
    try:
        for action in prefix:
            history.append((action, size))
            played.append(action)
            phone.act(action)
        for k in range(max_steps - len(prefix)):
            messages, screenshot, items, size = step_prompt(phone, task.goal, history, fmt)
            reply = first_reply if k == 0 and first_reply is not None else actor(messages, [screenshot], items, size)
            result.replies.append(reply)
            result.steps += 1
            try:
                action = parse_with_marks(reply, fmt.action_format, fmt.coords, size, items)
            except ActionParseError:
                history.append((Action("wait", seconds=1), size))
                continue
            result.parsed += 1
            history.append((action, size))
            played.append(action)
            phone.act(action)  # terminate too: the phone logs it, and infeasible tasks are verified from that log
            if action.type == "terminate":
                break
        result.success, result.verdict = outcome(env, phone, task, played)
    finally:
        phone.close()
    return result


def online_rows(tasks: Sequence[str], n: int, fmt: EpisodeFormat, max_pixels: int | None,
                seed: int = ONLINE_SEED, perturb: str = "none", env: str = "mock") -> list[dict]:
    """``n`` GRPO prompts of online episodes, cycling over ``tasks`` with seeds ``seed, seed+1, ...``.

    Round ``r`` of the cycle starts ``r`` oracle steps in (modulo the oracle's length), so later
    steps of an episode are trained too; the row's prompt is exactly an SFT row's (that screen,
    the oracle's actions so far as history). On perturbed phones (``perturb``) every row starts at
    the start state: the oracle's recorded actions assume an unperturbed phone. Columns: ``prompt``,
    ``images``, ``task``, ``seed``, ``prefix`` (the replayed actions, JSON) and ``budget`` (the
    episode's steps: the oracle's + ``EXTRA_STEPS``) and ``env`` (the phone the episode is played on)."""
    from training.data import cap_image

    rows = []
    for k in range(n):
        task_name, s = tasks[k % len(tasks)], seed + k
        oracle = oracle_actions(task_name, s, env)
        depth = (k // len(tasks)) % len(oracle) if perturb == "none" else 0
        phone, task = start(task_name, s, perturb, env)
        try:
            actions = list(oracle[:depth])
            size = (phone.device().width, phone.device().height)
            for action in actions:  # the oracle's actions replayed, not recomputed
                phone.act(action)
            messages, screenshot, _, _ = step_prompt(phone, task.goal, [(a, size) for a in actions], fmt)
        finally:
            phone.close()
        rows.append({"prompt": messages, "images": [cap_image(screenshot, max_pixels)], "task": task_name, "seed": s,
                     "prefix": json.dumps([a.to_dict() for a in actions]),
                     "budget": len(oracle) + EXTRA_STEPS, "env": env})
    return rows


class EpisodeReward:
    """TRL reward of online rows: the verifier's score after the completion and the policy's own continuation.

    ``policy`` (set once the trainer exists: the model being trained and its processor, a
    ``training.infer.CheckpointPolicy``) finishes each episode greedily; rows without a task
    (offline rows of a mixed run) get ``None``, so the step rewards alone score them."""

    __name__ = "episode_reward"

    def __init__(self, fmt: EpisodeFormat, max_new_tokens: int = 48, perturb: str = "none") -> None:
        self.fmt, self.max_new_tokens, self.perturb = fmt, max_new_tokens, perturb
        self.policy = None
        self.episodes: list[EpisodeResult] = []  # every episode this reward played (for tests and logs)

    def __call__(self, prompts, completions, task=None, seed=None, prefix=None, budget=None, env=None,
                 **kw) -> list[float | None]:
        from training.rewards import completion_text

        if self.policy is None:
            raise RuntimeError("EpisodeReward.policy is not set: assign the trainer's model before training")
        out: list[float | None] = []
        for i, completion in enumerate(completions):
            if not task or not task[i]:
                out.append(None)
                continue
            actions = [Action.from_dict(a) for a in json.loads(prefix[i] or "[]")]
            where = env[i] if env else "mock"  # rows without an env column are mock episodes; start() refuses others
            result = self._play(task[i], int(seed[i]), int(budget[i]), actions, completion_text(completion), where)
            self.episodes.append(result)
            out.append(float(result.success))
        return out

    def _play(self, task_name: str, seed: int, budget: int, prefix: list[Action], reply: str,
              env: str = "mock") -> EpisodeResult:
        model = self.policy.model
        was_training = model.training
        model.eval()
        try:
            return run_episode(self._act, self.fmt, task_name, seed, budget, prefix=prefix, first_reply=reply,
                               perturb=self.perturb, env=env)
        finally:
            model.train(was_training)

    def _act(self, messages, images, items, size) -> str:
        return self.policy.generate(messages, images, max_new_tokens=self.max_new_tokens)
