"""Tasks of the SuperApp's express-delivery and utility-bills mini-programs (``mockphone.apps.miniapps``).

Parameters come from the seed's parcels and bills (``mockphone.world.miniapps``): which
item, which tracking number, which account, which amount. A parcel a task names is planted
on a phone whose world lacks it. Every template has its wrong-but-plausible endings as code.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks.base import Param, Task, final_answer
from mockphone.tasks.endings import answer, ending
from mockphone.tasks.miniapp_tasks import BILL_CHANGES, SHIPMENTS, _world, minis, open_mini, records, said, \
    said_number, seq
from mockphone.world.miniapps import BILLS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI
    from mockphone.world import World


# --- express delivery --------------------------------------------------------------

def ensure_parcel(phone: MockPhone, task: Task, item: str):
    from mockphone.apps.miniapps import Parcel

    state = minis(phone)
    found = next((p for p in state.parcels if p.item == item), None)
    if found is None:
        wp = next(p for p in task.world.parcels if p.item == item)
        found = Parcel(wp.number, wp.courier, wp.item, wp.status)
        state.parcels.append(found)
    return found


def open_parcel(ui: UI, item: str) -> Iterator[Action]:
    yield from open_mini(ui, "express")
    yield from ui.tap(text=item)


def _item(rng: random.Random, world: World | None) -> str:
    return rng.choice(_world(world).parcels).item


class ExpressAnswerTrackingNumber(Task):
    """Read the tracking number of one of my parcels."""

    wrong_answers = (("a-digit-off", ends.misread),)
    template = "What is the tracking number of my {item} parcel in the SuperApp express-delivery mini-program?"
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 3.0
    changes_state = False
    schema = {"item": Param(str, doc="the item of one of the seed's parcels")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"item": _item(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_parcel(phone, self, self.params["item"])

    def check(self, phone: MockPhone) -> float:
        number = next(p.number for p in minis(phone).parcels if p.item == self.params["item"])
        return float(answers.norm(final_answer(phone)) == answers.norm(number))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_parcel(ui, self.params["item"])
        yield Action("answer", text=ui.find(rid="tracking_no").text)

    def wrong_endings(self) -> dict:
        def other(t):
            return lambda ui: answer(next(p.number for p in minis(ui.phone).parcels if p.item != t.params["item"]))
        return {"another-parcel-s-number": ending(other)}


class ExpressTrackStatus(Task):
    """Track a parcel by its number and answer its status."""

    template = "Track parcel {number} in the SuperApp express-delivery mini-program. What is its status?"
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 4.0
    changes_state = False
    schema = {"number": Param(str, doc="the tracking number of one of the seed's parcels")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"number": rng.choice(_world(world).parcels).number}

    def setup(self, phone: MockPhone) -> None:
        from mockphone.apps.miniapps import Parcel

        if minis(phone).parcel(self.params["number"]) is None:
            wp = next(p for p in self.world.parcels if p.number == self.params["number"])
            minis(phone).parcels.append(Parcel(wp.number, wp.courier, wp.item, wp.status))

    def check(self, phone: MockPhone) -> float:
        return float(said(phone, minis(phone).parcel(self.params["number"]).status))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_mini(ui, "express")
        yield from ui.type_into("tracking", self.params["number"])
        yield from ui.tap(rid="track")
        yield Action("answer", text=ui.find(rid="parcel_status").text)

    def wrong_endings(self) -> dict:
        def courier(t):
            return lambda ui: answer(minis(ui.phone).parcel(t.params["number"]).courier)

        def wrong_status(t):
            def script(ui):
                from mockphone.world.miniapps import STATUSES

                mine = minis(ui.phone).parcel(t.params["number"]).status
                yield from answer(next(x for x in STATUSES if x != mine))
            return script
        return {"answered-the-courier": ending(courier), "another-status": ending(wrong_status)}


class ExpressConfirmReceipt(Task):
    """Confirm the receipt of one delivered parcel (another parcel is delivered too)."""

    template = "Confirm receipt of my delivered {item} parcel in the SuperApp express-delivery mini-program."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 4.0
    allowed = ("superapp.minis.parcels*",)
    schema = {"item": Param(str, doc="the item of one of the seed's parcels")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"item": _item(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_parcel(phone, self, self.params["item"]).status = "Delivered"
        decoy = next(p for p in minis(phone).parcels if p.item != self.params["item"])
        decoy.status = "Delivered"

    def check(self, phone: MockPhone) -> float:
        before = {r["item"]: r["status"] for r in records(self.start_state(phone), "superapp.minis.parcels")}
        want = {**before, self.params["item"]: "Received"}
        return float({p.item: p.status for p in minis(phone).parcels} == want)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_parcel(ui, self.params["item"])
        yield from ui.tap(rid="confirm_receipt")
        yield from ui.tap(text="CONFIRM")

    def wrong_endings(self) -> dict:
        def decoy(t):
            def script(ui):
                other = next(p.item for p in minis(ui.phone).parcels if p.item != t.params["item"]
                             and p.status == "Delivered")
                yield from open_parcel(ui, other)
                yield from ui.tap(rid="confirm_receipt")
                yield from ui.tap(text="CONFIRM")
            return script

        def both(t):
            return seq(lambda ui: t.oracle(ui), lambda ui: ui.tap(rid="capsule_close"), decoy(t))
        return {"the-other-delivered-parcel": ending(decoy), "confirmed-both": ending(both)}


class ExpressSendParcel(Task):
    """Book a parcel pickup to a contact: the form needs a recipient, a phone number and an address."""

    template = ("In the SuperApp express-delivery mini-program, send a parcel to {name} (phone {phone}) at "
                "{address}.")
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 6.0
    allowed = SHIPMENTS
    schema = {"name": Param(str), "phone": Param(str), "address": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        w = _world(world)
        person = rng.choice(w.people)
        return {"name": person.name, "phone": person.phone, "address": rng.choice(w.places).address}

    def check(self, phone: MockPhone) -> float:
        s = minis(phone).shipments
        return float(len(s) == 1 and (s[0].recipient, answers.phone_numbers(s[0].phone) or [s[0].phone],
                                      s[0].address) == (self.params["name"], answers.phone_numbers(
                                          self.params["phone"]) or [self.params["phone"]], self.params["address"]))

    def _send(self, ui: UI, address: str, phone: str) -> Iterator[Action]:
        yield from open_mini(ui, "express")
        yield from ui.tap(rid="send_parcel")
        yield from ui.type_into("recipient", self.params["name"])
        if phone:
            yield from ui.type_into("phone", phone)
        yield from ui.type_into("address", address)
        yield from ui.tap(rid="book_pickup")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._send(ui, self.params["address"], self.params["phone"])

    def wrong_endings(self) -> dict:
        def other_address(t):
            other = next(p.address for p in t.world.places if p.address != t.params["address"])
            return lambda ui: t._send(ui, other, t.params["phone"])
        return {"sent-it-twice": ends.after(lambda t: lambda ui: t._send(ui, t.params["address"], t.params["phone"])),
                "another-address": ending(other_address)}


# --- utility bills -----------------------------------------------------------------

def open_bill(ui: UI, kind: str) -> Iterator[Action]:
    yield from open_mini(ui, "utility")
    yield from ui.tap(text=kind)


def other_bill(kind: str) -> str:
    return BILLS[(BILLS.index(kind) + 1) % len(BILLS)]


def pay(ui: UI, kind: str) -> Iterator[Action]:
    yield from open_bill(ui, kind)
    yield from ui.tap(rid="pay_bill")
    yield from ui.tap(text="PAY")


class UtilityPayBill(Task):
    """Pay one utility bill in full."""

    template = "Pay my {kind} bill in the SuperApp utility-bills mini-program."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 4.0
    allowed = BILL_CHANGES
    schema = {"kind": Param(str, choices=BILLS)}

    def check(self, phone: MockPhone) -> float:
        m = minis(phone)
        due = next(r["due"] for r in records(self.start_state(phone), "superapp.minis.bills")
                   if r["kind"] == self.params["kind"])
        return float([(p.kind, p.amount) for p in m.payments] == [(self.params["kind"], due)])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from pay(ui, self.params["kind"])

    def wrong_endings(self) -> dict:
        return {"another-bill": ending(lambda t: lambda ui: pay(ui, other_bill(t.params["kind"]))),
                "topped-up-instead": ending(lambda t: lambda ui: top_up(ui, t.params["kind"], 100))}


def top_up(ui: UI, kind: str, amount: int) -> Iterator[Action]:
    yield from open_bill(ui, kind)
    yield from ui.tap(rid="top_up")
    yield from ui.type_into("amount", str(amount))
    yield from ui.tap(rid="pay_topup")


class UtilityTopUp(Task):
    """Top up a utility account by an amount (the form takes whole ¥10-1000)."""

    template = "Top up my {kind} account by ¥{amount} in the SuperApp utility-bills mini-program."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 5.0
    allowed = BILL_CHANGES
    schema = {"kind": Param(str, choices=BILLS), "amount": Param(int, min=10, max=1000)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"kind": rng.choice(BILLS), "amount": rng.choice(range(20, 510, 10))}

    def check(self, phone: MockPhone) -> float:
        m = minis(phone)
        return float([(p.kind, p.amount) for p in m.payments] == [(self.params["kind"], self.params["amount"])]
                     and m.bill(self.params["kind"]).credit == self.params["amount"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from top_up(ui, self.params["kind"], self.params["amount"])

    def wrong_endings(self) -> dict:
        return {"another-account": ending(lambda t: lambda ui: top_up(ui, other_bill(t.params["kind"]),
                                                                      t.params["amount"])),
                "paid-the-bill-instead": ending(lambda t: lambda ui: pay(ui, t.params["kind"]))}


class UtilityAnswerDue(Task):
    """Read how much is due on one bill."""

    wrong_answers = (("a-digit-off", ends.misread),)
    template = "How much do I owe on my {kind} bill in the SuperApp utility-bills mini-program? Answer with the amount."
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 3.0
    changes_state = False
    schema = {"kind": Param(str, choices=BILLS)}

    def check(self, phone: MockPhone) -> float:
        return float(said_number(phone, minis(phone).bill(self.params["kind"]).due))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_bill(ui, self.params["kind"])
        yield Action("answer", text=ui.find(rid="bill_due").text.split("¥")[-1])

    def wrong_endings(self) -> dict:
        return {"another-bill-s-amount": ending(lambda t: lambda ui: answer(
            str(minis(ui.phone).bill(other_bill(t.params["kind"])).due)))}


class UtilityAnswerAccount(Task):
    """Read the account number of one utility account."""

    wrong_answers = (("a-digit-off", ends.misread),)
    template = "What is my {kind} account number in the SuperApp utility-bills mini-program?"
    app_names = ("superapp",)
    category = "mini-app"
    complexity = 3.0
    changes_state = False
    schema = {"kind": Param(str, choices=BILLS)}

    def check(self, phone: MockPhone) -> float:
        return float(answers.norm(final_answer(phone)) == minis(phone).bill(self.params["kind"]).account)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_bill(ui, self.params["kind"])
        yield Action("answer", text=ui.find(rid="account_no").text)

    def wrong_endings(self) -> dict:
        return {"another-account-s-number": ending(lambda t: lambda ui: answer(
            minis(ui.phone).bill(other_bill(t.params["kind"])).account))}


TASKS = (
    ExpressAnswerTrackingNumber, ExpressConfirmReceipt, ExpressSendParcel, ExpressTrackStatus, UtilityAnswerAccount,
    UtilityAnswerDue, UtilityPayBill, UtilityTopUp,
)
