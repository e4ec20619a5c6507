"""A loopback server that speaks the OpenAI chat-completions API, answering from a script.

``reply(request_json) -> str`` gives the assistant's text. ``faults`` scripts what goes
wrong, by request number (0, 1, 2, ... in arrival order): a dict ``{n: fault}`` or a
function ``n -> fault | None``. Faults: ``"500"``/``"503"``/``"429"`` (that HTTP status),
``"hang"`` (never answer; the connection is closed after ``hang_seconds`` or at
shutdown), ``"garbage"`` (200 with a body that is not JSON), ``"wrong"`` (JSON that is
not a chat completion), ``"drop"`` (close the connection without a reply).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Faults = dict[int, str] | Callable[[int], str | None] | None


class ChatServer(ThreadingHTTPServer):
    """Requests are kept for inspection; ``served`` lists (request number, fault or "ok")."""

    daemon_threads = True

    def __init__(self, reply: Callable[[dict], str], status: int = 200, faults: Faults = None,
                 hang_seconds: float = 60.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.status = status
        self.faults = faults
        self.hang_seconds = hang_seconds
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
        if fault.isdigit():
            self.send_error(int(fault))
        elif fault == "hang":
            server.stopping.wait(server.hang_seconds)
            self.close_connection = True
        elif fault == "drop":
            self.close_connection = True
        elif fault in ("garbage", "wrong"):
            self._send(b"<html>502 Bad Gateway</html>" if fault == "garbage" else b'{"error": "overloaded"}')
        else:
            answer = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                      "choices": [{"index": 0, "finish_reason": "stop",
                                   "message": {"role": "assistant", "content": server.reply(body)}}]}
            self._send(json.dumps(answer).encode())

    def _send(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
