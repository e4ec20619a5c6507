"""One identity per person: Label Studio users -> a stable id and email, plus a team role.

    people = People.load(client, lake.uri)
    people.identify(2)            # ("2", "ann@example.com")
    people.role("rev@example.com")  # "reviewer"

Label Studio sends ``completed_by`` as a bare user id in webhooks and in exports; both
paths resolve it here through the users API, so a row reads the same however it came.
The id is Label Studio's user id (stable for the person), the email is looked up.

Roles: the open-source Label Studio has no reviewer role, so phoneloop keeps the team's
roles (``annotator`` | ``reviewer``) in ``<lake>/labelstudio/team.json`` (or
``PHONELOOP_ANNOTATE_TEAM``); an annotation by a reviewer becomes a review row.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate.errors import AnnotateError, LabelStudioError

ROLES = ("annotator", "reviewer")
log = logging.getLogger("phoneloop.annotate")
_REFRESH_S = 30.0


def team_file(lake_uri: str) -> Path:
    configured = os.environ.get("PHONELOOP_ANNOTATE_TEAM")
    if configured:
        return Path(configured)
    from annotate.server import home

    return home(lake_uri) / "team.json"


def roles(lake_uri: str) -> dict[str, str]:
    """email -> role of the lake's team (empty when nobody was added)."""
    try:
        return json.loads(team_file(lake_uri).read_text())
    except (OSError, ValueError, AnnotateError):
        return {}


def set_role(lake_uri: str, email: str, role: str) -> None:
    if role not in ROLES:
        raise AnnotateError(f"role must be one of {ROLES}, got {role!r}")
    path = team_file(lake_uri)
    team = roles(lake_uri)
    team[email.lower()] = role
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(team, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


@dataclass
class People:
    users: dict[int, dict] = field(default_factory=dict)
    team: dict[str, str] = field(default_factory=dict)
    warning: str | None = None  # why the users could not be listed (rows then keep bare ids until healed)

    @classmethod
    def load(cls, client, lake_uri: str | None = None) -> People:
        warning = None
        try:
            users = client.users() if client is not None else {}
        except LabelStudioError as exc:  # a stale token, a token without the right to list users
            users, warning = {}, f"cannot list Label Studio users ({exc}): annotators are stored by bare id " \
                                 "until a pull or a later listing heals them"
            log.warning(warning)
        return cls(users=users, team=roles(lake_uri) if lake_uri else {}, warning=warning)

    @property
    def listed(self) -> bool:
        """Whether the users were listed (else emails and roles are unknown)."""
        return self.warning is None

    def identify(self, completed_by: Any) -> tuple[str | None, str | None]:
        """(stable id, email) of an annotation's ``completed_by`` (an id or a user object)."""
        if isinstance(completed_by, dict):
            uid, email = completed_by.get("id"), completed_by.get("email")
        else:
            uid, email = completed_by, None
        if isinstance(uid, int) and not isinstance(uid, bool) and uid in self.users:
            email = email or self.users[uid].get("email")
        return (None if uid is None else str(uid)), (email or None)

    def role(self, email: str | None) -> str:
        return self.team.get((email or "").lower(), "annotator")


def add_user(client, lake_uri: str, email: str, role: str = "annotator") -> dict:
    """Create the Label Studio user (or find them) and record their role; returns id, email, role
    and, for a new user, the generated password (shown once) they log in with.

    Label Studio's users API ignores a password, so the user signs up through the server's
    own signup form opened with the organisation's invite link (``LabelStudio.sign_up``);
    an existing user keeps their password (None here)."""
    if role not in ROLES:
        raise AnnotateError(f"role must be one of {ROLES}, got {role!r}")
    existing = {u.get("email", "").lower(): u for u in client.users().values()}
    password = None
    if email.lower() in existing:
        user = existing[email.lower()]
    else:  # the server's signup form through the invite link: the one way a password takes
        password = secrets.token_urlsafe(12)
        user = client.sign_up(email.lower(), password)
    set_role(lake_uri, email, role)
    return {"id": user["id"], "email": user.get("email") or email, "role": role, "password": password}


def list_users(client, lake_uri: str) -> list[dict]:
    team = roles(lake_uri)
    return [{"id": u["id"], "email": u.get("email"), "role": team.get((u.get("email") or "").lower(), "annotator")}
            for u in sorted(client.users().values(), key=lambda u: u["id"])]


class Directory:
    """People for the webhook: loaded from the lake's Label Studio, refreshed when an id is new."""

    def __init__(self, lake_uri: str):
        self.lake_uri = lake_uri
        self._people: People | None = None
        self._loaded = 0.0
        self._lock = threading.Lock()

    def people(self, completed_by: Any = None) -> People:
        with self._lock:
            uid = completed_by.get("id") if isinstance(completed_by, dict) else completed_by
            uid = uid if isinstance(uid, int) else None
            stale = self._people is None or (uid not in self._people.users
                                             and time.monotonic() - self._loaded > 1.0)
            if stale or time.monotonic() - self._loaded > _REFRESH_S:
                self._people = self._fetch()
                self._loaded = time.monotonic()
            return self._people

    def _fetch(self) -> People:
        from annotate import server

        try:
            srv = server.connect(self.lake_uri)
        except AnnotateError as exc:
            warning = f"no Label Studio to list users from ({exc}): annotators are stored by bare id until healed"
            log.warning(warning)
            return People(team=roles(self.lake_uri), warning=warning)
        with srv.client() as client:
            return People.load(client, self.lake_uri)


_DIRECTORIES: dict[str, Directory] = {}


def directory(lake_uri: str) -> Directory:
    if lake_uri not in _DIRECTORIES:
        _DIRECTORIES[lake_uri] = Directory(lake_uri)
    return _DIRECTORIES[lake_uri]


def warm(lake_uri: str) -> threading.Thread:
    """Load the lake's people in the background (the SDK's import takes seconds; Label Studio
    waits 1 s for a webhook): the API calls this when it starts."""
    thread = threading.Thread(target=directory(lake_uri).people, name="phoneloop-people", daemon=True)
    thread.start()
    return thread
