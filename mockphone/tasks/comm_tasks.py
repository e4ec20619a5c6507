"""Contacts and Messages tasks."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, ClassVar, Iterator

from datalake.types import Action
from mockphone.apps.contacts import Contact
from mockphone.apps.messages import Message
from mockphone.errors import InvalidTaskParams
from mockphone.tasks import endings as ends
from mockphone.tasks import answers
from mockphone.tasks import endings as endings_
from mockphone.tasks.base import Param, Task, digit_off, final_answer, fraction

if TYPE_CHECKING:
    from mockphone.phone import MockPhone
    from mockphone.tasks.oracle import UI

NEW_PEOPLE = ("Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Linus Torvalds")
NEW_NUMBERS = ("+1 555-010-2024", "+1 555-867-5309", "+1 555-321-0000", "+1 555-246-8101")
TEXTS = ("On my way!", "See you at 7 pm.", "Thanks, got it.", "Can we move the call to Friday?",
         "Please send the invoice.")
FIXED = ("Mia Chen", "Omar Haddad", "Lena Fischer")  # contacts every contacts task adds, so params are stable


def digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit())


def search_key(name: str) -> str:
    """What an oracle types to find ``name`` in a list: the first word, or the first character of a name
    without spaces (a Chinese name typed whole would match the search field itself, not the row)."""
    return name.split()[0] if " " in name.strip() else name[:1]


def people_of(world=None) -> tuple:
    """The people of ``world`` (``mockphone.world.people``; seed 0's when there is none)."""
    from mockphone import world as worlds

    return (world if world is not None else worlds.generate(0)).people


def pick_person(rng: random.Random, world=None):
    """One of ``world``'s people whose name is in no other person's name (a search for it finds one row)."""
    people = people_of(world)
    alone = [p for p in people if not any(p.name != q.name and p.name in q.name for q in people)]
    return rng.choice(alone or list(people))


def pick_name(rng: random.Random, world=None) -> str:
    return pick_person(rng, world).name


def ensure_person(phone: MockPhone, name: str, world=None) -> Contact:
    """``name``'s contact on ``phone``, planted (number and address from ``world`` when it knows them) if missing."""
    state = phone.app("contacts").state
    found = state.find(name)
    if found is None:
        person = next((p for p in people_of(world) if p.name == name), None) if world is not None else None
        code = sum(map(ord, name))
        found = Contact(name, person.phone if person else f"+1 555-300-{1000 + code % 9000}",
                        person.email if person else f"contact{code % 100000}@example.com")
        state.contacts.append(found)
    return found


def ensure_people(phone: MockPhone) -> None:
    state = phone.app("contacts").state
    for i, name in enumerate(FIXED):
        if state.find(name) is None:
            email = name.lower().replace(" ", ".") + "@example.com"
            state.contacts.append(Contact(name, f"+1 555-200-{1000 + i}", email))


def other_value(phone: MockPhone, task: Task, kind: str) -> str | None:
    """Another contact / conversation / inbox email on ``phone`` than the ones ``task``'s params name."""
    taken = [str(v) for v in task.params.values()]
    if kind == "person":
        pool = phone.contact_names()
    elif kind == "thread":
        pool = list(phone.app("messages").state.threads)
    else:
        pool = [e.subject for e in phone.app("mail").state.folder("inbox")]
    names = sorted(n for n in pool if not any(n in t or t in n for t in taken)
                   and not any(n != m and n in m for m in pool))
    return names[0] if names else None


class AlsoAnother(Task):
    """A task whose param names a world item (a contact, a conversation, an email): since another seed's world
    names items this phone lacks, the invariants' "also other params" ending is played here with another item
    of this phone: the task done, then the same done to that item too (the text also sent to someone else)."""

    also: ClassVar[tuple[str, str]] = ()  # (param, kind): kind is person, thread or email

    def wrong_endings(self) -> dict:
        endings = dict(super().wrong_endings())
        if self.also:
            key, kind = self.also

            def play(phone: MockPhone, task: Task) -> None:
                from mockphone.tasks.play import also_params

                other = other_value(phone, task, kind)
                if other is None:
                    raise InvalidTaskParams(f"{task.name()}: no other {kind} on this phone")
                also_params({**task.params, key: other})(phone, task)

            endings[f"also-another-{kind}"] = play
            endings[f"another-{kind}-instead"] = endings_.instead(key, lambda t, phone: other_value(phone, t, kind))
        return endings


class ContactsAdd(Task):
    """Create a new contact with a name and phone number."""

    template = "Add a contact named {name} with phone number {number}."
    app_names = ("contacts",)
    complexity = 3.0
    allowed = ('contacts.contacts[{name}].*',)
    schema = {"name": Param(str, choices=NEW_PEOPLE), "number": Param(str, choices=NEW_NUMBERS)}
    near_misses = (("digit-off", lambda p: {"number": digit_off(p["number"])}),
                   ("first-name-only", lambda p: {"name": p["name"].split()[0]}))

    def check(self, phone: MockPhone) -> float:
        c = phone.state("contacts").find(self.params["name"])
        return fraction(c is not None, c is not None and digits(c.phone) == digits(self.params["number"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(rid="add_contact")
        yield from ui.type_into("name", self.params["name"])
        yield from ui.type_into("phone", self.params["number"])
        yield from ui.tap(rid="save")


class ContactsDelete(AlsoAnother):
    """Delete one contact (confirmation dialog); the others must remain."""

    template = "Delete the contact {name}."
    app_names = ("contacts",)
    complexity = 3.0
    allowed = ('contacts.contacts[{name}].*',)
    also = ("name", "person")
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}  # any of the seed's contacts

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)
        self._others = [c.name for c in phone.app("contacts").state.contacts if c.name != self.params["name"]]

    def check(self, phone: MockPhone) -> float:
        names = [c.name for c in phone.state("contacts").contacts]
        return float(self.params["name"] not in names and all(n in names for n in self._others))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(text=self.params["name"])
        yield from ui.tap(rid="delete")
        yield from ui.tap(text="DELETE")


class ContactsEditPhone(AlsoAnother):
    """Change an existing contact's phone number."""

    template = "Change {name}'s phone number to {number}."
    app_names = ("contacts",)
    complexity = 4.0
    allowed = ('contacts.contacts[{name}].phone',)
    also = ("name", "person")
    schema = {"name": Param(str), "number": Param(str, choices=NEW_NUMBERS)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world), "number": rng.choice(NEW_NUMBERS)}

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        c = phone.state("contacts").find(self.params["name"])
        return float(c is not None and c.phone == self.params["number"])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(text=self.params["name"])
        yield from ui.tap(rid="edit")
        yield from ui.type_into("phone", self.params["number"], clear=True)
        yield from ui.tap(rid="save")


class ContactsFavourite(AlsoAnother):
    """Mark a contact as a favourite."""

    template = "Add {name} to favourites."
    app_names = ("contacts",)
    complexity = 2.0
    allowed = ('contacts.contacts[{name}].starred',)
    also = ("name", "person")
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}  # any of the seed's contacts

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        c = phone.state("contacts").find(self.params["name"])
        return float(c is not None and c.starred)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.type_into("search", search_key(self.params["name"]))
        yield from ui.tap(text=self.params["name"])
        yield from ui.tap(rid="favourite")


