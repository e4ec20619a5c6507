"""Viewer sessions: signed cookies that expire, and a server-side store that logout revokes.

    store = SessionStore(key=..., ttl_s=12 * 3600)
    cookie = store.open()          # "<id>.<expires>.<signature>"
    store.valid(cookie)            # True until the expiry, or until store.close(cookie)

The cookie names a random session id and its expiry (Unix seconds), signed with HMAC-SHA256
under a key derived from ``PHONELOOP_API_TOKEN`` (rotating the token voids every cookie). A
cookie is accepted only when its signature is right, its expiry has not passed *and* its id is
still in the store: logging out removes the id, so a copy of the cookie kept elsewhere is
refused too. The store lives in the server's memory (sessions are derived and ephemeral, not
lake data): a restart logs everyone out. It is bounded: expired ids are dropped as new ones
open, and past ``max_sessions`` the oldest go first.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict

DEFAULT_TTL_S = 12 * 3600


class SessionStore:
    def __init__(self, key: bytes, ttl_s: int = DEFAULT_TTL_S, max_sessions: int = 10_000):
        if ttl_s < 1:
            raise ValueError(f"session ttl must be at least 1 s, got {ttl_s}")
        self.key, self.ttl_s, self.max_sessions = key, ttl_s, max_sessions
        self._open: OrderedDict[str, int] = OrderedDict()  # session id -> expiry, oldest first
        self._lock = threading.Lock()

    @classmethod
    def from_api_token(cls, token: str, ttl_s: int = DEFAULT_TTL_S) -> SessionStore:
        return cls(hmac.new(token.encode(), b"phoneloop viewer sessions v2", hashlib.sha256).digest(), ttl_s)

    def open(self, now: float | None = None) -> str:
        """A new session's cookie value."""
        now = time.time() if now is None else now
        sid, expires = secrets.token_urlsafe(18), int(now) + self.ttl_s
        with self._lock:
            self._drop_expired(now)
            while len(self._open) >= self.max_sessions:
                self._open.popitem(last=False)
            self._open[sid] = expires
        return f"{sid}.{expires}.{self._mac(sid, expires)}"

    def valid(self, cookie: str | None, now: float | None = None) -> bool:
        parsed = self._parse(cookie)
        if parsed is None:
            return False
        sid, expires = parsed
        if expires <= (time.time() if now is None else now):
            return False
        with self._lock:
            return self._open.get(sid) == expires

    def close(self, cookie: str | None) -> None:
        """Revoke the session (logout); an unknown or forged cookie changes nothing."""
        parsed = self._parse(cookie)
        if parsed is not None:
            with self._lock:
                self._open.pop(parsed[0], None)

    def _parse(self, cookie: str | None) -> tuple[str, int] | None:
        if not cookie or len(cookie) > 200 or cookie.count(".") != 2:
            return None
        sid, expires, mac = cookie.split(".")
        if not expires.isdigit() or not hmac.compare_digest(mac, self._mac(sid, int(expires))):
            return None
        return sid, int(expires)

    def _drop_expired(self, now: float) -> None:
        for sid in [s for s, e in self._open.items() if e <= now]:
            del self._open[sid]

    def _mac(self, sid: str, expires: int) -> str:
        return hmac.new(self.key, f"{sid}:{expires}".encode(), hashlib.sha256).hexdigest()
