"""Drawn icons, avatars and item pictures: deterministic, distinct, cached, and where real apps show them."""

import io
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone import MockPhone, art
from mockphone.apps import default_apps

APPS = sorted((cls.name, cls.color) for cls in default_apps())


def _bytes(img: Image.Image) -> bytes:
    return img.tobytes()


def test_every_app_has_a_drawn_glyph_and_the_icons_all_differ():
    assert {name for name, _ in APPS} <= set(art.GLYPHS)
    icons = {_bytes(art.icon(name, 147, color)) for name, color in APPS}
    assert len(icons) == len(APPS)
    # the glyph, not the colour, tells them apart: the same colour for all still gives distinct icons
    assert len({_bytes(art.icon(name, 147, "#1a73e8")) for name, _ in APPS}) == len(APPS)


def test_an_icon_is_a_drawing_not_a_letter():
    img = np.asarray(art.icon("clock", 147, "#1a73e8").convert("RGB"))
    white = (img > 230).all(axis=2)
    assert 0.03 < white.mean() < 0.5  # a white glyph covering part of the disc


def test_avatars_differ_per_contact_and_show_initials():
    names = MockPhone(seed=0).contact_names()
    assert len(names) >= 8
    assert len({_bytes(art.avatar(n, 105)) for n in names}) == len(names)
    assert art.initials("Dana Evans") == "DE" and art.initials("dana.evans@example.com") == "DE"
    assert art.initials("+1 555-0101") == "#"


def test_pictures_differ_per_item():
    keys = [f"product-{i}" for i in range(40)] + [f"hotel-Hotel {i}" for i in range(20)]
    assert len({_bytes(art.picture(k, 147, 147, 21)) for k in keys}) == len(keys)


def test_art_is_the_same_bytes_in_a_fresh_process():
    """No process salt (hash()), no shared RNG: another interpreter draws identical bytes."""
    code = ("import hashlib; from mockphone import art; print(hashlib.sha256(art.icon('shop', 147, '#d93025').tobytes()"
            "+ art.avatar('Maya Silva', 105).tobytes() + art.picture('hotel-X', 300, 200, 12).tobytes()).hexdigest())")
    here = __import__("hashlib").sha256(art.icon("shop", 147, "#d93025").tobytes() + art.avatar("Maya Silva", 105)
                                        .tobytes() + art.picture("hotel-X", 300, 200, 12).tobytes()).hexdigest()
    env = {**__import__("os").environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=True)
    assert out.stdout.strip() == here


def test_pictures_are_cached_not_redrawn():
    art.picture.cache_clear()
    art.picture("product-1", 100, 100, 8)
    art.picture("product-1", 100, 100, 8)
    assert art.picture.cache_info().hits == 1


@pytest.mark.parametrize("app,rid,kind", [("contacts", "contact_row", "avatar"), ("messages", "conversation", "avatar"),
                                          ("mail", "email_row", "avatar"), ("shop", "product_row", "picture")])
def test_list_rows_carry_their_avatar_or_thumbnail(app, rid, kind):
    phone = MockPhone(seed=0)
    phone.act(Action("open_app", app=app))
    rows = [n for n in phone.root.walk() if n.rid == rid]
    assert rows
    icons = [c for row in rows for c in row.children if c.kind == "item_icon"]
    assert len(icons) == len(rows) and all(i.data["icon"].startswith(kind + ":") for i in icons)
    people = {i.data["icon"] for i in icons}
    assert len(people) == len(icons) if app != "mail" else len(people) > 1  # one per contact / item (mail: sender)
    els = parse_ui_tree(phone.ui_tree())
    assert sum(e.resource_id == "android:id/icon" for e in els) == len(rows)
    # the pixels there are the drawn picture, not the page background
    shot = np.asarray(Image.open(io.BytesIO(phone.screenshot())).convert("RGB"))
    x1, y1, x2, y2 = icons[0].bounds
    assert shot[(y1 + y2) // 2, x1 + 3:x2 - 3].std() > 0 or (shot[(y1 + y2) // 2, (x1 + x2) // 2] != 255).any()


def test_launcher_icons_are_pasted_from_the_cache():
    art.icon.cache_clear()
    phone = MockPhone(seed=0)
    phone.screenshot()
    misses = art.icon.cache_info().misses
    phone.reset(1)
    phone.screenshot()
    assert art.icon.cache_info().misses == misses  # a second phone screen draws no icon again
