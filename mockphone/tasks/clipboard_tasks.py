"""The seed article's second case as a family: stale clipboard text pasted instead of the new value.

PhoneBuddy-4B-SFT created the document but pasted what was already on the clipboard, not
the text it had just generated. Each template here carries a value out of (or into) a
SuperApp mini-program while the clipboard already holds an older value of the same kind
(another parcel's tracking number, the other ticket's pickup code, another account's
number, another place's address): the agent must copy the new one before pasting. The
ending that pastes the stale value scores 0, and so does copying the wrong record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from datalake.types import Action
from mockphone.tasks.base import Param, Task
from mockphone.tasks.comm_tasks import ensure_person, pick_name, search_key
from mockphone.tasks.endings import ending
from mockphone.tasks.maps_tasks import ensure_place, pick_place
from mockphone.tasks.miniapp_tasks import RIDES, _world, ensure_ticket, minis, one_ride, open_mini, other_kind, seq
from mockphone.tasks.services_tasks import ensure_parcel, open_bill, open_parcel, other_bill
from mockphone.tasks.travel_tasks import copy_address, stale_address
from mockphone.world.miniapps import BILLS
from mockphone.world.places import KINDS

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

STALE = "pasted-the-stale-clipboard"
NOTE = "Movie tickets"


def paste_text(ui: UI, name: str) -> Iterator[Action]:
    """Open Messages, start a chat with ``name``, paste the clipboard into the message and send it."""
    yield from ui.open("messages")
    yield from ui.tap(rid="start_chat")
    yield from ui.type_into("to", search_key(name))
    yield from ui.tap(text=name)
    yield from ui.long_press(rid="compose")
    yield from ui.tap(rid="send")


def sent(phone: MockPhone, name: str, value: str, stale: str) -> bool:
    texts = phone.state("messages").sent_to(name)
    return len(texts) == 1 and value in texts[0] and stale not in texts[0]


class CrossParcelNumberToMessage(Task):
    """Copy a parcel's tracking number in the express mini-program and text it (another number is on the clipboard)."""

    template = "Text {name} the tracking number of my {item} parcel from the SuperApp express-delivery mini-program."
    app_names = ("superapp", "messages")
    category = "cross-app"
    complexity = 9.0
    allowed = ("messages.threads[{name}][+1]*", "system.clipboard")
    schema = {"item": Param(str, doc="the item of one of the seed's parcels"), "name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"item": rng.choice(_world(world).parcels).item, "name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_person(phone, self.params["name"], self.world)
        ensure_parcel(phone, self, self.params["item"])
        phone.system.clipboard = self._other(phone)  # copied earlier: another parcel's number

    def _other(self, phone: MockPhone) -> str:
        return next(p.number for p in minis(phone).parcels if p.item != self.params["item"])

    def check(self, phone: MockPhone) -> float:
        number = next(p.number for p in minis(phone).parcels if p.item == self.params["item"])
        return float(sent(phone, self.params["name"], number, self._other(phone)))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from open_parcel(ui, self.params["item"])
        yield from ui.long_press(rid="tracking_no")
        yield from paste_text(ui, self.params["name"])

    def wrong_endings(self) -> dict:
        def other(t):
            def script(ui):
                item = next(p.item for p in minis(ui.phone).parcels
                            if p.item != t.params["item"] and p.number != ui.phone.system.clipboard)
                yield from open_parcel(ui, item)
                yield from ui.long_press(rid="tracking_no")
                yield from paste_text(ui, t.params["name"])
            return script
        return {STALE: ending(lambda t: lambda ui: paste_text(ui, t.params["name"])),
                "copied-another-parcel": ending(other)}


class CrossTicketCodeToNote(Task):
    """Copy a ticket's pickup code into a new note (the other ticket's code is on the clipboard)."""

    template = "Save the pickup code of my {film} movie ticket (SuperApp movie-tickets mini-program) in a new note titled \"Movie tickets\"."
    app_names = ("superapp", "notes")
    category = "cross-app"
    complexity = 8.0
    allowed = (f"notes.notes[{NOTE}].*", "system.clipboard")
    schema = {"film": Param(str, doc="the film of one of the seed's earlier tickets")}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"film": rng.choice(_world(world).movie_tickets).film}

    def setup(self, phone: MockPhone) -> None:
        ensure_ticket(phone, self, self.params["film"])
        phone.system.clipboard = self._other(phone)

    def _other(self, phone: MockPhone) -> str:
        return next(t.code for t in minis(phone).tickets if t.film != self.params["film"])

    def check(self, phone: MockPhone) -> float:
        code = next(t.code for t in minis(phone).tickets if t.film == self.params["film"])
        note = phone.state("notes").find(NOTE)
        return float(note is not None and code in note.body and self._other(phone) not in note.body)

    def _note(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("notes")
        yield from ui.tap(rid="new_note")
        yield from ui.type_into("title", NOTE)
        yield from ui.long_press(rid="body")
        yield from ui.tap(rid="save")

    def _copy(self, ui: UI, film: str) -> Iterator[Action]:
        from mockphone.tasks.miniapp_tasks import code_of

        yield from open_mini(ui, "movie")
        yield from ui.tap(rid="my_tickets")
        yield from ui.long_press(text=code_of(ui, film))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._copy(ui, self.params["film"])
        yield from self._note(ui)

    def wrong_endings(self) -> dict:
        def other(t):
            def script(ui):
                film = next(x.film for x in minis(ui.phone).tickets if x.film != t.params["film"])
                yield from t._copy(ui, film)
                yield from t._note(ui)
            return script
        return {STALE: ending(lambda t: t._note), "copied-the-other-ticket": ending(other)}


class CrossUtilityAccountToMessage(Task):
    """Copy a utility account number and text it (another account's number is on the clipboard)."""

    template = "Text {name} my {kind} account number from the SuperApp utility-bills mini-program."
    app_names = ("superapp", "messages")
    category = "cross-app"
    complexity = 8.0
    allowed = ("messages.threads[{name}][+1]*", "system.clipboard")
    schema = {"kind": Param(str, choices=BILLS), "name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"kind": rng.choice(BILLS), "name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        ensure_person(phone, self.params["name"], self.world)
        phone.system.clipboard = minis(phone).bill(other_bill(self.params["kind"])).account

    def check(self, phone: MockPhone) -> float:
        m = minis(phone)
        return float(sent(phone, self.params["name"], m.bill(self.params["kind"]).account,
                          m.bill(other_bill(self.params["kind"])).account))

    def _copy(self, ui: UI, kind: str) -> Iterator[Action]:
        yield from open_bill(ui, kind)
        yield from ui.long_press(rid="account_no")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from self._copy(ui, self.params["kind"])
        yield from paste_text(ui, self.params["name"])

    def wrong_endings(self) -> dict:
        third = lambda k: next(b for b in BILLS if b not in (k, other_bill(k)))  # noqa: E731
        return {STALE: ending(lambda t: lambda ui: paste_text(ui, t.params["name"])),
                "copied-another-account": ending(lambda t: seq(lambda ui: t._copy(ui, third(t.params["kind"])),
                                                               lambda ui: paste_text(ui, t.params["name"])))}


class CrossMapsAddressToMiniRide(Task):
    """Copy a place's address in Maps and paste it into the ride mini-program (an older address is on the clipboard)."""

    template = "Find {place} in Maps, copy its address and request an {kind} ride there in the SuperApp ride-hailing mini-program."
    app_names = ("maps", "superapp")
    category = "cross-app"
    complexity = 9.0
    allowed = (*RIDES, "system.clipboard")
    schema = {"place": Param(str, doc="a place of the seed's Maps"), "kind": Param(str, choices=KINDS)}

    @classmethod
    def generate_random_params(cls, rng, world=None):
        return {"place": pick_place(rng, world).name, "kind": rng.choice(KINDS)}

    def setup(self, phone: MockPhone) -> None:
        ensure_place(phone, self, self.params["place"])
        stale_address(phone, self.params["place"])

    def check(self, phone: MockPhone) -> float:
        address = phone.app("maps").state.place(self.params["place"]).address
        return float(one_ride(phone, address, self.params["kind"]))

    def _paste(self, ui: UI, kind: str) -> Iterator[Action]:
        yield from open_mini(ui, "ride")
        yield from ui.long_press(rid="ride_to")
        yield from ui.tap(rid="ride_fares")
        yield from ui.tap(text=kind)
        yield from ui.tap(text="REQUEST")

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from copy_address(ui, self.params["place"])
        yield from self._paste(ui, self.params["kind"])

    def wrong_endings(self) -> dict:
        return {STALE: ending(lambda t: lambda ui: t._paste(ui, t.params["kind"])),
                "other-ride-type": ending(lambda t: seq(lambda ui: copy_address(ui, t.params["place"]),
                                                        lambda ui: t._paste(ui, other_kind(t.params["kind"]))))}


TASKS = (CrossMapsAddressToMiniRide, CrossParcelNumberToMessage, CrossTicketCodeToNote, CrossUtilityAccountToMessage)
