"""Policies behind one interface: ``act(instruction, observation, history) -> (Action, raw_text)``.

- ``oracle``: the task's scripted solution (mock phones or virtual adb devices);
- ``random`` / ``random:SEED``: a baseline that taps clickable elements, swipes, goes back, types;
- ``http(s)://HOST/v1``: an OpenAI-compatible chat-completions endpoint with images (vLLM,
  SGLang, ...), prompted exactly like the SFT export (``curation.exports.build_prompt``);
- ``MODEL`` (a name in the lake's ``models`` table, or a checkpoint folder): a local
  transformers checkpoint (needs the ``train`` extras). The runner loads it once and serves
  all phones from a batching loopback endpoint (``rollout.model_server``); ``make_policy``
  called directly loads it in-process through ``training.infer``.

A checkpoint trained on the element-list format (``curation.elements``; recorded with the
model, ``training.prompt_format``) is prompted the same way: the screen's numbered elements
from the phone's UI tree, and a reply naming an element number maps back to its centre in
device pixels. ``make_policy`` reads the recorded format (style, coords, history, elements)
and it overrides the options given, so the policy speaks the checkpoint's format.

Model output is parsed in the policy's style (json | qwen3vl | uitars). Output that does not
parse becomes a ``wait`` step whose ``raw_output`` keeps the text and ``thought`` starts with
``invalid:``: the run goes on, and curation's ``drop_unparseable`` removes such steps.

Scores: a model policy whose endpoint returns token log-probabilities (OpenAI's
``choices[0].logprobs.content``; the loopback server of a local checkpoint sends them too)
records each step's ``score`` (exp of the mean token log-prob) and ``logprob`` in
``ModelPolicy.step_meta``; the rollout worker stores them in the step's meta, where the
annotate preset ``low-confidence`` finds the least confident steps. The oracle and random
policies give none. (A checkpoint loaded in-process by ``make_policy`` gives none either.)
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import random
import socket
import threading
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from curation.elements import parse_with_marks
from curation.formats import ActionParseError
from datalake.types import Action, Observation, Step
from datalake.uitree import parse_ui_tree
from rollout.errors import PolicyError
from rollout.parsing import parse_output
from rollout.prompts import prompt

INVALID = "invalid: "


@dataclass(frozen=True)
class PolicyOptions:
    style: str = "qwen3vl"  # json | qwen3vl | uitars: the prompt sent and the action syntax parsed
    coords: str = "rel1000"  # abs | resized | rel1000 | rel1
    history: int = 4
    model: str = "default"  # the model name sent to an endpoint
    api_key: str | None = None  # default: $OPENAI_API_KEY
    timeout: float = 30.0  # seconds per try; a request (tries, pauses) never costs more than timeout x max(1, retries)
    retries: int = 2  # tries after the first (5xx, 408, 429, timeouts, resets, garbage), backoff with jitter
    temperature: float = 0.0
    max_tokens: int = 256
    headers: dict[str, str] = field(default_factory=dict)  # extra HTTP headers sent to an endpoint
    backoff: float = 0.5  # seconds before the first retry; doubles each retry (x0.5-1.5 jitter), at most 8 s
    logprobs: bool = True  # ask an endpoint for token log-probs: each step's meta gets the policy's score
    elements: bool = False  # list the screen's numbered UI elements; replies may name one (json | qwen3vl)

    def __post_init__(self) -> None:
        from rollout.parsing import STYLES

        if self.style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}, not {self.style!r}")
        if self.timeout <= 0 or self.retries < 0 or self.max_tokens < 1:
            raise ValueError(f"timeout must be > 0, retries >= 0 and max_tokens >= 1 (got {self.timeout}, "
                             f"{self.retries}, {self.max_tokens})")
        if not isinstance(self.headers, dict) or not all(isinstance(v, str) for v in self.headers.values()):
            raise ValueError(f"headers must map names to strings, not {self.headers!r}")
        if self.elements and self.style == "uitars":
            raise ValueError("the element-list format speaks json or qwen3vl, not uitars")


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
        self.pending: deque[Action] = deque()
        self.invalid = 0
        self.step_meta: dict[str, float] = {}  # the last reply's score (``_score_meta``), for the step's meta

    @property
    def retries(self) -> int:
        """Requests this policy retried so far (recorded in the episode's meta)."""
        return getattr(self.generate, "retries", 0)

    def act(self, instruction: str, observation: Observation, history: list[Step]) -> tuple[Action, str | None]:
        if self.pending:  # the rest of one reply: the same generation, the same score
            return self.pending.popleft(), None
        size = observation.size
        recent = [(s.action, s.observation.size) for s in history[-self.options.history:]] if self.options.history else []
        items = _marks(observation) if self.options.elements else None
        messages = prompt(instruction, recent, self.options.style, self.options.coords, elements=items, size=size)
        text = self.generate(messages, [observation.screenshot])
        self.step_meta = _score_meta(getattr(self.generate, "last_logprob", None))
        try:
            if items is not None:
                actions = [parse_with_marks(text, self.options.style, self.options.coords, size, items)]
            else:
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


def _score_meta(logprob: float | None) -> dict[str, float]:
    """A step's policy score: ``score`` = exp(mean token log-prob), the geometric mean of the
    answer's token probabilities, in (0, 1]; ``logprob`` = that mean. Empty without log-probs."""
    if logprob is None:
        return {}
    return {"score": math.exp(logprob), "logprob": logprob}


def _marks(observation: Observation) -> list:
    """The screen's numbered elements (none when the tree is missing or does not parse)."""
    from curation.elements import marks
    from datalake.errors import UITreeError

    try:
        return marks(observation.ui_tree, observation.size)
    except UITreeError:
        return []


class EndpointClient:
    """A chat-completions client (stdlib ``http.client``) sending the screenshot as a PNG data URL.

    Time: one call (all its tries and backoff pauses) ends within ``timeout x max(1, retries)``
    seconds, the deadline. Each try gets ``min(timeout, time left)``: connecting and every
    read are cut at that (a server that accepts and never answers), and a watchdog shuts the
    socket when the try's time is up, so a server that trickles bytes cannot stretch it;
    backoff pauses are cut to the time left. Transient failures (5xx, 408, 429, timeouts,
    refused or reset connections, a body that is not a chat completion) are retried up to
    ``options.retries`` times with exponential backoff and jitter, while time is left; then
    ``PolicyError``. Other 4xx answers (a wrong key, a wrong model) fail at once.

    With ``options.logprobs`` the request asks for token log-probabilities (OpenAI's
    ``logprobs: true``); ``last_logprob`` is then the mean over the answer's tokens of
    ``choices[0].logprobs.content[*].logprob``, or None when the server sent none; a server
    that answers 400 naming log-probs is asked again without them (and never again)."""

    def __init__(self, url: str, options: PolicyOptions):
        endpoint = url.rstrip("/")
        self.endpoint = endpoint if endpoint.endswith("/chat/completions") else endpoint + "/chat/completions"
        parts = urllib.parse.urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PolicyError(f"endpoint {url!r} is not an http(s) URL")
        self.parts = parts
        self.options = options
        self.headers = {"Content-Type": "application/json", **options.headers}
        api_key = options.api_key or os.environ.get("OPENAI_API_KEY")
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self.retries = 0  # retried requests, over this client's life
        self.last_logprob: float | None = None
        self.ask_logprobs = options.logprobs  # off for good once a server refuses them
        self.rng = random.Random()

    def __call__(self, messages: list[dict], images: list[bytes]) -> str:
        o = self.options
        body = {"model": o.model, "messages": _openai_messages(messages, images), "temperature": o.temperature,
                "max_tokens": o.max_tokens, **({"logprobs": True} if self.ask_logprobs else {})}
        data = json.dumps(body).encode()
        start = time.monotonic()
        deadline = start + o.timeout * max(1, o.retries)
        last, tries = "no try", 0
        self.last_logprob = None
        attempt = 0
        while attempt <= o.retries:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.retries += bool(attempt)
            tries += 1
            try:
                status, payload = self._post(data, min(o.timeout, left))
                if status == 200:
                    reply = json.loads(payload)
                    text = _content(reply)
                    self.last_logprob = _mean_logprob(reply)
                    return text
                last = f"HTTP {status}"
                if status == 400 and self.ask_logprobs and b"logprob" in payload.lower():
                    self.ask_logprobs = False  # a server without log-probs: ask again without them
                    data = json.dumps({k: v for k, v in body.items() if k != "logprobs"}).encode()
                    continue  # not a retry: the same attempt, asked the way this server can answer
                if status < 500 and status not in (408, 429):
                    raise PolicyError(f"{self.endpoint} answered {status}: {payload[:300]!r}")
            except (TimeoutError, ConnectionError, OSError, http.client.HTTPException) as exc:
                last = f"{type(exc).__name__}: {exc}"
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                last = f"not a chat completion ({type(exc).__name__}: {exc})"
            pause = min(o.backoff * 2 ** attempt, 8.0) * self.rng.uniform(0.5, 1.5)
            time.sleep(max(0.0, min(pause, deadline - time.monotonic())))
            attempt += 1
        raise PolicyError(f"{self.endpoint} failed after {tries} tries in {time.monotonic() - start:.1f} s: {last}")

    def _post(self, data: bytes, seconds: float) -> tuple[int, bytes]:
        """One POST, cut after ``seconds`` whatever the server does; (status, body)."""
        p = self.parts
        kind = http.client.HTTPSConnection if p.scheme == "https" else http.client.HTTPConnection
        conn = kind(p.hostname, p.port, timeout=seconds)
        cut = threading.Event()

        def watchdog() -> None:
            cut.set()
            if conn.sock is not None:
                try:
                    conn.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(seconds, watchdog)
        timer.daemon = True
        timer.start()
        try:
            conn.request("POST", p.path + (f"?{p.query}" if p.query else ""), body=data, headers=self.headers)
            response = conn.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException):
            if cut.is_set():
                raise TimeoutError(f"no complete answer within {seconds:.2f} s") from None
            raise
        finally:
            timer.cancel()
            conn.close()
        if cut.is_set():
            raise TimeoutError(f"no complete answer within {seconds:.2f} s")
        return response.status, payload


