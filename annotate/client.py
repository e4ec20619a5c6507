"""A small Label Studio REST client over httpx (``Authorization: Token <token>``).

Only the calls phoneloop needs: health, projects, task import and listing, annotations,
JSON export and webhooks. Errors become ``LabelStudioError`` naming the call.
"""

from __future__ import annotations

from typing import Any

import httpx

from annotate.errors import LabelStudioError, ProjectNotFound


class LabelStudio:
    def __init__(self, url: str, token: str, *, timeout: float = 60.0):
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, timeout=timeout, trust_env=False,
                                  headers={"Authorization": f"Token {token}"})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> LabelStudio:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise LabelStudioError(f"{method} {self.url}{path} failed: {exc}") from None
        if response.status_code >= 400:
            raise LabelStudioError(f"{method} {self.url}{path} -> HTTP {response.status_code}: "
                                   f"{response.text[:300]}")
        return response.json() if response.content else None

    # -- server --------------------------------------------------------------------------
    def healthy(self) -> bool:
        try:  # without the token: Label Studio refuses a request with an unknown one, /health included
            response = httpx.get(f"{self.url}/health", timeout=3, trust_env=False)
        except httpx.HTTPError:
            return False
        return response.status_code == 200 and "UP" in response.text

    def whoami(self) -> dict:
        return self._call("GET", "/api/current-user/whoami")

    # -- projects ------------------------------------------------------------------------
    def projects(self) -> list[dict]:
        out, page = [], 1
        while True:
            body = self._call("GET", "/api/projects", params={"page": page, "page_size": 100})
            results = body["results"] if isinstance(body, dict) else body
            out.extend(results)
            if not isinstance(body, dict) or not body.get("next"):
                return out
            page += 1

    def project(self, title: str) -> dict:
        for project in self.projects():
            if project.get("title") == title:
                return project
        raise ProjectNotFound(f"no Label Studio project {title!r} at {self.url}")

    def create_project(self, title: str, label_config: str) -> dict:
        return self._call("POST", "/api/projects", json={"title": title, "label_config": label_config})

    # -- tasks and annotations -----------------------------------------------------------
    def import_tasks(self, project_id: int, tasks: list[dict]) -> dict:
        return self._call("POST", f"/api/projects/{project_id}/import", json=tasks)

    def tasks(self, project_id: int, *, full: bool = True, page_size: int = 1000) -> list[dict]:
        """Every task of a project with its data; ``full`` adds predictions and annotations."""
        out, page = [], 1
        while True:
            try:
                body = self._call("GET", "/api/tasks", params={
                    "project": project_id, "page": page, "page_size": page_size,
                    "fields": "all" if full else "task_only"})
            except LabelStudioError as exc:
                if "404" in str(exc) and page > 1:  # past the last page
                    return out
                raise
            out.extend(body["tasks"])
            if len(out) >= body.get("total", 0) or not body["tasks"]:
                return out
            page += 1

    def create_annotation(self, task_id: int, result: list[dict], **fields) -> dict:
        return self._call("POST", f"/api/tasks/{task_id}/annotations", json={"result": result, **fields})

    def export(self, project_id: int) -> list[dict]:
        """The annotated tasks of a project, with their annotations (JSON export)."""
        return self._call("GET", f"/api/projects/{project_id}/export", params={"exportType": "JSON"})

    def users(self) -> dict[int, dict]:
        return {u["id"]: u for u in self._call("GET", "/api/users")}

    # -- webhooks ------------------------------------------------------------------------
    def webhooks(self, project_id: int) -> list[dict]:
        return self._call("GET", "/api/webhooks", params={"project": project_id})

    def create_webhook(self, project_id: int, url: str, headers: dict[str, str] | None = None) -> dict:
        body = {"project": project_id, "url": url, "send_payload": True, "send_for_all_actions": False,
                "actions": ["ANNOTATION_CREATED", "ANNOTATION_UPDATED"], "headers": headers or {},
                "is_active": True}
        return self._call("POST", "/api/webhooks", json=body)
