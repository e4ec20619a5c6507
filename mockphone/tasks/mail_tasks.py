"""Mail and Bank tasks."""

from __future__ import annotations

import re

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.mail import Email
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, fraction, final_answer

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

RECIPIENTS = ("hr@example.com", "boss@example.com", "landlord@example.com")
SUBJECTS = ("Schedule update", "Rent receipt", "Conference travel")
BODIES = ("See you on Monday.", "Please confirm by Friday.", "Thanks for your help!")
SEEDED = ("Parking permit renewal", "Book club picks", "Shipping notice")


def _seed_mail(phone: MockPhone, subject: str) -> None:
    state = phone.app("mail").state
    state.emails.append(Email(len(state.emails), "office@example.com", state.me, subject, f"About: {subject}."))


class MailSend(Task):
    """Compose and send an email (recipient, subject, body each count)."""

    template = "Send an email to {to} with subject \"{subject}\" and body \"{body}\"."
    app_names = ("mail",)
    complexity = 4.0
    allowed = ('mail.emails[+1]*',)
    schema = {"to": Param(str, choices=RECIPIENTS), "subject": Param(str, choices=SUBJECTS),
              "body": Param(str, choices=BODIES)}

    def check(self, phone: MockPhone) -> float:
        sent = [e for e in phone.state("mail").sent() if e.to == self.params["to"]]
        if not sent:
            return 0.0
        e = sent[-1]
        return fraction(True, e.subject == self.params["subject"], e.body.strip() == self.params["body"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(rid="compose")
        for rid in ("to", "subject", "body"):
            yield from ui.type_into(rid, self.params[rid])
        yield from ui.tap(rid="send")


class MailArchive(Task):
    """Archive one email from the inbox."""

    template = "Archive the email \"{subject}\"."
    app_names = ("mail",)
    complexity = 3.0
    schema = {"subject": Param(str, choices=SEEDED)}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].folder" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def setup(self, phone: MockPhone) -> None:
        _seed_mail(phone, self.params["subject"])

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.folder == "archive")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="archive")


class MailDelete(Task):
    """Delete (move to trash) one email."""

    template = "Delete the email \"{subject}\"."
    app_names = ("mail",)
    complexity = 3.0
    schema = {"subject": Param(str, choices=SEEDED)}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].folder" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def setup(self, phone: MockPhone) -> None:
        _seed_mail(phone, self.params["subject"])

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.folder == "trash")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="delete")


class MailStar(Task):
    """Star one email."""

    template = "Star the email \"{subject}\"."
    app_names = ("mail",)
    complexity = 3.0
    schema = {"subject": Param(str, choices=SEEDED)}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].starred" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def setup(self, phone: MockPhone) -> None:
        _seed_mail(phone, self.params["subject"])

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.starred)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="star")


class MailReply(Task):
    """Reply to an email: the reply must go to the sender with a "Re:" subject."""

    template = "Reply to the email \"{subject}\" with \"{body}\"."
    app_names = ("mail",)
    complexity = 4.0
    allowed = ('mail.emails[+1]*',)
    schema = {"subject": Param(str, choices=SEEDED), "body": Param(str, choices=BODIES)}

    def setup(self, phone: MockPhone) -> None:
        _seed_mail(phone, self.params["subject"])

    def check(self, phone: MockPhone) -> float:
        sent = [e for e in phone.state("mail").sent() if e.subject == f"Re: {self.params['subject']}"]
        return fraction(bool(sent), bool(sent) and sent[-1].to == "office@example.com",
                        bool(sent) and sent[-1].body.strip() == self.params["body"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="reply")
        yield from ui.type_into("body", self.params["body"])
        yield from ui.tap(rid="send")


class MailRestoreFromTrash(Task):
    """Find an email in Trash and move it back to the inbox."""

    template = "Restore the email \"{subject}\" from the trash to my inbox."
    app_names = ("mail",)
    complexity = 4.0
    schema = {"subject": Param(str, choices=SEEDED)}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].folder" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def setup(self, phone: MockPhone) -> None:
        _seed_mail(phone, self.params["subject"])
        phone.app("mail").state.by_subject(self.params["subject"]).folder = "trash"

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.folder == "inbox")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(rid="folder_trash")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="restore")


class MailAnswerCode(Task):
    """Information retrieval: read a reset code out of an email and answer with it."""

    template = "What is the password reset code in my email? Answer with the code."
    app_names = ("mail",)
    complexity = 3.0
    changes_state = False
    schema = {}

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("mail").state
        code = str(100000 + phone.seed * 7919 % 900000)
        state.emails = [e for e in state.emails if e.subject != "Password reset"]
        state.emails.append(Email(99, "security@example.com", state.me, "Password reset",
                                  f"Use code {code} to reset your password."))

    def check(self, phone: MockPhone) -> float:
        body = phone.state("mail").by_subject("Password reset").body
        code = body.split("code ")[1].split()[0]
        return float(answers.only(re.findall(r"\w*\d\w*", final_answer(phone) or ""), code))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text="Password reset")
        body = ui.find(rid="body").text
        yield Action("answer", text=body.split("code ")[1].split()[0])


