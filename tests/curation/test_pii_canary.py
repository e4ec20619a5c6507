"""The PII canary: distinct personal values of every class (email, phone, card, CN id, IBAN,
UK NI, en and zh street address, en and zh name, QQ handle) planted in every string field,
the UI tree and the pixels of a real-phone episode; after a build with redaction and a push to the
loopback Hub, no byte of any produced or pushed file may carry any of them (Parquet
decoded, HTML and its inlined images, every image read back by OCR)."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image
from stdnum import iban, luhn
from stdnum.cn import ric

from curation.build import curate
from curation.fakes import TEST_CARDS
from curation.hub import push_folder
from curation.ocr import read_text
from curation.pii import find_pii
from curation.recipe import parse_recipe
from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step, Target
from mockphone.fonts import cjk_font
from PIL import ImageDraw

W, H = 360, 1100
FIELDS = ("instruction", "typed", "answer", "thought", "raw_output", "element", "tree_text", "tree_desc",
          "tree_hint", "episode_meta", "step_meta", "pixels", "ask_user", "shell", "tool_args", "element_id",
          "failure_reason", "device", "category", "policy", "package")


FIRST = ("Priya", "James", "Olivia", "Arjun", "Sophia", "Daniel", "Emma", "Rahul", "Laura", "Thomas", "Anita",
         "Michael", "Sarah", "Vikram", "Helen", "Peter", "Nisha", "George", "Emily", "Kevin", "Meera")
SURNAMES = "王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁"


def canaries(i: int) -> dict[str, str]:
    """Distinct, valid values of every class for field number ``i``."""
    card = f"45391488{i:02d}03436"
    cn = f"110105194912{10 + i:02d}{100 + i:03d}"
    gb = f"WEST{600000 + i:06d}{31926819:08d}"
    return {"email": f"canary{i}.person@corp-mail.net", "phone": f"+1 415 555 {100 + i:04d}",
            "card": " ".join((card + luhn.calc_check_digit(card))[k:k + 4] for k in range(0, 16, 4)),
            "id": cn + ric.calc_check_digit(cn + "0"),
            "iban": " ".join((f"GB{iban.calc_check_digits('GB00' + gb)}" + gb)[k:k + 4] for k in range(0, 22, 4)),
            "ni": f"AB {10 + i:02d} 34 56 C", "address": f"{100 + i} Baker Street", "name": f"{FIRST[i]} Raman",
            "handle": f"{10 + i} 76 54 A", "zh_name": f"{SURNAMES[i]}小明", "zh_address": f"北京市朝阳区建国路{10 + i}号"}


VALUES = {field: canaries(i) for i, field in enumerate(FIELDS)}


def sentence(field: str) -> str:
    v = VALUES[field]
    return (f"mail {v['email']} call {v['phone']} card {v['card']} id {v['id']} iban {v['iban']} NI {v['ni']} "
            f"ship to {v['address']} call {v['name']} QQ {v['handle']}；联系人：{v['zh_name']}，寄到{v['zh_address']}")


def shown(v: dict[str, str]) -> list[str]:
    """The lines a screen draws for values ``v`` (the handle with its QQ label)."""
    return [f"QQ {value}" if kind == "handle" else value for kind, value in v.items()]


def draw_lines(img: Image.Image, lines: list[tuple[int, str]]) -> None:
    d = ImageDraw.Draw(img)
    font = cjk_font(15)
    for y, text in lines:
        d.text((8, y), text, fill="black", font=font)


def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def tree_screen() -> tuple[bytes, str]:
    """A screen whose tree holds the tree values, drawn inside the nodes' bounds."""
    img = Image.new("RGB", (W, H), "white")
    nodes, lines = [], []
    for k, field in enumerate(("tree_text", "tree_desc", "tree_hint")):
        v = VALUES[field]
        value = " ".join(shown(v))
        y = 20 + k * 360
        attr = {"tree_text": "text", "tree_desc": "content-desc", "tree_hint": "hint"}[field]
        nodes.append(f'<node index="{k}" text="" content-desc="" hint="" class="android.widget.EditText" '
                     f'package="com.example" bounds="[0,{y}][{W},{y + 340}]" {attr}="{value}" />'
                     .replace(f' {attr}=""', "", 1))
        lines += [(y + 5 + 30 * n, line) for n, line in enumerate(shown(v))]
    draw_lines(img, lines)
    xml = ('<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="com.example" '
           f'content-desc="" bounds="[0,0][{W},{H}]">' + "".join(nodes) + "</node></hierarchy>")
    return png(img), xml


