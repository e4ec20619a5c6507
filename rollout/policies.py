"""Policies behind one interface: ``act(instruction, observation, history) -> (Action, raw_text)``.

- ``oracle``: the task's scripted solution (mock phones or virtual adb devices);
- ``random`` / ``random:SEED``: a baseline that taps clickable elements, swipes, goes back, types;
- ``http(s)://HOST/v1``: an OpenAI-compatible chat-completions endpoint with images (vLLM,
  SGLang, ...), prompted exactly like the SFT export (``curation.exports.build_prompt``);
- ``MODEL`` (a name in the lake's ``models`` table, or a checkpoint folder): a local
  transformers checkpoint (needs the ``train`` extras). The runner loads it once and serves
  all phones from a batching loopback endpoint (``rollout.model_server``); ``make_policy``
  called directly loads it in-process through ``training.infer``.

Model output is parsed in the policy's style (json | qwen3vl | uitars). Output that does not
parse becomes a ``wait`` step whose ``raw_output`` keeps the text and ``thought`` starts with
``invalid:``: the run goes on, and curation's ``drop_unparseable`` removes such steps.
"""

from __future__ import annotations

import base64
import json
import random
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from curation.exports import build_prompt
from curation.formats import ActionParseError
from datalake.types import Action, Observation, Step
from datalake.uitree import parse_ui_tree
from rollout.errors import PolicyError
from rollout.parsing import parse_output

INVALID = "invalid: "


@dataclass(frozen=True)
class PolicyOptions:
    style: str = "qwen3vl"  # json | qwen3vl | uitars
    coords: str = "rel1000"  # abs | resized | rel1000 | rel1
    history: int = 4
    model: str = "default"  # the model name sent to an endpoint
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 2
    temperature: float = 0.0
    max_tokens: int = 256


class RolloutPolicy:
    """Wraps any policy so the episodes it produces are recorded as ``source=rollout``."""

    source = "rollout"

    def __init__(self, inner: Any, name: str | None = None):
        self.inner = inner
        self.name = name or inner.name

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]:
        return self.inner.act(instruction, observation, history)


class RandomPolicy:
    """Uniform over a few gestures: tap a clickable element (or any point), swipe, back, type, finish."""

    source = "rollout"

    def __init__(self, seed: int = 0):
        self.name = f"random:{seed}"
        self.rng = random.Random(seed)

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]:
        width, height = observation.size
        roll = self.rng.random()
        if roll < 0.05 and history:
            return Action("terminate", status="success"), None
        if roll < 0.15:
            return Action("key", key="back"), None
        if roll < 0.25:
            x = self.rng.randrange(width)
            return Action("swipe", x=x, y=int(height * 0.7), x2=x, y2=int(height * 0.3)), None
        if roll < 0.32:
            return Action("input_text", text=self.rng.choice(["hello", "test", "42"])), None
        clickable = [e for e in parse_ui_tree(observation.ui_tree) if e.clickable] if observation.ui_tree else []
        if clickable:
            el = self.rng.choice(clickable)
            x, y = el.center
            if 0 <= x < width and 0 <= y < height:
                return Action("tap", x=x, y=y, element=el.as_target()), None
        return Action("tap", x=self.rng.randrange(width), y=self.rng.randrange(height)), None


class ModelPolicy:
    """Prompt a model with the screenshot and history; parse its reply into actions."""

    source = "rollout"

    def __init__(self, name: str, generate: Callable[[list[dict], list[bytes]], str], options: PolicyOptions):
        self.name = name
        self.generate = generate
        self.options = options
        self.params = {"action_format": "json" if options.style == "json" else "qwen3vl",
                       "coords": options.coords, "history": options.history}
        self.pending: deque[Action] = deque()
        self.invalid = 0

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]:
        if self.pending:
            return self.pending.popleft(), None
        size = observation.size
        recent = [(s.action, s.observation.size) for s in history[-self.options.history:]] if self.options.history else []
        messages = build_prompt(instruction, recent, self.params, n_images=1)
        text = self.generate(messages, [observation.screenshot])
        try:
            actions = parse_output(text, self.options.style, self.options.coords, size)
        except ActionParseError as exc:
            self.invalid += 1
            return Action("wait"), f"{INVALID}{exc}\n{text}"
        width, height = size
        for a in actions:
            if any(not (0 <= x < width and 0 <= y < height) for x, y in a.points()):
                self.invalid += 1
                return Action("wait"), f"{INVALID}{a.type} outside the {width}x{height} screen\n{text}"
        self.pending.extend(actions[1:])
        return actions[0], text