class BankTransferToSavings(Task):
    """Move an amount from checking to savings (confirmation dialog)."""

    template = "Transfer ${amount} from checking to savings."
    app_names = ("bank",)
    complexity = 4.0
    allowed = ('bank.balances[Checking]', 'bank.balances[Savings]', 'bank.history[+1]*')
    schema = {"amount": Param(int, choices=(50, 120, 300, 1000), min=1, max=10000)}

    def setup(self, phone: MockPhone) -> None:
        self._balances = dict(phone.app("bank").state.balances)

    def check(self, phone: MockPhone) -> float:
        b = phone.state("bank").balances
        cents = self.params["amount"] * 100
        start = self._balances
        return float(b["Checking"] == start["Checking"] - cents and b["Savings"] == start["Savings"] + cents)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("bank")
        yield from ui.tap(rid="transfer")
        yield from ui.type_into("amount", str(self.params["amount"]))
        yield from ui.tap(rid="continue")
        yield from ui.tap(text="TRANSFER")


class BankTransferToChecking(Task):
    """Move an amount from savings back to checking (pick the source account first)."""

    template = "Move ${amount} from my savings account to checking."
    app_names = ("bank",)
    complexity = 5.0
    allowed = ('bank.balances[Checking]', 'bank.balances[Savings]', 'bank.history[+1]*')
    schema = {"amount": Param(int, choices=(75, 200, 450), min=1, max=10000)}

    def setup(self, phone: MockPhone) -> None:
        self._balances = dict(phone.app("bank").state.balances)

    def check(self, phone: MockPhone) -> float:
        b = phone.state("bank").balances
        cents = self.params["amount"] * 100
        start = self._balances
        return float(b["Savings"] == start["Savings"] - cents and b["Checking"] == start["Checking"] + cents)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("bank")
        yield from ui.tap(rid="transfer")
        yield from ui.tap(rid="from_savings")
        yield from ui.type_into("amount", str(self.params["amount"]))
        yield from ui.tap(rid="continue")
        yield from ui.tap(text="TRANSFER")


class BankPayPerson(Task):
    """Send money to a payee with a memo."""

    template = "Send ${amount} to the first payee in my bank app with the memo \"{memo}\"."
    app_names = ("bank",)
    complexity = 5.0
    allowed = ('bank.balances[Checking]', 'bank.history[+1]*')
    schema = {"amount": Param(int, choices=(15, 40, 85), min=1, max=10000),
              "memo": Param(str, choices=("Dinner", "Concert tickets", "Rent share"))}

    def check(self, phone: MockPhone) -> float:
        state = phone.state("bank")
        want = f"To {state.payees[0]}: {self.params['memo']}"
        paid = [t for t in state.history if t.kind == "payment"]
        return fraction(len(paid) == 1 and paid[0].amount == -self.params["amount"] * 100,
                        len(paid) == 1 and paid[0].description == want)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("bank")
        yield from ui.tap(rid="send_money")
        first = ui.find_all("payee_row")[0]
        yield from ui.tap(text=next(e.text for e in ui.elements() if e.parent == first.index))
        yield from ui.type_into("amount", str(self.params["amount"]))
        yield from ui.type_into("memo", self.params["memo"])
        yield from ui.tap(rid="send")
        yield from ui.tap(text="SEND")


class BankAnswerBalance(Task):
    """Information retrieval: report an account balance."""

    template = "How much money is in my {account} account? Answer with the amount."
    app_names = ("bank",)
    complexity = 2.0
    changes_state = False
    schema = {"account": Param(str, choices=("Checking", "Savings"))}

    def check(self, phone: MockPhone) -> float:
        want = phone.state("bank").balances[self.params["account"]] / 100
        return float(answers.only(answers.numbers(final_answer(phone)), want))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("bank")
        row = ui.find(rid=f"account_{self.params['account'].lower()}")
        amount = next(e.text for e in ui.elements() if e.parent == row.index and e.resource_id == "android:id/text2")
        yield Action("answer", text=amount)


TASKS = (
    BankAnswerBalance, BankPayPerson, BankTransferToChecking, BankTransferToSavings, MailAnswerCode, MailArchive,
    MailDelete, MailReply, MailRestoreFromTrash, MailSend, MailStar,
)