def _content(reply: dict) -> str:
    text = reply["choices"][0]["message"]["content"]
    if text is not None and not isinstance(text, str):
        raise TypeError(f"message content is {type(text).__name__}, not text")
    return text or ""


def _mean_logprob(reply: dict) -> float | None:
    """The mean token log-probability of an OpenAI-style reply, when it carries them."""
    content = ((reply["choices"][0].get("logprobs") or {}).get("content")) or []
    values = [t.get("logprob") for t in content if isinstance(t, dict)]
    values = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v <= 0]
    return sum(values) / len(values) if values else None


def openai_generate(url: str, options: PolicyOptions) -> EndpointClient:
    """A client for one OpenAI-compatible endpoint (see ``EndpointClient``)."""
    return EndpointClient(url, options)


def endpoint_name(url: str, options: PolicyOptions) -> str:
    """An endpoint policy's identity: its model and URL (two servers of one model stay apart)."""
    return f"endpoint:{options.model}@{url.split('://', 1)[-1].rstrip('/')}"


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
                lake_uri: str | None = None, name: str | None = None, formats: dict | None = None) -> Any:
    """A fresh policy for one episode from its spec (see the module docstring). ``formats``:
    a dict the caller keeps for its run (see ``trained_options``), so a checkpoint's recorded
    prompt format is read from the lake once per worker, not once per episode."""
    if spec == "oracle":
        from phones.episode import OraclePolicy

        if task is None:
            raise PolicyError("the oracle policy needs a task, not a bare instruction")
        return RolloutPolicy(OraclePolicy(phone, task), name="oracle")
    if spec == "random" or spec.startswith("random:"):
        seed = int(spec.partition(":")[2] or 0) + (getattr(task, "seed", 0) or 0)
        policy = RandomPolicy(seed)
        policy.name = name or spec  # random and random:7 are different baselines
        return policy
    if spec.startswith(("http://", "https://")):  # the runner serves a checkpoint NAME here, named NAME
        options = trained_options(name, options, lake_uri, formats) if name else options
        return ModelPolicy(name or endpoint_name(spec, options), openai_generate(spec, options), options)
    if spec.startswith("ray-actor:"):  # a checkpoint served by one Ray actor (rollout.served.serve_policy)
        from rollout.served import ActorGenerate

        # the served checkpoint's format
        options = trained_options(name, options, lake_uri, formats) if name else options
        return ModelPolicy(name or spec, ActorGenerate(spec, options.max_tokens, options.timeout * 10), options)
    options = trained_options(spec, options, lake_uri, formats)
    return ModelPolicy(spec, _local_generate(spec, options, lake_uri), options)


