"""Signed, expiring frame URLs: ``/frames/<sha>.png?token=<expires>.<signature>``.

Label Studio's browser loads task images with a plain ``<img>``: it cannot send the
API's bearer token. When the API requires auth for reads (``PHONELOOP_API_AUTH_READS``),
a frame URL may carry a token instead, valid for that one frame until it expires:

    signer = FrameSigner.from_api_token(token)
    url = f"{base}/frames/{sha}.png?{signer.query(sha)}"
    signer.valid(sha, given_token)  # True until the expiry

The key is derived from ``PHONELOOP_API_TOKEN`` (HMAC-SHA256 over ``frames`` — so the
pusher and the API agree without a second secret, and rotating the API token revokes
every URL). The signature covers the frame's sha and the expiry (Unix seconds).
``api.auth.frame_access_allowed`` checks it on the frame route: a valid token, or the
usual read check.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

DEFAULT_TTL_S = 14 * 24 * 3600  # tasks stay in Label Studio for weeks


@dataclass(frozen=True)
class FrameSigner:
    key: bytes
    ttl_s: int = DEFAULT_TTL_S

    @classmethod
    def from_api_token(cls, token: str, ttl_s: int = DEFAULT_TTL_S) -> FrameSigner:
        if not token:
            raise ValueError("signing frame URLs needs the API token (PHONELOOP_API_TOKEN)")
        return cls(hmac.new(token.encode(), b"phoneloop frames", hashlib.sha256).digest(), ttl_s)

    def token(self, sha: str, expires: int | None = None) -> str:
        expires = int(time.time()) + self.ttl_s if expires is None else int(expires)
        return f"{expires}.{self._mac(sha, expires)}"

    def query(self, sha: str) -> str:
        return f"token={self.token(sha)}"

    def valid(self, sha: str, token: str | None, now: float | None = None) -> bool:
        if not token or token.count(".") != 1:
            return False
        expires, mac = token.split(".")
        if not expires.isdigit() or int(expires) < (time.time() if now is None else now):
            return False
        return hmac.compare_digest(mac, self._mac(sha, int(expires)))

    def _mac(self, sha: str, expires: int) -> str:
        return hmac.new(self.key, f"{sha}:{expires}".encode(), hashlib.sha256).hexdigest()[:32]
