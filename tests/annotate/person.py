"""A person at Label Studio's real login form: a ``requests.Session`` with the CSRF cookie.

    ann = Person.login(label_studio.url, "ann@example.com", password)
    created = ann.annotate(task_id, result)       # POST /api/tasks/<id>/annotations/ as that person
    ann.update(created["id"], other_result)
    ann.delete(created["id"])

What the browser does: GET /user/login/ (the csrftoken cookie), POST the form with the
token, then API calls with the session cookie and ``X-CSRFToken``. Label Studio records
the logged-in person as the annotation's ``completed_by``: no admin acts on anyone's behalf.
"""

from __future__ import annotations

from dataclasses import dataclass

import requests


class LoginFailed(AssertionError):
    pass


@dataclass
class Person:
    url: str
    email: str
    session: requests.Session
    id: int

    @classmethod
    def login(cls, url: str, email: str, password: str) -> Person:
        session = requests.Session()
        session.trust_env = False
        page = f"{url}/user/login/"
        session.get(page, timeout=30).raise_for_status()
        sent = session.post(page, data={"csrfmiddlewaretoken": session.cookies["csrftoken"], "email": email,
                                        "password": password}, headers={"Referer": page},
                            allow_redirects=False, timeout=30)
        me = session.get(f"{url}/api/current-user/whoami", timeout=30)
        if sent.status_code != 302 or me.status_code != 200:
            raise LoginFailed(f"{email} could not log in: HTTP {sent.status_code}, whoami HTTP {me.status_code}")
        assert me.json()["email"] == email
        return cls(url=url, email=email, session=session, id=me.json()["id"])

    def _call(self, method: str, path: str, **kwargs):
        response = self.session.request(method, f"{self.url}{path}", timeout=60,
                                        headers={"X-CSRFToken": self.session.cookies["csrftoken"],
                                                 "Referer": f"{self.url}/projects/"}, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None

    def annotate(self, task_id: int, result: list[dict], lead_time: float | None = None) -> dict:
        body = {"result": result, **({"lead_time": lead_time} if lead_time is not None else {})}
        return self._call("POST", f"/api/tasks/{task_id}/annotations/", json=body)

    def update(self, annotation_id: int, result: list[dict]) -> dict:
        return self._call("PATCH", f"/api/annotations/{annotation_id}/", json={"result": result})

    def delete(self, annotation_id: int) -> None:
        self._call("DELETE", f"/api/annotations/{annotation_id}/")
