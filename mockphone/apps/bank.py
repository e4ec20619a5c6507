"""Bank: account balances, transfers between own accounts, payments to people, history.

Money is kept in integer cents; every money movement goes through a confirmation dialog.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mockphone import widgets as ui
from mockphone.apps import data
from mockphone.apps.base import App
from mockphone.widgets import Page, View

ACCOUNTS = ("Checking", "Savings")


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def parse_amount(text: str) -> int | None:
    """'12', '12.5', '$1,200.00' -> cents; None if it is not a positive amount."""
    cleaned = text.strip().lstrip("$").replace(",", "")
    try:
        whole, _, frac = cleaned.partition(".")
        cents = int(whole or "0") * 100 + (int((frac + "00")[:2]) if frac else 0)
    except ValueError:
        return None
    return cents if cents > 0 and len(frac) <= 2 else None


@dataclass
class Transaction:
    kind: str  # transfer, payment, card
    description: str
    amount: int  # cents, negative = money out of checking
    account: str = "Checking"


@dataclass
class BankState:
    balances: dict[str, int] = field(default_factory=dict)
    payees: list[str] = field(default_factory=list)
    history: list[Transaction] = field(default_factory=list)


class BankApp(App):
    name = "bank"
    package = "com.phoneloop.bank"
    label = "Bank"
    aliases = ("payments", "wallet")
    color = "#174ea6"
    permissions = ("Allow Bank to send you notifications?",)

    def initial_state(self, rng: random.Random) -> BankState:
        """The seed's accounts (``mockphone.world.bank``), in the phone's language."""
        w = data.world_of(self.phone).bank
        return BankState(balances={"Checking": w.checking, "Savings": w.savings}, payees=list(w.payees),
                         history=[Transaction("card", shop, -cents) for shop, cents in w.card_payments])

    def page_main(self, page: Page) -> View:
        rows = [ui.item(a, "Available balance", rid=f"account_{a.lower()}", trailing=money(self.state.balances[a]))
                for a in ACCOUNTS]
        return View("Bank", body=(
            *rows,
            ui.button("Transfer between accounts", lambda: self.push("transfer"), rid="transfer"),
            ui.button("Send money", lambda: self.push("payees"), rid="send_money", style="outline"),
            ui.button("Recent activity", lambda: self.push("history"), rid="history", style="outline"),
        ))

    def page_transfer(self, page: Page) -> View:
        src = page.args.setdefault("from", "Checking")
        pick = ui.row(*(ui.chip(f"From {a}", a == src, (lambda a=a: page.args.__setitem__("from", a)),
                                rid=f"from_{a.lower()}") for a in ACCOUNTS))
        dst = ACCOUNTS[1] if src == ACCOUNTS[0] else ACCOUNTS[0]
        return View("Transfer", up=True, body=(
            pick, ui.text(f"To: {dst}", rid="to_account"),
            ui.edit("amount", page.field("amount"), hint="Amount ($)"),
        ), footer=(ui.button("Continue", lambda: self._confirm_transfer(page, src, dst), rid="continue"),))

    def _confirm_transfer(self, page: Page, src: str, dst: str) -> None:
        cents = parse_amount(page.field("amount"))
        if cents is None or cents > self.state.balances[src]:
            self.dialog("Invalid amount", "Enter a positive amount you have available.", rid="invalid_amount")
            return
        self.dialog("Confirm transfer", f"Move {money(cents)} from {src} to {dst}?",
                    (("Cancel", None), ("Transfer", lambda: self._transfer(src, dst, cents))), rid="confirm_transfer")

    def _transfer(self, src: str, dst: str, cents: int) -> None:
        self.state.balances[src] -= cents
        self.state.balances[dst] += cents
        self.state.history.append(Transaction("transfer", f"{src} → {dst}", -cents, src))
        self.back()
        self.toast("Transfer complete")

    def page_payees(self, page: Page) -> View:
        rows = [ui.item(p, "Payee", rid="payee_row", on_tap=(lambda p=p: self.push("pay", payee=p)))
                for p in self.state.payees]
        return View("Send money", up=True, body=tuple(rows))

    def page_pay(self, page: Page) -> View:
        payee = page.args["payee"]
        return View(f"Pay {payee}", up=True, body=(
            ui.edit("amount", page.field("amount"), hint="Amount ($)"),
            ui.edit("memo", page.field("memo"), hint="What's it for? (optional)"),
        ), footer=(ui.button("Send", lambda: self._confirm_pay(page, payee), rid="send"),))

    def _confirm_pay(self, page: Page, payee: str) -> None:
        cents = parse_amount(page.field("amount"))
        if cents is None or cents > self.state.balances["Checking"]:
            self.dialog("Invalid amount", "Enter a positive amount you have available.", rid="invalid_amount")
            return
        memo = page.field("memo").strip()
        self.dialog("Send money?", f"Send {money(cents)} to {payee} from Checking?",
                    (("Cancel", None), ("Send", lambda: self._pay(payee, cents, memo))), rid="confirm_payment")

    def _pay(self, payee: str, cents: int, memo: str) -> None:
        self.state.balances["Checking"] -= cents
        self.state.history.append(Transaction("payment", f"To {payee}" + (f": {memo}" if memo else ""), -cents))
        self.phone.nav.stacks[self.package] = [Page("main")]
        self.toast("Money sent")

    def page_history(self, page: Page) -> View:
        rows = [ui.item(t.description, t.kind.capitalize(), rid="transaction_row", trailing=money(abs(t.amount)))
                for t in reversed(self.state.history)]
        return View("Recent activity", up=True, body=tuple(rows))
