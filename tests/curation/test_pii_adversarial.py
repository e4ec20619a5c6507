"""The leaks of issue 31, as real-phone episodes built and pushed with the shipped default
recipe: values drawn on a WebView screen whose tree is one empty node, classes that were
never detected (IBAN, UK NI, addresses, names, handles) in text, content-desc and pixels,
and a non-ASCII email. Every produced and pushed file is read back (Parquet decoded,
every image through rapidocr's full detector + recogniser, independent of redact's own)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from curation.build import curate
from curation.hub import push_folder
from curation.ocr import read_text
from curation.recipe import load_recipe
from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step, Target
from mockphone.fonts import cjk_font
from tests.curation.test_pii_canary import read_file

W, H = 540, 1200
DEFAULT = Path(__file__).resolve().parents[2] / "examples" / "recipes" / "default.yaml"
WEBVIEW = {"email": "lin.hua@corp-mail.net", "mobile": "+86 139 1234 5678", "card": "4539 1488 0343 6467",
           "cn_id": "11010519491231002X"}
PIXELS = {"iban": "GB82 WEST 1234 5698 7654 32", "ni": "AB 12 34 56 C", "address": "221B Baker Street, London NW1 6XE",
          "name": "Priya Raman", "zh_name": "王小明", "zh_address": "北京市朝阳区建国路88号", "qq": "QQ 98 76 54 A",
          "email": "josé.müller@correo.es"}
TEXT = {"iban": "DE89 3704 0044 0532 0130 00", "ni": "CE 65 43 21 B", "address": "1600 Pennsylvania Avenue NW",
        "name": "Call Priya Raman", "zh_name": "给张伟发短信", "zh_address": "上海市浦东新区世纪大道100号",
        "handle": "微信号：zhang_wei88", "email": "françois.dupont@correo.fr"}
DESC = {"iban": "NL91 ABNA 0417 1643 00", "ni": "JG 10 37 29 D", "name": "Photo of Maria Garcia",
        "zh_name": "联系人：李娜", "address": "12 High Street, Leeds LS1 4AP"}


def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def webview_screen(values: list[str]) -> bytes:
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    d.text((20, 40), "Account", fill="black", font=cjk_font(26))
    for k, value in enumerate(values):
        d.text((20, 120 + 70 * k), value, fill="black", font=cjk_font(26))
    return png(img)


def webview_tree() -> str:
    return ('<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.webkit.WebView" '
            f'package="com.example.browser" content-desc="" bounds="[0,0][{W},{H}]" /></hierarchy>')


def desc_tree() -> str:
    nodes = "".join(f'<node index="{k}" text="" content-desc="{v}" class="android.widget.ImageView" '
                    f'package="com.example" bounds="[0,{100 + 80 * k}][{W},{170 + 80 * k}]" />'
                    for k, v in enumerate(DESC.values()))
    return (f'<hierarchy rotation="0"><node index="0" text="" content-desc="" class="android.widget.FrameLayout" '
            f'package="com.example" bounds="[0,0][{W},{H}]">{nodes}</node></hierarchy>')


def episodes() -> list[Episode]:
    plain = webview_screen(["Recent", "Favourites"])  # drawn text, none of it personal (a blank frame is dropped)
    real = dict(source="human", device=Device(W, H, kind="real"), outcome="success", verified_by="human")
    return [
        Episode(instruction="Check the account page", app="browser", task="browser.account", **real, steps=(
            Step(Observation(webview_screen(list(WEBVIEW.values())), ui_tree=webview_tree()), Action("tap", x=50, y=50)),
            Step(Observation(webview_screen(list(PIXELS.values())), ui_tree=webview_tree()),
                 Action("terminate", status="success")))),
        Episode(instruction=" ; ".join(TEXT.values()), app="contacts", task="contacts.call", **real, steps=(
            Step(Observation(plain, ui_tree=desc_tree()), Action("input_text", text=" ; ".join(TEXT.values()),
                                                                 element=Target(index=1, content_desc=DESC["name"]))),
            Step(Observation(plain, ui_tree=desc_tree()), Action("terminate", status="success")))),
    ]


def planted() -> list[str]:
    values = [*WEBVIEW.values(), *PIXELS.values(), *DESC.values()]
    values += [re.sub(r"^(Call |给|微信号：|联系人：)|发短信$", "", v) for v in TEXT.values()]
    return [v.removeprefix("Photo of ").removeprefix("QQ ") for v in values]


def leaks(text: str) -> list[str]:
    low = text.lower().replace(" ", "")
    flat = re.sub(r"\D", "", text)
    out = []
    for value in planted():
        digits = re.sub(r"\D", "", value)
        if value.lower().replace(" ", "") in low or (len(digits) >= 10 and digits in flat):
            out.append(value)
    local = [v.split("@")[0] for v in planted() if "@" in v]
    out += [v for v in local if v.lower() in text.lower()]  # the name part of an email alone
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from tests.hub_server import HubServer

    lake = Lake.init(tmp_path_factory.mktemp("adversarial") / "lake")
    assert lake.write_episodes(episodes()).written == 2
    recipe = load_recipe(DEFAULT)
    recipe = type(recipe)(**{**recipe.__dict__, "split": {"by": "episode", "seed": 0, "fractions": {"train": 1.0}}})
    dv = curate(lake, recipe)
    local = {p.relative_to(dv.path).as_posix(): p.read_bytes() for p in Path(dv.path).rglob("*") if p.is_file()}
    with HubServer() as hub:
        push_folder(Path(dv.path), "phoneloop/adversarial", revision_tag="v1", token=hub.token, endpoint=hub.url)
        remote = {path: f.data for path, f in hub.state.repos[("dataset", "phoneloop/adversarial")].files_at("v1").items()}
    return local, remote


def test_the_planted_values_are_readable_before_redaction():
    seen = read_text(webview_screen(list(WEBVIEW.values())))
    assert {"lin.hua@corp-mail.net", "4539 1488 0343 6467"} <= set(leaks(seen))


def test_every_episode_reaches_the_exports(built):
    import pyarrow.parquet as pq

    local, _ = built
    rows = [r for n, d in local.items() if n.startswith("episodes/") for r in pq.read_table(io.BytesIO(d)).to_pylist()]
    assert len(rows) == 2


@pytest.mark.parametrize("where", ["local", "pushed"])
def test_no_planted_value_in_any_string_of_any_export(built, where):
    files = dict(zip(("local", "pushed"), built))[where]
    assert any(n.startswith(("sft/", "grpo/", "episodes/")) for n in files)
    for name, data in sorted(files.items()):
        strings, images = [], []
        read_file(name, data, strings, images)
        found = sorted({v for s in strings for v in leaks(s)})
        assert not found, f"{where} {name} carries {found}"


@pytest.mark.parametrize("where", ["local", "pushed"])
def test_no_planted_value_readable_in_any_exported_image(built, where):
    files = dict(zip(("local", "pushed"), built))[where]
    images: list[bytes] = []
    for name, data in sorted(files.items()):
        if name.endswith(".parquet"):
            read_file(name, data, [], images)
    assert images
    for img in {bytes(i) for i in images}:
        found = leaks(read_text(img))
        assert not found, f"{where}: an image carries {found}"