def _other_contact(task: Task, phone: MockPhone) -> Contact:
    """A contact on ``phone`` other than the one ``task`` asks about (for near-miss answers)."""
    return next(c for c in phone.state("contacts").contacts if c.name != task.params["name"] and c.email)


class ContactsLookupNumber(Task):
    """Information retrieval: answer with a contact's phone number (read from the answer the agent gives)."""

    template = "What is {name}'s phone number? Answer with the number."
    app_names = ("contacts",)
    complexity = 2.0
    changes_state = False
    schema = {"name": Param(str)}
    wrong_answers = (("digit-off", lambda t, phone: digit_off(phone.state("contacts").find(t.params["name"]).phone)),
                     ("another-contact", lambda t, phone: _other_contact(t, phone).phone))

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}  # any of the seed's contacts

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        contact = phone.state("contacts").find(self.params["name"])
        if contact is None:
            return 0.0
        region, want = answers.phone_key(contact.phone)
        return float(answers.only(answers.phone_numbers(final_answer(phone), region), want))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(text=self.params["name"])
        el = ui.find(rid="phone")
        number = next(e.text for e in ui.elements() if e.parent == el.index and e.resource_id == "android:id/summary")
        yield Action("answer", text=number)


class MessagesSend(AlsoAnother):
    """Send a text to a contact, starting a conversation from the contact picker."""

    template = "Send a text message to {name} saying \"{text}\"."
    app_names = ("messages",)
    complexity = 4.0
    allowed = ('messages.threads[{name}][+1]*',)
    also = ("name", "person")
    schema = {"name": Param(str), "text": Param(str, choices=TEXTS)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world), "text": rng.choice(TEXTS)}

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        return float(self.params["text"] in phone.state("messages").sent_to(self.params["name"]))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.tap(rid="start_chat")
        yield from ui.type_into("to", search_key(self.params["name"]))
        yield from ui.tap(text=self.params["name"])
        yield from ui.type_into("compose", self.params["text"])
        yield from ui.tap(rid="send")


