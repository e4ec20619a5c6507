"""Bearer-token and webhook-secret checks, as FastAPI dependencies (so OpenAPI documents them).

- Non-GET routes always need ``Authorization: Bearer <PHONELOOP_API_TOKEN>``; with no token
  configured they answer 503 (the service refuses writes rather than run them unguarded).
- GET routes need it too when ``PHONELOOP_API_AUTH_READS`` is on (``/health`` never does).
  Browsers log in instead: ``POST /login`` with the token sets the ``phoneloop_session``
  cookie (HttpOnly, SameSite=Lax, Secure behind https): a signed session id with an expiry
  (``PHONELOOP_SESSION_TTL_S``), checked against the server's session store
  (api/sessions.py), so it expires and ``POST /logout`` revokes it; the token itself never
  sits in the browser. Reads accept it like the bearer token.
- Frames also pass ``frame_access_allowed(request)``: the seam for the signed frame URLs
  Label Studio uses (the annotation issue's signer plugs in there).
- The Label Studio webhook authenticates with ``X-Webhook-Secret`` instead (Label Studio
  sends fixed headers, not a rotating bearer token); no secret configured -> 503.
Comparisons are constant-time (``hmac.compare_digest``). The checks are ``async`` (they never
block), so FastAPI runs them on the event loop instead of a thread pool.
"""

from __future__ import annotations

import hmac

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from api.settings import ApiSettings

WEBHOOK_HEADER = "X-Webhook-Secret"
COOKIE = "phoneloop_session"

bearer = HTTPBearer(auto_error=False, description="PHONELOOP_API_TOKEN")
_webhook_secret = APIKeyHeader(name=WEBHOOK_HEADER, auto_error=False, description="PHONELOOP_WEBHOOK_SECRET")


def _settings(request: Request) -> ApiSettings:
    return request.app.state.settings


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


async def require_token(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    token = _settings(request).token
    if token is None:
        raise HTTPException(503, "this route needs PHONELOOP_API_TOKEN to be set on the server")
    if credentials is None or not _same(credentials.credentials, token):
        raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


def token_matches(request: Request, given: str) -> bool:
    token = _settings(request).token
    return token is not None and _same(given, token)


def has_session(request: Request) -> bool:
    """Whether the request carries a live session cookie (signed, unexpired, not logged out)."""
    sessions = request.app.state.sessions
    return sessions is not None and sessions.valid(request.cookies.get(COOKIE))


async def read_access(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    if _settings(request).auth_reads and not has_session(request):
        await require_token(request, credentials)


def frame_access_allowed(request: Request) -> bool:
    """Whether a frame request carries its own proof of access: a signed, unexpired
    ``?token=`` for exactly this frame (``api/signing.py``, used in Label Studio tasks)."""
    from api.signing import FrameSigner

    token = request.query_params.get("token")
    api_token = _settings(request).token
    if not token or not api_token or len(token) > 80:
        return False
    return FrameSigner.from_api_token(api_token).valid(request.path_params.get("sha", ""), token)


async def frame_access(request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
    if not frame_access_allowed(request):
        await read_access(request, credentials)


async def webhook_access(request: Request, secret: str | None = Depends(_webhook_secret)) -> None:
    expected = _settings(request).webhook_secret
    if expected is None:
        raise HTTPException(503, "the webhook needs PHONELOOP_WEBHOOK_SECRET to be set on the server")
    if not _same(secret, expected):
        raise HTTPException(401, f"missing or wrong {WEBHOOK_HEADER} header")
