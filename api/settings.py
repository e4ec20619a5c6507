"""Settings of the HTTP service, read from the environment (the CLI's options override host/port).

| variable | meaning | default |
|---|---|---|
| ``PHONELOOP_API_TOKEN`` | bearer token for every non-GET route (and every route with ``PHONELOOP_API_AUTH_READS``) | unset: non-GET routes answer 503 |
| ``PHONELOOP_API_AUTH_READS`` | ``1`` also requires the token on GET routes (``/health`` stays open) | ``0`` |
| ``PHONELOOP_WEBHOOK_SECRET`` | the secret Label Studio sends in ``X-Webhook-Secret`` | unset: the webhook answers 503 |
| ``PHONELOOP_SQL_ROW_LIMIT`` | most rows ``POST /api/sql`` returns | ``1000`` |
| ``PHONELOOP_SQL_TIMEOUT_S`` | a query running longer is interrupted | ``5`` |
| ``PHONELOOP_SQL_MAX_BYTES_MB`` | most bytes ``POST /api/sql`` returns (as JSON text); the stream stops there | ``16`` |
| ``PHONELOOP_SQL_MEMORY_MB`` | memory one query may use in DuckDB (``memory_limit``, no spilling); more fails the query | ``512`` |
| ``PHONELOOP_SQL_PROCESS_MB`` | memory one query's child process may use in all (``RLIMIT_DATA``): at least the above + 256 | ``1024`` |
| ``PHONELOOP_SQL_MAX_CONCURRENT`` | SQL queries running at once; one more answers 429 | ``4`` |
| ``PHONELOOP_SESSION_TTL_S`` | how long a viewer login lasts (the session cookie's expiry; logout ends it sooner) | ``43200`` |
| ``PHONELOOP_API_REFRESH_S`` | how often reads look for new lake versions | ``2`` |
| ``PHONELOOP_FRAME_CACHE_MB`` | PNG bytes kept in memory (frames never change) | ``256`` |
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from api.errors import InvalidSettings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


@dataclass(frozen=True)
class ApiSettings:
    token: str | None = None  # bearer token; None disables every route that needs one (503)
    auth_reads: bool = False  # require the token on GET routes too
    webhook_secret: str | None = None  # Label Studio's X-Webhook-Secret; None disables the webhook (503)
    sql_row_limit: int = 1000
    sql_timeout_s: float = 5.0
    sql_memory_mb: int = 512
    sql_max_bytes: int = 16 << 20
    sql_process_mb: int = 1024
    sql_max_concurrent: int = 4
    refresh_s: float = 2.0
    session_ttl_s: int = 12 * 3600
    frame_cache_mb: int = 256

    def __post_init__(self) -> None:
        if self.sql_row_limit < 1:
            raise InvalidSettings(f"sql_row_limit must be at least 1, got {self.sql_row_limit}")
        if self.sql_timeout_s <= 0:
            raise InvalidSettings(f"sql_timeout_s must be positive, got {self.sql_timeout_s}")
        if self.sql_memory_mb < 16:
            raise InvalidSettings(f"sql_memory_mb must be at least 16, got {self.sql_memory_mb}")
        if self.sql_max_bytes < 1024:
            raise InvalidSettings(f"sql_max_bytes must be at least 1024, got {self.sql_max_bytes}")
        if self.sql_process_mb < self.sql_memory_mb + 256:
            raise InvalidSettings(f"sql_process_mb ({self.sql_process_mb}) must be at least sql_memory_mb + 256 "
                                  f"({self.sql_memory_mb + 256}): the query's process also holds Python and Arrow")
        if self.sql_max_concurrent < 1:
            raise InvalidSettings(f"sql_max_concurrent must be at least 1, got {self.sql_max_concurrent}")
        if self.session_ttl_s < 1:
            raise InvalidSettings(f"session_ttl_s must be at least 1, got {self.session_ttl_s}")
        if self.auth_reads and not self.token:
            raise InvalidSettings("PHONELOOP_API_AUTH_READS is set but PHONELOOP_API_TOKEN is not")

    def sql_limits(self):
        """The limits ``api.sql.run_bounded`` runs a user query under."""
        from api.sql import SqlLimits

        return SqlLimits(row_limit=self.sql_row_limit, max_bytes=self.sql_max_bytes, timeout_s=self.sql_timeout_s,
                         memory_mb=self.sql_memory_mb, process_mb=self.sql_process_mb)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ApiSettings:
        env = os.environ if env is None else env
        try:
            return cls(
                token=env.get("PHONELOOP_API_TOKEN") or None,
                auth_reads=env.get("PHONELOOP_API_AUTH_READS", "0").lower() in ("1", "true", "yes"),
                webhook_secret=env.get("PHONELOOP_WEBHOOK_SECRET") or None,
                sql_row_limit=int(env.get("PHONELOOP_SQL_ROW_LIMIT", "1000")),
                sql_timeout_s=float(env.get("PHONELOOP_SQL_TIMEOUT_S", "5")),
                sql_memory_mb=int(env.get("PHONELOOP_SQL_MEMORY_MB", "512")),
                sql_max_bytes=int(float(env.get("PHONELOOP_SQL_MAX_BYTES_MB", "16")) * (1 << 20)),
                sql_process_mb=int(env.get("PHONELOOP_SQL_PROCESS_MB", "1024")),
                sql_max_concurrent=int(env.get("PHONELOOP_SQL_MAX_CONCURRENT", "4")),
                refresh_s=float(env.get("PHONELOOP_API_REFRESH_S", "2")),
                session_ttl_s=int(env.get("PHONELOOP_SESSION_TTL_S", str(12 * 3600))),
                frame_cache_mb=int(env.get("PHONELOOP_FRAME_CACHE_MB", "256")),
            )
        except ValueError as exc:
            raise InvalidSettings(f"bad API setting in the environment: {exc}") from None