def trained_options(ref: str, options: PolicyOptions, lake_uri: str | None,
                    formats: dict | None = None) -> PolicyOptions:
    """``options`` with the prompt format recorded with checkpoint ``ref`` (unchanged when none is).
    With ``formats`` (the caller's dict, kept for one run) each (ref, lake) is looked up once:
    opening the lake and querying the registry costs ~65 ms of CPU."""
    if formats is None:
        fmt = _recorded_format(ref, lake_uri)
    else:
        if (ref, lake_uri) not in formats:
            formats[(ref, lake_uri)] = _recorded_format(ref, lake_uri)
        fmt = formats[(ref, lake_uri)]
    if not fmt:
        return options
    from dataclasses import replace

    return replace(options, style=fmt.get("action_format") or options.style, coords=fmt.get("coords") or options.coords,
                   history=options.history if fmt.get("history") is None else int(fmt["history"]),
                   elements=bool(fmt.get("elements")))


def _recorded_format(ref: str, lake_uri: str | None) -> dict | None:
    try:
        from training.errors import TrainingError
        from training.prompt_format import read_format
        from training.registry import resolve_model
    except ImportError:
        return None
    from datalake.errors import LakeError
    from datalake.lake import Lake

    try:
        path = resolve_model(Lake.open(lake_uri or "./lake"), ref).path
    except (LakeError, TrainingError, OSError, ValueError):
        return None
    return read_format(path)


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
