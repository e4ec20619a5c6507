"""Label Studio through the official SDK (``label_studio_sdk.LabelStudio(base_url, api_key)``).

A thin facade: the calls phoneloop needs (health, projects, task import and listing,
annotations, JSON export, users, webhooks), each one SDK call whose pydantic object
is turned into a plain dict (``annotate.convert`` reads dicts, the same shape a webhook
delivers). SDK and HTTP errors become ``LabelStudioError`` naming the call.

    with LabelStudio("http://127.0.0.1:8080", token) as ls:
        ls.create_project("fix-taps", config, maximum_annotations=2)
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from typing import Any

import httpx

from annotate.errors import LabelStudioError, ProjectNotFound

# The SDK takes seconds to import: it is imported when a client is made, so the API's
# webhook (and anything else that only might talk to Label Studio) starts fast.


def form_errors(html: str) -> str:
    """The error lines of a Django form page (``<ul class="errorlist">`` items), joined."""
    items = re.findall(r'<ul class="(?:errorlist|field_errors)[^"]*">(.*?)</ul>', html, flags=re.S)
    return "; ".join(re.sub(r"<[^>]+>", " ", item).strip() for item in items)


def plain(obj: Any) -> Any:
    """An SDK object (or a list of them) as JSON-ready dicts, extra server fields kept."""
    if isinstance(obj, list):
        return [plain(o) for o in obj]
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_unset=False)
    if hasattr(obj, "dict"):
        return json.loads(obj.json())
    return obj


class LabelStudio:
    def __init__(self, url: str, token: str, *, timeout: float = 60.0):
        self.url = url.rstrip("/")
        from label_studio_sdk import LabelStudio as Sdk

        self._http = httpx.Client(timeout=timeout, trust_env=False, follow_redirects=True)
        self.sdk = Sdk(base_url=self.url, api_key=token or "-", httpx_client=self._http, max_retries=0)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LabelStudio:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _call(self, what: str):
        from label_studio_sdk.core.api_error import ApiError

        try:
            yield
        except ApiError as exc:
            raise LabelStudioError(f"{what} at {self.url} -> HTTP {exc.status_code}: {str(exc.body)[:300]}") from None
        except httpx.HTTPError as exc:
            raise LabelStudioError(f"{what} at {self.url} failed: {exc}") from None

    # -- server --------------------------------------------------------------------------
    def healthy(self) -> bool:
        try:  # without the token: Label Studio refuses a request with an unknown one, /health included
            response = self._http.get(f"{self.url}/health", timeout=3)
        except httpx.HTTPError:
            return False
        return response.status_code == 200 and "UP" in response.text

    def whoami(self) -> dict:
        with self._call("whoami"):
            return plain(self.sdk.users.whoami())

    # -- projects ------------------------------------------------------------------------
    def projects(self) -> list[dict]:
        with self._call("list projects"):
            return [plain(p) for p in self.sdk.projects.list(page_size=100)]

    def project(self, title: str) -> dict:
        with self._call(f"find project {title!r}"):
            for project in self.sdk.projects.list(title=title, page_size=100):
                if project.title == title:
                    return plain(self.sdk.projects.get(project.id))
        raise ProjectNotFound(f"no Label Studio project {title!r} at {self.url}")

    def create_project(self, title: str, label_config: str, **fields) -> dict:
        with self._call(f"create project {title!r}"):
            return plain(self.sdk.projects.create(title=title, label_config=label_config, **fields))

    def update_project(self, project_id: int, **fields) -> dict:
        with self._call(f"update project {project_id}"):
            return plain(self.sdk.projects.update(project_id, **fields))

    # -- tasks and annotations -----------------------------------------------------------
    def import_tasks(self, project_id: int, tasks: list[dict]) -> dict:
        with self._call(f"import {len(tasks)} tasks into project {project_id}"):
            return plain(self.sdk.projects.import_tasks(project_id, request=tasks, return_task_ids=True))

    def tasks(self, project_id: int, *, full: bool = True, page_size: int = 1000) -> list[dict]:
        """Every task of a project with its data; ``full`` adds predictions and annotations."""
        with self._call(f"list tasks of project {project_id}"):
            pager = self.sdk.tasks.list(project=project_id, page_size=page_size,
                                        fields="all" if full else "task_only")
            return [plain(t) for t in pager]

    def create_annotation(self, task_id: int, result: list[dict], **fields) -> dict:
        with self._call(f"annotate task {task_id}"):
            return plain(self.sdk.annotations.create(task_id, result=result, **fields))

    def update_annotation(self, annotation_id: int, result: list[dict], **fields) -> dict:
        with self._call(f"update annotation {annotation_id}"):
            return plain(self.sdk.annotations.update(annotation_id, result=result, **fields))

    def delete_annotation(self, annotation_id: int) -> None:
        with self._call(f"delete annotation {annotation_id}"):
            self.sdk.annotations.delete(annotation_id)

    def export(self, project_id: int) -> list[dict]:
        """The annotated tasks of a project, with their annotations (JSON export)."""
        with self._call(f"export project {project_id}"):
            raw = b"".join(self.sdk.projects.exports.download_sync(project_id, export_type="JSON"))
        return json.loads(raw)

    # -- people --------------------------------------------------------------------------
    def users(self) -> dict[int, dict]:
        with self._call("list users"):
            return {u["id"]: u for u in plain(list(self.sdk.users.list()))}

    def invite_link(self) -> dict:
        """The organisation's invite link (``invite_url``: ``/user/signup/?token=...``, and ``token``)."""
        with self._call("get the invite link"):
            return plain(self.sdk.organizations.invites.get_invite_link())

    def sign_up(self, email: str, password: str) -> dict:
        """Create a person who can log in: the server's own signup form, opened through the invite
        link (Label Studio's users API ignores a password passed to it). Returns the new user."""
        invite = self.invite_link()["invite_url"]
        signup = f"{self.url}{invite}" if invite.startswith("/") else invite
        with httpx.Client(timeout=self._http.timeout, trust_env=False, follow_redirects=False) as browser:
            try:
                form = browser.get(signup)
                csrf = browser.cookies.get("csrftoken")
                sent = browser.post(signup, data={"csrfmiddlewaretoken": csrf or "", "email": email,
                                                  "password": password, "how_find_us": "", "elaborate": ""},
                                    headers={"Referer": signup, "X-CSRFToken": csrf or ""})
                if sent.status_code not in (301, 302, 303) or form.status_code != 200:
                    raise LabelStudioError(f"sign up {email!r} at {self.url} -> HTTP {sent.status_code}: "
                                           f"{form_errors(sent.text) or sent.text[:200]}")
                me = browser.get(f"{self.url}/api/current-user/whoami")
                me.raise_for_status()
            except httpx.HTTPError as exc:
                raise LabelStudioError(f"sign up {email!r} at {self.url} failed: {exc}") from None
        return me.json()

    # -- webhooks ------------------------------------------------------------------------
    def webhooks(self, project_id: int) -> list[dict]:
        with self._call(f"list webhooks of project {project_id}"):
            return [plain(h) for h in self.sdk.webhooks.list(project=str(project_id))]

    def create_webhook(self, project_id: int, url: str, headers: dict[str, str] | None = None) -> dict:
        with self._call(f"create a webhook for project {project_id}"):
            return plain(self.sdk.webhooks.create(
                url=url, project=project_id, send_payload=True, send_for_all_actions=False,
                actions=["ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_DELETED"], headers=headers or {},
                is_active=True))
