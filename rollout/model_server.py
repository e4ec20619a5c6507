"""A loopback, OpenAI-compatible chat-completions server for a local checkpoint, with batching.

Rollouts of a local model run one worker process per phone; loading the model in every
worker would cost memory and give up batching. Instead the runner starts this server in
its own (parent) process, the model loaded once, and the workers talk to it like to any endpoint
(``rollout.policies.openai_generate``). Requests that arrive within ``max_wait_ms`` of
each other, up to ``max_batch``, are answered by one greedy ``generate`` call on a
left-padded batch; greedy decoding gives the same text batched or alone. Each answer
carries its tokens' log-probabilities in OpenAI's shape (``choices[0].logprobs.content``)
when the request asks for ``logprobs``: the policy's score of the step (special tokens,
padding and the end-of-sequence token left out).

Binds 127.0.0.1 only; it serves ``POST /v1/chat/completions`` and nothing else.
"""

from __future__ import annotations

import base64
import json
import queue
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from typing import Any


@dataclass
class _Request:
    messages: list[dict]
    images: list[Any]
    max_tokens: int
    done: threading.Event = field(default_factory=threading.Event)
    text: str = ""
    tokens: list[tuple[str, float]] = field(default_factory=list)  # (token, log-prob) of the answer
    error: str | None = None


class ModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, model: Any, processor: Any, *, max_batch: int = 8, max_wait_ms: float = 20.0,
                 max_queue: int = 64, caller_timeout_s: float = 600.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.model, self.processor = model, processor
        self.max_batch, self.max_wait = max_batch, max_wait_ms / 1000
        self.caller_timeout_s = caller_timeout_s  # how long one caller waits for room, then for its answer
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        self.batch_sizes: list[int] = []
        self._queue: queue.Queue[_Request | None] = queue.Queue(maxsize=max_queue)  # full: callers wait
        self._loops = [threading.Thread(target=self.serve_forever, daemon=True),
                         threading.Thread(target=self._batcher, daemon=True)]

    @classmethod
    def load(cls, lake_uri: str, ref: str, **kwargs) -> ModelServer:
        """The registered model (or folder, or ``tiny``) ``ref`` of the lake, ready to start."""
        from datalake.lake import Lake
        from training.registry import resolve_model

        return cls(*load_model(resolve_model(Lake.open(lake_uri), ref).path), **kwargs)

    def start(self, http: bool = True) -> ModelServer:
        """Start batching (and the HTTP endpoint unless ``http=False``: in-process callers use ``submit``),
        with torch's threads chosen from the cores idle now (``training.common.choose_threads``)."""
        from training.common import choose_threads

        choose_threads()
        for t in self._loops if http else self._loops[1:]:
            t.start()
        self._http = http
        return self

    def stop(self) -> None:
        self._queue.put(None)
        if getattr(self, "_http", True):
            self.shutdown()
        self.server_close()

    def submit(self, request: _Request) -> _Request:
        """Queue ``request`` and wait for its answer. A full queue makes the caller wait for
        room (back-pressure: never dropped, never an error) up to ``caller_timeout_s``; only
        then, or when no answer comes in that time, ``request.error`` says so."""
        try:
            self._queue.put(request, timeout=self.caller_timeout_s)
        except queue.Full:
            request.error = (f"the model server's queue stayed full ({self._queue.maxsize} waiting) "
                             f"for {self.caller_timeout_s:.0f} s")
            return request
        if not request.done.wait(self.caller_timeout_s):
            request.error = f"no answer from the model server in {self.caller_timeout_s:.0f} s"
        return request

    def _batcher(self) -> None:
        while True:
            first = self._queue.get()  # idle until a caller comes; stop() puts None
            if first is None:
                return
            batch = [first]
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get(timeout=self.max_wait)
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
            self._answer(batch)

    def _answer(self, batch: list[_Request]) -> None:
        import torch

        self.batch_sizes.append(len(batch))
        try:
            texts = [self.processor.apply_chat_template(r.messages, add_generation_prompt=True, tokenize=False)
                     for r in batch]
            images = [r.images for r in batch] if all(r.images for r in batch) else None
            inputs = self.processor(text=texts, images=images, return_tensors="pt", padding=True)
            with torch.no_grad():
                out = self.model.generate(**inputs, max_new_tokens=max(r.max_tokens for r in batch), do_sample=False,
                                          output_scores=True, return_dict_in_generate=True)
                logprobs = self.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
            new = out.sequences[:, inputs["input_ids"].shape[1]:]
            decoded = self.processor.batch_decode(new, skip_special_tokens=True)
            for r, text, ids, values in zip(batch, decoded, new.tolist(), logprobs.tolist()):
                r.text, r.tokens = text, self._tokens(ids, values)
        except Exception as exc:  # answer every waiting client, never leave one hanging
            for r in batch:
                r.error = f"{type(exc).__name__}: {exc}"
        for r in batch:
            r.done.set()


    def _tokens(self, ids: list[int], values: list[float]) -> list[tuple[str, float]]:
        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        special = set(tokenizer.all_special_ids)
        return [(tokenizer.convert_ids_to_tokens(i), v) for i, v in zip(ids, values)
                if i not in special and v > float("-inf")]


def load_model(path: str) -> tuple[Any, Any]:
    """(model in eval mode, processor with left padding) of a checkpoint folder, as the server uses them."""
    from transformers import AutoModelForImageTextToText

    from training.processor import load_processor

    processor = load_processor(path, padding_side="left")
    return AutoModelForImageTextToText.from_pretrained(path).eval(), processor


def _from_openai(messages: list[dict]) -> tuple[list[dict], list[Any]]:
    """OpenAI-style messages -> chat-template messages and the PIL images, in order."""
    from PIL import Image

    out, images = [], []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            out.append({"role": m["role"], "content": [{"type": "text", "text": content}]})
            continue
        parts = []
        for part in content:
            if part["type"] == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                images.append(Image.open(BytesIO(base64.b64decode(data))).convert("RGB"))
                parts.append({"type": "image"})
            else:
                parts.append({"type": "text", "text": part["text"]})
        out.append({"role": m["role"], "content": parts})
    return out, images


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format, *args):
        pass

    def do_POST(self):
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": "only POST /v1/chat/completions"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            messages, images = _from_openai(body["messages"])
            request = _Request(messages, images, int(body.get("max_tokens") or 256))
            want_logprobs = bool(body.get("logprobs"))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            self._send(400, {"error": {"message": f"bad request: {exc}"}})
            return
        self.server.submit(request)
        if request.error:
            self._send(500, {"error": {"message": request.error}})
            return
        logprobs = {"content": [{"token": t, "logprob": v, "bytes": list(t.encode()), "top_logprobs": []}
                                for t, v in request.tokens]} if want_logprobs else None
        self._send(200, {"object": "chat.completion", "model": body.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop", "logprobs": logprobs,
                                      "message": {"role": "assistant", "content": request.text}}]})

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
