"""Mail and Bank tasks."""

from __future__ import annotations

import random
import re

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.apps.mail import Email
from mockphone.tasks import endings as ends
from mockphone.tasks import answers, statediff
from mockphone.tasks.base import Param, Task, fraction, final_answer
from mockphone.tasks.comm_tasks import AlsoAnother

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

RECIPIENTS = ("hr@example.com", "boss@example.com", "landlord@example.com")
SUBJECTS = ("Schedule update", "Rent receipt", "Conference travel")
BODIES = ("See you on Monday.", "Please confirm by Friday.", "Thanks for your help!")


REPLIES = ("See you on Monday.", "Please confirm by Friday.", "Thanks for your help!", "Sounds good, thanks.",
           "I will take a look today.", "Count me in.", "Can we talk tomorrow?", "Got it, thank you!")
REPLIES_ZH = ("周一见。", "请在周五前确认。", "谢谢你的帮忙！", "好的，谢谢。", "我今天就看一下。", "算我一个。", "明天聊聊可以吗？",
              "收到，谢谢！")


def _world(world):
    from mockphone import world as worlds

    return world if world is not None else worlds.generate(0)


def inbox_subject(rng: random.Random, world=None) -> str:
    """The subject of one email of the seed's inbox (``mockphone.world.mail``)."""
    return rng.choice(_world(world).mail).subject


def ensure_mail(phone: MockPhone, subject: str, world=None) -> Email:
    """The email titled ``subject`` on ``phone``, planted if missing (as ``world``'s inbox has it, when it does)."""
    state = phone.app("mail").state
    found = state.by_subject(subject)
    if found is None:
        seeded = next((e for e in _world(world).mail if e.subject == subject), None) if world is not None else None
        found = Email(max((e.eid for e in state.emails), default=-1) + 1,
                      seeded.sender if seeded else "office@example.com", state.me, subject,
                      seeded.body if seeded else f"About: {subject}.")
        state.emails.append(found)
    return found


class _InboxTask(AlsoAnother):
    """A task on one email of the seed's inbox, named by its subject."""

    also = ("subject", "email")
    schema = {"subject": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"subject": inbox_subject(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_mail(phone, self.params["subject"], self.world)


class MailSend(Task):
    """Compose and send an email (recipient, subject, body each count)."""

    swaps = (("to", ends.choice("to")), ("subject", ends.choice("subject")))
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


class MailArchive(_InboxTask):
    """Archive one email from the inbox."""

    template = "Archive the email \"{subject}\"."
    app_names = ("mail",)
    complexity = 3.0
    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].folder" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.folder == "archive")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="archive")


class MailDelete(_InboxTask):
    """Delete (move to trash) one email."""

    template = "Delete the email \"{subject}\"."
    app_names = ("mail",)
    complexity = 3.0
    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].folder" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.folder == "trash")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="delete")


class MailStar(_InboxTask):
    """Star one email."""

    template = "Star the email \"{subject}\"."
    app_names = ("mail",)
    complexity = 3.0
    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].starred" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.starred)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="star")