def pixel_screen() -> bytes:
    """A screen without a tree: only OCR can find its values."""
    img = Image.new("RGB", (W, H), "white")
    v = VALUES["pixels"]
    draw_lines(img, [(60, "Contact")] + [(110 + 60 * n, line) for n, line in enumerate(shown(v))])
    return png(img)


def canary_episode() -> Episode:
    tree_png, xml = tree_screen()
    element = Target(index=1, text=sentence("element"), content_desc=VALUES["element"]["email"], bounds=(0, 20, W, 360))
    steps = [
        Step(Observation(tree_png, ui_tree=xml), Action("tap", x=100, y=150, element=element),
             thought=sentence("thought"), raw_output=sentence("raw_output"), meta={"note": sentence("step_meta")}),
        Step(Observation(pixel_screen()), Action("input_text", text=sentence("typed"))),
        Step(Observation(pixel_screen()), Action("answer", text=sentence("answer"))),
        Step(Observation(pixel_screen(), package=sentence("package"), activity=sentence("package")),
             Action("ask_user", text=sentence("ask_user"))),
        Step(Observation(pixel_screen()), Action("shell", command=f"am start -d 'tel:{sentence('shell')}'")),
        Step(Observation(pixel_screen()), Action("tool", name="contacts.add",
                                                 args={"query": sentence("tool_args"), "n": [sentence("tool_args")]})),
        Step(Observation(tree_png, ui_tree=xml), Action("tap", x=100, y=300, element=Target(
            index=2, resource_id=f"com.example:id/{VALUES['element_id']['email']}", text=sentence("element_id")))),
        Step(Observation(tree_png, ui_tree=xml), Action("terminate", status="success")),
    ]
    return Episode(instruction=f"Send a message: {sentence('instruction')}", source="human",
                   device=Device(W, H, kind="real", extra={"owner": sentence("device")}), app="messages",
                   task="messages.send", outcome="success", verified_by="human", steps=tuple(steps),
                   meta={"contact": sentence("episode_meta")}, failure_reason=sentence("failure_reason"),
                   category=sentence("category"), policy=sentence("policy"))


RECIPE = """
name: canary
select: SELECT episode_id FROM episodes_resolved
ops:
  - op: dedup_near
  - op: redact
  - op: safety_tags
split: {by: episode, seed: 0, fractions: {train: 1.0}}
exports:
  - {format: sft, history: 4, previous_screenshot: true, thought: true}
  - {format: grpo, elements: true}
  - {format: episodes}
"""


def planted() -> list[str]:
    return [value for values in VALUES.values() for value in values.values()]


def digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def leaks(text: str) -> list[str]:
    """Canary values present in ``text`` as written, without separators, in any case, or
    (values of ten digits or more) as their digits alone."""
    low, flat = text.lower(), digits(text)
    out = []
    for value in planted():
        if "@" in value:
            hit = value.lower() in low or value.lower() in low.replace(" ", "")
        else:
            hit = value.lower().replace(" ", "") in low.replace(" ", "") or (
                len(digits(value)) >= 10 and digits(value) in flat)
        if hit:
            out.append(value)
    return out


def raw_leaks(data: bytes) -> list[str]:
    """Canary values written as is (or without spaces) anywhere in a file's raw bytes:
    Parquet footers keep column statistics (min / max strings) outside the decoded rows."""
    out = []
    for value in planted():
        forms = {value, value.replace(" ", "")} | ({value.lower()} if "@" in value else set())
        if any(form.encode() in data for form in forms):
            out.append(value)
    return out


def strings_and_images(value, strings: list[str], images: list[bytes]) -> None:
    if isinstance(value, str):
        strings.append(value)
    elif isinstance(value, bytes):
        images.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            strings_and_images(v, strings, images)
    elif isinstance(value, list):
        for v in value:
            strings_and_images(v, strings, images)


