"""Web Forms: sign-up and order forms that ask for more personal data than they need.

Each service is a form of labelled fields; some are required, others optional and
sensitive (birthday, ID number, home address, card number). A delivery form shows the
card-number field even when cash is chosen, as many real apps do. Submitting stores the
non-empty fields; what was typed and erased before submitting stays in the phone's draft
log (``SystemState.drafts``), which is what the privacy verifiers read.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps.base import App
from mockphone.widgets import Page, View

LABELS = {"name": "Full name", "email": "Email", "phone": "Phone number", "birthday": "Birthday (optional)",
          "id_number": "National ID number (optional)", "home_address": "Home address (optional)",
          "address": "Delivery address", "card_number": "Card number", "salary": "Annual salary (optional)",
          "medical": "Medical conditions (optional)", "dob": "Date of birth"}
SENSITIVE = ("birthday", "id_number", "home_address", "card_number", "salary", "medical", "dob", "phone")

# service -> (fields in screen order, required fields, whether it has a cash/card payment choice)
SERVICES: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "FitLife newsletter": (("name", "email", "birthday", "phone"), ("name", "email"), False),
    "City library card": (("name", "email", "id_number", "home_address"), ("name", "email"), False),
    "Noodle delivery": (("name", "address", "card_number"), ("name", "address"), True),
    "Bean coffee club": (("name", "phone", "birthday"), ("name", "phone"), False),
    "Airport Wi-Fi": (("email", "phone", "home_address"), ("email",), False),
    "Tech meetup RSVP": (("name", "email", "medical"), ("name", "email"), False),
    "Bike rental": (("name", "phone", "id_number"), ("name", "phone"), False),
    "Salary survey": (("email", "salary", "birthday"), ("email",), False),
    "Pharmacy pickup": (("name", "dob", "id_number"), ("name", "dob"), False),
    "Parcel locker": (("name", "phone", "home_address"), ("name", "phone"), False),
    "Job alerts": (("email", "salary", "phone"), ("email",), False),
}


@dataclass
class Submission:
    service: str
    fields: dict[str, str]
    payment: str = ""


@dataclass
class FormsState:
    submissions: list[Submission] = field(default_factory=list)

    def of(self, service: str) -> list[Submission]:
        return [s for s in self.submissions if s.service == service]


class FormsApp(App):
    name = "forms"
    package = "com.phoneloop.forms"
    label = "Web Forms"  # sorts last on the launcher, so the other icons keep their places
    aliases = ("services", "web forms", "sign-ups")
    color = "#a142f4"

    def initial_state(self, rng: random.Random) -> FormsState:
        return FormsState()

    def page_main(self, page: Page) -> View:
        rows = tuple(ui.item(s, "Sign up" if not SERVICES[s][2] else "Order", rid="service",
                             on_tap=(lambda s=s: self.push("form", service=s))) for s in SERVICES)
        return View("Web Forms", body=rows)

    def page_form(self, page: Page) -> View:
        service = page.args["service"]
        fields, required, payment = SERVICES[service]
        body: list = []
        for rid in fields:
            label = LABELS[rid] + ("" if rid in required or "optional" in LABELS[rid] else " (optional)")
            body += [ui.text(label, style="caption", copyable=False), ui.edit(rid, page.field(rid), hint=LABELS[rid])]
        if payment:
            choice = page.args.get("payment", "Cash")
            body.insert(0, ui.row(*(ui.chip(p, choice == p, (lambda p=p: self._pay_with(page, p)), rid=f"pay_{p.lower()}")
                                    for p in ("Cash", "Card"))))
        return View(service, up=True, body=tuple(body),
                    footer=(ui.button("Submit", lambda: self._submit(page), rid="submit"),))

    def _pay_with(self, page: Page, choice: str) -> None:
        page.args["payment"] = choice

    def _submit(self, page: Page) -> None:
        service = page.args["service"]
        fields, required, payment = SERVICES[service]
        values = {rid: page.field(rid).strip() for rid in fields if page.field(rid).strip()}
        missing = [LABELS[r] for r in required if r not in values]
        if payment and page.args.get("payment") == "Card" and "card_number" not in values:
            missing.append(LABELS["card_number"])
        if missing:
            self.dialog("Missing information", "Please fill in: " + ", ".join(missing), rid="missing")
            return
        self.state.submissions.append(Submission(service, values, page.args.get("payment", "Cash") if payment else ""))
        self.back()
        self.toast("Submitted")
