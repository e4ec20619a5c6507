"""A loopback server that speaks the OpenAI chat-completions API, answering from a script."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class ChatServer(ThreadingHTTPServer):
    """``reply(request_json) -> str`` decides each answer; requests are kept for inspection."""

    daemon_threads = True

    def __init__(self, reply: Callable[[dict], str], status: int = 200):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.status = status
        self.requests: list[dict] = []
        self.url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
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
        self.server.requests.append(body)
        if self.server.status != 200:
            self.send_error(self.server.status)
            return
        answer = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": self.server.reply(body)}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