def read_file(name: str, data: bytes, strings: list[str], images: list[bytes]) -> None:
    if name.endswith(".parquet"):
        table = pq.read_table(io.BytesIO(data))
        strings.append(json.dumps(table.schema.metadata and {k.decode(): v.decode()
                                                               for k, v in table.schema.metadata.items()}))
        for row in table.to_pylist():
            strings_and_images(row, strings, images)
        return
    text = data.decode("utf-8", errors="replace")
    strings.append(text)
    for uri in re.findall(r"data:image/[a-z]+;base64,([A-Za-z0-9+/=]+)", text):
        images.append(base64.b64decode(uri))


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """The canary built with redaction and pushed: (local folder files, pushed files)."""
    from tests.hub_server import HubServer

    lake = Lake.init(tmp_path_factory.mktemp("canary") / "lake")
    original = canary_episode()
    img = Image.open(io.BytesIO(pixel_screen()))
    img.putpixel((W - 3, H - 3), (255, 0, 0))  # another run of the same thing: one pixel differs
    steps = list(original.steps)
    steps[1] = Step(Observation(png(img)), steps[1].action)
    twin = Episode(**{**original.__dict__, "episode_id": "", "steps": tuple(steps)})
    assert lake.write_episodes([original, twin]).written == 2
    dv = curate(lake, parse_recipe(RECIPE))
    local = {p.relative_to(dv.path).as_posix(): p.read_bytes() for p in Path(dv.path).rglob("*") if p.is_file()}
    with HubServer() as hub:
        push_folder(Path(dv.path), "phoneloop/canary", revision_tag=f"{dv.name}-v{dv.version}", token=hub.token,
                    endpoint=hub.url)
        remote = {path: f.data for path, f in
                  hub.state.repos[("dataset", "phoneloop/canary")].files_at(f"{dv.name}-v{dv.version}").items()}
    raw = {s.observation.screenshot for e in (original, twin) for s in e.steps}  # every one shows canaries
    return dv, local, remote, raw


def test_the_canary_is_real_pii_that_ocr_can_read():
    for values in VALUES.values():
        kinds = {s.kind for s in find_pii(" ; ".join(shown(values)))}
        assert kinds == {"EMAIL", "PHONE", "CARD", "ID", "IBAN", "ADDRESS", "NAME", "HANDLE"}, values
    assert len(set(planted())) == len(planted())
    seen = leaks(read_text(pixel_screen()))
    assert set(VALUES["pixels"].values()) <= set(seen)  # so reading the outputs back would find them too


def test_no_canary_value_in_any_produced_or_pushed_file(pushed):
    dv, local, remote, _ = pushed
    assert remote and set(remote) <= set(local)
    assert any(n.endswith(".parquet") for n in remote) and "report.html" in remote
    for where, files in (("local", local), ("pushed", remote)):
        strings: list[str] = []
        images: list[bytes] = []
        for name, data in sorted(files.items()):
            before = len(strings)
            read_file(name, data, strings, images)
            found = sorted({v for s in strings[before:] for v in leaks(s)} | set(raw_leaks(data)))
            assert not found, f"{where} {name} carries {found}"
        assert images
        for img in {bytes(i) for i in images}:
            found = leaks(read_text(img))
            assert not found, f"{where}: an image carries {found}"


def test_report_thumbnails_are_made_from_redacted_frames_only(pushed):
    """OCR cannot read a 120 px thumbnail, so compare bytes: no thumbnail in the report
    (local or pushed) is the thumbnail of a lake frame as recorded."""
    from curation.report import _thumb

    dv, local, remote, raw = pushed
    raw_thumbs = {_thumb(png) for png in raw}
    for files in (local, remote):
        shown = set(re.findall(r"data:image/jpeg;base64,[A-Za-z0-9+/=]+", files["report.html"].decode()))
        assert shown  # the dropped twin makes a near-duplicate example
        assert not shown & raw_thumbs


def test_the_redacted_episode_still_types_what_its_instruction_says(pushed):
    dv, local, _, _ = pushed
    table = pq.read_table(io.BytesIO(next(v for k, v in local.items() if k.startswith("episodes/")))).to_pylist()
    row = table[0]
    typed = json.loads(row["actions"][1])["text"]
    assert re.match(r"mail user-[0-9a-f]{6}@example\.com call \+1 \d{3} 555 01\d\d card (?:\d{4} ){3}\d{4} "
                    r"id \d{17}[\dX] iban GB00 [A-Z]{4}(?: \d{4}){3} \d\d NI QQ \d\d \d\d \d\d C ship to \d+ Example Street "
                    r"call [A-Z][a-z]+ [A-Z][a-z]+ QQ 0\d \d\d \d\d A；联系人：\w{3}，寄到示例市示例区示例路\d+号$", typed), typed
    card = digits(typed.split(" card ")[1].split(" id ")[0])
    assert card in {c for cards in TEST_CARDS.values() for c in cards}
    assert not {s.kind for s in find_pii(typed)} & {"ID", "IBAN"}  # ids and IBANs fail their checks
    assert "new_recipient" in row["safety_tags"]
    records = [json.loads(line) for line in local["redactions.jsonl"].decode().splitlines()]
    assert {r["field"] for r in records} >= {"instruction", "meta", "thought", "raw_output", "action", "step_meta",
                                             "ui_tree", "screenshot_ocr", "screenshot_blur", "failure_reason",
                                             "device", "category", "policy", "package", "activity"}
    assert {json.loads(a)["type"] for a in row["actions"]} >= {"ask_user", "shell", "tool", "answer", "input_text"}
    assert not any(leaks(json.dumps(r)) for r in records)