class MessagesReplyUnread(Task):
    """Reply to whoever sent the unread message (the agent must find the thread marked new)."""

    swaps = (("text", ends.choice("text"), "instead"),)
    template = "Reply \"{text}\" to the unread message."
    app_names = ("messages",)
    complexity = 3.0
    schema = {"text": Param(str, choices=TEXTS)}

    def derived_allowed(self, start: dict) -> list[str]:
        return [f"messages.threads[{self._sender}][+1]*"]

    def setup(self, phone: MockPhone) -> None:
        state = phone.app("messages").state
        sender = random.Random(phone.seed).choice(sorted(state.threads))
        state.threads[sender].append(Message(sender, "Quick question, are you around?"))
        state.unread = [sender]
        self._sender = sender

    def check(self, phone: MockPhone) -> float:
        state = phone.state("messages")
        others = any(self.params["text"] in state.sent_to(c) for c in state.threads if c != self._sender)
        return float(self.params["text"] in state.sent_to(self._sender) and not others)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("messages")
        row = ui.find(text="new")  # the unread marker, as the phone's locale shows it
        title = next(el for el in ui.elements() if el.parent == row.parent and el.resource_id == "android:id/title")
        yield from self._reply(ui, title.text)

    def _reply(self, ui: UI, name: str) -> Iterator[Action]:
        yield from ui.tap(text=name)
        yield from ui.type_into("compose", self.params["text"])
        yield from ui.tap(rid="send")

    def wrong_endings(self) -> dict:
        def elsewhere(t):  # the newest-looking thread at the top, not the one marked new
            def script(ui):
                yield from ui.open("messages")
                yield from t._reply(ui, next(n for n in sorted(ui.phone.state("messages").threads) if n != t._sender))
            return script
        return {"replied-in-another-thread": ends.ending(elsewhere)}


class MessagesAnswerLast(Task):
    """Information retrieval: quote the last message someone sent."""

    swaps = (("name", lambda t, phone: other_value(phone, t, "thread")),)
    wrong_answers = (("their-first-text", lambda t, phone: phone.state("messages").threads[t.params["name"]][0].text),)
    template = "What was the last text {name} sent me? Answer with the message."
    app_names = ("messages",)
    complexity = 2.0
    changes_state = False
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}

    def setup(self, phone: MockPhone) -> None:
        from mockphone.world import messages as pools

        name = self.params["name"]
        ensure_person(phone, name, self.world)
        rng = random.Random(f"{self.name()}:{phone.seed}:{name}")
        zh = phone.locale == "zh-CN"
        said = pools.fill(rng.choice(pools.pool(zh, said=True)), rng)
        phone.app("messages").state.threads[name] = [
            Message(name, "你好！" if zh else "Hi!"), Message("me", "嗨" if zh else "Hey"), Message(name, said)]

    def check(self, phone: MockPhone) -> float:
        last = [m.text for m in phone.state("messages").threads[self.params["name"]] if m.sender != "me"][-1]
        said = [m.text.rstrip(".") for ms in phone.state("messages").threads.values() for m in ms if m.sender != "me"]
        return float(answers.only(answers.mentions(final_answer(phone), said), last.rstrip(".")))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.tap(text=self.params["name"])
        bubbles = ui.find_all("message_text")
        yield Action("answer", text=bubbles[-1].text)