def openai_generate(url: str, options: PolicyOptions) -> Callable[[list[dict], list[bytes]], str]:
    """A chat-completions client (stdlib only) sending the screenshot as a PNG data URL."""
    endpoint = url.rstrip("/")
    if not endpoint.endswith("/chat/completions"):
        endpoint += "/chat/completions"

    def generate(messages: list[dict], images: list[bytes]) -> str:
        body = {"model": options.model, "messages": _openai_messages(messages, images),
                "temperature": options.temperature, "max_tokens": options.max_tokens}
        headers = {"Content-Type": "application/json"}
        if options.api_key:
            headers["Authorization"] = f"Bearer {options.api_key}"
        request = urllib.request.Request(endpoint, data=json.dumps(body).encode(), headers=headers, method="POST")
        last: Exception | None = None
        for attempt in range(options.retries + 1):
            try:
                with urllib.request.urlopen(request, timeout=options.timeout) as response:
                    reply = json.loads(response.read())
                return reply["choices"][0]["message"]["content"] or ""
            except urllib.error.HTTPError as exc:
                last = exc
                if exc.code < 500:
                    raise PolicyError(f"{endpoint} answered {exc.code}: {exc.read()[:300]!r}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = exc
            except (KeyError, IndexError, ValueError) as exc:
                raise PolicyError(f"{endpoint} did not answer in the chat-completions format: {exc}") from None
            time.sleep(0.2 * (attempt + 1))
        raise PolicyError(f"{endpoint} unreachable after {options.retries + 1} tries: {last}")

    return generate


def _openai_messages(messages: list[dict], images: list[bytes]) -> list[dict]:
    out, queue = [], list(images)
    for m in messages:
        content = []
        for part in m["content"]:
            if part["type"] == "image":
                data = base64.b64encode(queue.pop(0)).decode()
                content.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}})
            else:
                content.append({"type": "text", "text": part["text"]})
        out.append({"role": m["role"], "content": content})
    return out


def make_policy(spec: str, phone: Any, task: Any, options: PolicyOptions = PolicyOptions(),
                lake_uri: str | None = None, name: str | None = None) -> Any:
    """A fresh policy for one episode from its spec (see the module docstring)."""
    if spec == "oracle":
        from collectors.loop import OraclePolicy

        if task is None:
            raise PolicyError("the oracle policy needs a task, not a bare instruction")
        return RolloutPolicy(OraclePolicy(phone, task), name="oracle")
    if spec == "random" or spec.startswith("random:"):
        seed = int(spec.partition(":")[2] or 0) + (getattr(task, "seed", 0) or 0)
        policy = RandomPolicy(seed)
        policy.name = "random"
        return policy
    if spec.startswith(("http://", "https://")):
        return ModelPolicy(name or f"endpoint:{options.model}", openai_generate(spec, options), options)
    return ModelPolicy(spec, _local_generate(spec, options, lake_uri), options)


_LOCAL: dict[str, Callable] = {}


def _local_generate(spec: str, options: PolicyOptions, lake_uri: str | None) -> Callable:
    """A local checkpoint's generate function, loaded once per process."""
    if spec not in _LOCAL:
        try:
            from training.infer import load_checkpoint
        except ImportError as exc:
            raise PolicyError(f"policy {spec!r} needs the training extras (scripts/setup.sh dev,train): {exc}") from None
        from io import BytesIO

        from PIL import Image

        from datalake.lake import Lake

        checkpoint = load_checkpoint(Lake.open(lake_uri or "./lake"), spec)

        def generate(messages: list[dict], images: list[bytes]) -> str:
            pictures = [Image.open(BytesIO(png)) for png in images]
            return checkpoint.generate(messages, pictures, max_new_tokens=options.max_tokens)

        _LOCAL[spec] = generate
    return _LOCAL[spec]
