"""The seeded phone world: every app's data generated from one seed, in the phone's locale.

    world = generate(seed, "zh-CN")
    world.people            # the owner's contacts (Chinese names, +86 numbers on a zh-CN phone)
    world.section("mail")   # any registered section, built once and cached

A world is a pure function of ``(seed, locale)``: the same pair gives byte-identical
data on any machine and under any ``PYTHONHASHSEED`` (:func:`digest` hashes it). Text
that looks like a person's comes from Faker's seeded providers (``en_US`` and
``zh_CN``); amounts, times and choices come from a :class:`random.Random` seeded by a
string, never by ``hash()``. Apps read their start state from ``phone.world``; task
templates draw their parameters from the world of the seed they are built with, so
the instruction and the oracle's path change with the seed.

A section is a function ``build(world) -> data`` registered with :func:`section`;
``mockphone.world.people`` holds the people, the others live beside it, one module
each. Sections must be deterministic and must not read other sections' randomness
(each has its own ``world.rng(name)`` and ``world.faker(name)``), so adding one never
changes another.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import threading
from functools import lru_cache
from typing import Any, Callable

from mockphone import i18n

FAKER_LOCALES = {"en-US": "en_US", "zh-CN": "zh_CN"}
SECTIONS: dict[str, Callable[["World"], Any]] = {}
_FAKERS: dict[str, Any] = {}
_FAKER_LOCK = threading.RLock()  # Faker instances are shared per locale and re-seeded per use


def section(name: str) -> Callable[[Callable[["World"], Any]], Callable[["World"], Any]]:
    """Register ``build(world)`` as the world's section ``name``."""

    def register(fn: Callable[[World], Any]) -> Callable[[World], Any]:
        if name in SECTIONS and SECTIONS[name] is not fn:
            raise ValueError(f"world section {name!r} is registered twice")
        SECTIONS[name] = fn
        return fn

    return register


def _stable_int(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


class _SeededFaker:
    """A context manager handing out the locale's shared Faker, re-seeded, under a lock."""

    def __init__(self, locale: str, seed: int) -> None:
        self.locale, self.seed = locale, seed

    def __enter__(self) -> Any:
        _FAKER_LOCK.acquire()
        fk = _FAKERS.get(self.locale)
        if fk is None:
            from faker import Faker

            fk = _FAKERS[self.locale] = Faker(FAKER_LOCALES[self.locale])
        fk.seed_instance(self.seed)
        return fk

    def __exit__(self, *exc: Any) -> None:
        _FAKER_LOCK.release()


class World:
    """The data of one phone: ``seed`` and ``locale`` decide all of it (see the module docstring)."""

    def __init__(self, seed: int, locale: str = i18n.DEFAULT) -> None:
        self.seed = int(seed)
        self.locale = i18n.check(locale)
        self._built: dict[str, Any] = {}
        self._lock = threading.RLock()  # a section may read another section

    def rng(self, name: str) -> random.Random:
        """A generator private to section ``name`` (string-seeded: the same on every machine)."""
        return random.Random(f"world:{self.seed}:{self.locale}:{name}")

    def faker(self, name: str) -> _SeededFaker:
        """``with world.faker("people") as fk:`` the locale's Faker seeded for section ``name``.

        Read other sections before entering the block, never inside it (the Faker is shared)."""
        return _SeededFaker(self.locale, _stable_int("world", self.seed, self.locale, name))

    @property
    def zh(self) -> bool:
        return self.locale == "zh-CN"

    def section(self, name: str) -> Any:
        """Section ``name``, built on first use and cached (sections are frozen data: do not mutate)."""
        with self._lock:
            if name not in self._built:
                _load_sections()
                try:
                    build = SECTIONS[name]
                except KeyError:
                    raise KeyError(f"no world section {name!r}; known: {', '.join(sorted(SECTIONS))}") from None
                self._built[name] = build(self)
            return self._built[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        _load_sections()
        if name in SECTIONS:
            return self.section(name)
        raise AttributeError(f"World has no attribute or section {name!r}")

    def to_json(self) -> dict[str, Any]:
        """Every section as plain JSON (dataclasses become dicts), in section-name order."""
        _load_sections()
        return {"seed": self.seed, "locale": self.locale,
                "sections": {name: _plain(self.section(name)) for name in sorted(SECTIONS)}}

    def digest(self) -> str:
        """sha256 of :meth:`to_json`: equal worlds have equal digests on every machine."""
        return hashlib.sha256(canonical(self.to_json()).encode()).hexdigest()

    def __repr__(self) -> str:
        return f"World(seed={self.seed}, locale={self.locale!r})"


@lru_cache(maxsize=256)
def generate(seed: int, locale: str = i18n.DEFAULT) -> World:
    """The world of ``seed`` in ``locale`` (cached: a world is immutable once built)."""
    return World(seed, locale)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """Canonical JSON of ``value`` (sorted keys, no whitespace, dataclasses as dicts): the input of every digest."""
    return json.dumps(_plain(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


_LOADED = False
_LOAD_LOCK = threading.RLock()  # a section module may import another section


def _load_sections() -> None:
    """Import the section modules (once): each registers itself with :func:`section`."""
    global _LOADED
    if _LOADED:
        return
    with _LOAD_LOCK:  # threads (the farm's workers) must not see the flag before every section registered
        if _LOADED:
            return
        import importlib
        import pkgutil

        for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            importlib.import_module(f"{__name__}.{info.name}")
        _LOADED = True