class MessagesForward(AlsoAnother):
    """Forward a message: copy a bubble in one conversation (long-press) and send it in another."""

    template = "Forward the last message {source} sent me to {target}."
    app_names = ("messages",)
    complexity = 6.0
    allowed = ('messages.threads[{target}][+1]*', 'system.clipboard')
    also = ("target", "person")
    schema = {"source": Param(str), "target": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        source = pick_name(rng, world)
        target = source
        while target == source:
            target = pick_name(rng, world)
        return {"source": source, "target": target}

    @classmethod
    def validate(cls, params: dict) -> None:
        super().validate(params)
        if params["source"] == params["target"]:
            raise InvalidTaskParams(f"{cls.name()}: source and target must be different people")

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        for name in (self.params["source"], self.params["target"]):
            ensure_person(phone, name, self.world)
        notes = ("Gate code is 4821.", "The venue changed to Pier 39.", "Dress code: smart casual.")
        threads = phone.app("messages").state.threads
        threads[self.params["source"]] = [Message(self.params["source"], notes[phone.seed % 3])]
        threads.pop(self.params["target"], None)
        phone.system.clipboard = "Gate code is 0000."

    def check(self, phone: MockPhone) -> float:
        state = phone.state("messages")
        said = state.threads[self.params["source"]][0].text
        return float(said in [t.strip() for t in state.sent_to(self.params["target"])])

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.tap(text=self.params["source"])
        yield from ui.long_press(rid="message_text")
        yield from ui.key("back")
        yield from ui.tap(rid="start_chat")
        yield from ui.type_into("to", search_key(self.params["target"]))
        yield from ui.tap(text=self.params["target"])
        yield from ui.long_press(rid="compose")
        yield from ui.tap(rid="send")


class ContactsAnswerEmail(Task):
    """Information retrieval: a contact's email address."""

    template = "What is {name}'s email address? Answer with the address."
    app_names = ("contacts",)
    complexity = 2.0
    changes_state = False
    schema = {"name": Param(str)}
    wrong_answers = (("another-contact", lambda t, phone: _other_contact(t, phone).email),
                     ("both-addresses", lambda t, phone: f"{phone.state('contacts').find(t.params['name']).email} or "
                                                         f"{_other_contact(t, phone).email}"))

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        return {"name": pick_name(rng, world)}  # any of the seed's contacts

    def setup(self, phone: MockPhone) -> None:
        ensure_people(phone)
        ensure_person(phone, self.params["name"], self.world)

    def check(self, phone: MockPhone) -> float:
        address = phone.state("contacts").find(self.params["name"]).email
        return float(answers.only(answers.emails(final_answer(phone)), address.lower()))

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("contacts")
        yield from ui.tap(text=self.params["name"])
        row = ui.find(rid="email")
        yield Action("answer", text=next(e.text for e in ui.elements()
                                         if e.parent == row.index and e.resource_id == "android:id/summary"))


class MessagesDeleteThread(AlsoAnother):
    """Delete a conversation with a long-press and a confirmation dialog."""

    template = "Delete the conversation with {name}."
    app_names = ("messages",)
    complexity = 3.0
    allowed = ('messages.threads[{name}]*',)
    also = ("name", "thread")
    schema = {"name": Param(str)}

    @classmethod
    def generate_random_params(cls, rng: random.Random, world=None) -> dict:
        from mockphone import world as worlds

        threads = (world if world is not None else worlds.generate(0)).messages
        return {"name": rng.choice(threads).contact}  # one of the seed's conversations

    def setup(self, phone: MockPhone) -> None:
        name = self.params["name"]
        ensure_person(phone, name, self.world)
        threads = phone.app("messages").state.threads
        if not threads.get(name):
            threads[name] = [Message(name, "你好" if phone.locale == "zh-CN" else "Hi there")]
        self._others = sorted(n for n in threads if n != name)  # every other conversation must stay

    def check(self, phone: MockPhone) -> float:
        threads = phone.state("messages").threads
        others_kept = all(n in threads for n in self._others)
        return float(self.params["name"] not in threads and others_kept)

    def oracle(self, ui: UI) -> Iterator[Action]:
        yield from ui.open("messages")
        yield from ui.long_press(text=self.params["name"])
        yield from ui.tap(text="DELETE")


TASKS = (
    ContactsAdd, ContactsAnswerEmail, ContactsDelete, ContactsEditPhone, ContactsFavourite, ContactsLookupNumber,
    MessagesAnswerLast, MessagesDeleteThread, MessagesForward, MessagesReplyUnread, MessagesSend,
)