class MailReply(AlsoAnother):
    """Reply to an email: the reply must go to the sender with a "Re:" subject."""

    template = "Reply to the email \"{subject}\" with \"{body}\"."
    app_names = ("mail",)
    complexity = 4.0
    allowed = ('mail.emails[+1]*',)
    also = ("subject", "email")
    schema = {"subject": Param(str), "body": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"subject": inbox_subject(rng, world), "body": rng.choice(REPLIES_ZH if _world(world).zh else REPLIES)}

    def setup(self, phone: MockPhone) -> None:
        ensure_mail(phone, self.params["subject"], self.world)

    def check(self, phone: MockPhone) -> float:
        state = phone.state("mail")
        sender = state.by_subject(self.params["subject"]).sender  # the reply goes back to whoever wrote
        sent = [e for e in state.sent() if e.subject == f"Re: {self.params['subject']}"]
        return fraction(bool(sent), bool(sent) and sent[-1].to == sender,
                        bool(sent) and sent[-1].body.strip() == self.params["body"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="reply")
        yield from ui.type_into("body", self.params["body"])
        yield from ui.tap(rid="send")


class MailRestoreFromTrash(_InboxTask):
    """Find an email in Trash and move it back to the inbox (one of the seed's inbox, deleted)."""

    template = "Restore the email \"{subject}\" from the trash to my inbox."
    app_names = ("mail",)
    also = ()  # another inbox email is not in the trash: restoring it is no action
    complexity = 4.0

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"mail.emails[{k}].folder" for k in statediff.keys_where(start, "mail.emails", "subject", self.params["subject"])]

    def setup(self, phone: MockPhone) -> None:
        ensure_mail(phone, self.params["subject"], self.world).folder = "trash"

    def check(self, phone: MockPhone) -> float:
        e = phone.state("mail").by_subject(self.params["subject"])
        return float(e is not None and e.folder == "inbox")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("mail")
        yield from ui.tap(rid="folder_trash")
        yield from ui.tap(text=self.params["subject"])
        yield from ui.tap(rid="restore")

    def wrong_endings(self) -> dict:
        def reopened(then: str):
            return lambda t: lambda ui: (a for step in (ui.open("mail"), ui.tap(rid="folder_inbox"),
                                                        ui.tap(text=t.params["subject"]),
                                                        ui.tap(rid=then)) for a in step)

        return {"restored-then-archived": ends.after(reopened("archive")),
                "restored-and-starred-it": ends.after(reopened("star"))}


class MailAnswerCode(Task):
    """Information retrieval: read a reset code out of an email and answer with it."""

    wrong_answers = (("misread", ends.misread), ("transposed", ends.transposed))
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


def _amount(rng: random.Random) -> int:
    """A whole-dollar transfer amount: round sums more often, odd ones too."""
    return rng.choice((rng.randrange(50, 1501, 50), rng.randrange(20, 1000, 5), rng.randint(10, 800)))


def _afford(phone: MockPhone, account: str, dollars: int) -> dict[str, int]:
    """Make ``account`` hold at least ``dollars`` (plus a margin) and return the start balances."""
    balances = phone.app("bank").state.balances
    if balances[account] < dollars * 100 + 10_000:
        balances[account] += dollars * 100 + 10_000
    return dict(balances)


class BankTransferToSavings(Task):
    """Move an amount from checking to savings (confirmation dialog)."""

    template = "Transfer ${amount} from checking to savings."
    app_names = ("bank",)
    complexity = 4.0
    allowed = ('bank.balances[Checking]', 'bank.balances[Savings]', 'bank.history[+1]*')
    schema = {"amount": Param(int, min=1, max=10000)}
    near_misses = (("a-dollar-less", lambda p: {"amount": max(1, p["amount"] - 1)}),
                   ("a-dollar-more", lambda p: {"amount": p["amount"] + 1}))

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"amount": _amount(rng)}

    def setup(self, phone: MockPhone) -> None:
        self._balances = _afford(phone, "Checking", self.params["amount"])

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
    schema = {"amount": Param(int, min=1, max=10000)}
    near_misses = (("a-dollar-less", lambda p: {"amount": max(1, p["amount"] - 1)}),
                   ("a-dollar-more", lambda p: {"amount": p["amount"] + 1}))

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"amount": _amount(rng)}

    def setup(self, phone: MockPhone) -> None:
        self._balances = _afford(phone, "Savings", self.params["amount"])

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
    near_misses = (("a-dollar-less", lambda p: {"amount": max(1, p["amount"] - 1)}),
                   ("other-memo", lambda p: {"memo": next(m for m in ("Dinner", "Rent share") if m != p["memo"])}))

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


def _balance(phone: MockPhone, account: str, delta_cents: int = 0) -> str:
    return f"${(phone.state('bank').balances[account] + delta_cents) / 100:,.2f}"


class BankAnswerBalance(Task):
    """Information retrieval: report an account balance."""

    template = "How much money is in my {account} account? Answer with the amount."
    app_names = ("bank",)
    complexity = 2.0
    changes_state = False
    schema = {"account": Param(str, choices=("Checking", "Savings"))}
    wrong_answers = (("other-account", lambda t, phone: _balance(phone, "Savings" if t.params["account"] == "Checking"
                                                                 else "Checking")),
                     ("a-dollar-off", lambda t, phone: _balance(phone, t.params["account"], -100)))

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
