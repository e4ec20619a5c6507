"""A loopback server that speaks the OpenAI chat-completions API, answering from a script.

``reply(request_json) -> str`` gives the assistant's text. ``faults`` scripts what goes
wrong, by request number (0, 1, 2, ... in arrival order): a dict ``{n: fault}`` or a
function ``n -> fault | None``. Faults: ``"500"``/``"503"``/``"429"`` (that HTTP status;
``"400 some message"`` adds the message to the error body),
``"hang"`` (never answer; the connection is closed after ``hang_seconds`` or at
shutdown), ``"garbage"`` (200 with a body that is not JSON), ``"wrong"`` (JSON that is
not a chat completion), ``"drop"`` (close the connection without a reply), ``"trickle"``
(a correct answer sent a few bytes at a time, ``trickle_seconds`` apart: no single read
waits long, the whole answer takes long).

``logprobs(request_number) -> [float]`` (optional) gives the token log-probabilities of
an answer; they are sent, as the OpenAI API does, in ``choices[0].logprobs.content``
(one ``{token, logprob, bytes, top_logprobs}`` per token) when the request asks for
``logprobs: true``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Faults = dict[int, str] | Callable[[int], str | None] | None
Logprobs = Callable[[int], list[float]] | None


class ChatServer(ThreadingHTTPServer):
    """Requests are kept for inspection; ``served`` lists (request number, fault or "ok")."""

    daemon_threads = True

    def __init__(self, reply: Callable[[dict], str], status: int = 200, faults: Faults = None,
                 hang_seconds: float = 60.0, logprobs: Logprobs = None, trickle_seconds: float = 0.1):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.status = status
        self.faults = faults
        self.hang_seconds = hang_seconds
        self.logprobs = logprobs
        self.trickle_seconds = trickle_seconds
        self.requests: list[dict] = []
        self.headers_seen: list[dict] = []
        self.served: list[tuple[int, str]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def fault(self, n: int) -> str | None:
        if self.faults is None:
            return None
        return self.faults(n) if callable(self.faults) else self.faults.get(n)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format, *args):
        pass

    def do_POST(self):
        if self.path != "/v1/chat/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server: ChatServer = self.server
        with server._lock:
            n = len(server.requests)
            server.requests.append(body)
            server.headers_seen.append(dict(self.headers))
            fault = server.fault(n) or ("ok" if server.status == 200 else str(server.status))
            server.served.append((n, fault))
        code, _, message = fault.partition(" ")
        if code.isdigit():
            self.send_error(int(code), message or None)
        elif fault == "hang":
            server.stopping.wait(server.hang_seconds)
            self.close_connection = True
        elif fault == "drop":
            self.close_connection = True
        elif fault in ("garbage", "wrong"):
            self._send(b"<html>502 Bad Gateway</html>" if fault == "garbage" else b'{"error": "overloaded"}')
        else:
            text = server.reply(body)
            choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text},
                      "logprobs": None}
            if body.get("logprobs") and server.logprobs is not None:
                choice["logprobs"] = {"content": _token_logprobs(text, server.logprobs(n)), "refusal": None}
            answer = {"id": "x", "object": "chat.completion", "model": body.get("model"), "choices": [choice]}
            self._send(json.dumps(answer).encode(), trickle=fault == "trickle")

    def _send(self, data: bytes, trickle: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not trickle:
            self.wfile.write(data)
            return
        for i in range(0, len(data), 8):
            if self.server.stopping.wait(self.server.trickle_seconds):
                return
            try:
                self.wfile.write(data[i:i + 8])
                self.wfile.flush()
            except OSError:  # the client gave up
                return


def _token_logprobs(text: str, values: list[float]) -> list[dict]:
    """The answer cut into ``len(values)`` pieces, each with its log-probability (OpenAI's shape)."""
    size = max(1, -(-len(text) // max(1, len(values))))
    pieces = [text[i * size:(i + 1) * size] for i in range(len(values))]
    return [{"token": piece, "logprob": value, "bytes": list(piece.encode()), "top_logprobs": []}
            for piece, value in zip(pieces, values)]
