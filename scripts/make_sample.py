"""Regenerate the bundled sample (phoneloop/sample/): a few small synthetic episodes.

    .venv/bin/python scripts/make_sample.py

Screens are drawn with Pillow at 360x800 (a 1080x2400 phone at 1/3 scale, to keep
the repository small); each has a matching uiautomator tree. The sample is written
by a real lake export, so it is in the canonical interchange form and an
import followed by an export gives the same bytes back.
"""

from __future__ import annotations

import shutil
import tempfile
from io import BytesIO
from pathlib import Path
from xml.sax.saxutils import quoteattr

from PIL import Image, ImageDraw, ImageFont

from datalake.interchange import export_jsonl
from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step

W, H = 360, 800
OUT = Path(__file__).resolve().parent.parent / "phoneloop" / "sample"


def font(size: int):
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def screen(package: str, title: str, buttons: list[str], accent: str) -> Observation:
    img = Image.new("RGB", (W, H), "#fafafa")
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, W, 24], fill="#202124")
    d.text((8, 4), "12:00", fill="white", font=font(13))
    d.rectangle([0, 24, W, 80], fill=accent)
    d.text((16, 40), title, fill="white", font=font(20))
    nodes = [f'<node index="0" text={quoteattr(title)} resource-id="{package}:id/title" class="android.widget.TextView" '
             f'package="{package}" content-desc="" clickable="false" enabled="true" bounds="[0,24][{W},80]" />']
    for i, label in enumerate(buttons):
        y1 = 110 + i * 70
        d.rounded_rectangle([16, y1, W - 16, y1 + 54], radius=10, fill="white", outline="#dadce0")
        d.text((32, y1 + 16), label, fill="#202124", font=font(17))
        nodes.append(f'<node index="{i + 1}" text={quoteattr(label)} resource-id="{package}:id/item_{i}" '
                     f'class="android.widget.Button" package="{package}" content-desc="" clickable="true" '
                     f'enabled="true" bounds="[16,{y1}][{W - 16},{y1 + 54}]" />')
    d.rectangle([0, H - 40, W, H], fill="#202124")
    buf = BytesIO()
    img.save(buf, "PNG", optimize=True)
    tree = (f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0"><node index="0" text="" resource-id="" '
            f'class="android.widget.FrameLayout" package="{package}" content-desc="" clickable="false" enabled="true" '
            f'bounds="[0,0][{W},{H}]">' + "".join(nodes) + "</node></hierarchy>")
    return Observation(screenshot=buf.getvalue(), ui_tree=tree, package=package)


def tap(obs: Observation, label: str) -> Action:
    from datalake.uitree import parse_ui_tree

    el = next(e for e in parse_ui_tree(obs.ui_tree) if e.text == label)
    x, y = el.center
    return Action("tap", x=x, y=y, element=el.as_target())


def episodes() -> list[Episode]:
    settings = "com.android.settings"
    home = screen(settings, "Settings", ["Network & internet", "Display", "Sound"], "#1a73e8")
    net = screen(settings, "Network & internet", ["Wi-Fi: off", "Airplane mode", "Hotspot"], "#1a73e8")
    wifi_on = screen(settings, "Network & internet", ["Wi-Fi: on", "Airplane mode", "Hotspot"], "#1a73e8")
    shop = "com.example.shop"
    results = screen(shop, "Results: headphones", ["Studio Pro  $129", "Buds Lite  $39", "Filter: price"], "#e8710a")
    price = screen(shop, "Filter: price", ["Under $50", "$50 - $100", "Apply"], "#e8710a")
    msgs = "com.example.messages"
    inbox = screen(msgs, "Messages", ["Alice", "Bob", "New message"], "#188038")
    chat = screen(msgs, "Alice", ["Type a message", "Send"], "#188038")
    mock = Device(W, H, kind="mock", extra={"density": 140, "model": "mockphone"})
    real = Device(W, H, kind="real", extra={"density": 140, "model": "Pixel 8 (scaled)"})
    return [
        Episode(instruction="Turn on Wi-Fi", source="oracle", device=mock, app="settings", category="single-app",
                task="settings.wifi_on", outcome="success", verified_by="verifier", steps=(
                    Step(home, tap(home, "Network & internet")),
                    Step(net, tap(net, "Wi-Fi: off")),
                    Step(wifi_on, Action("terminate", status="success")))),
        Episode(instruction="Turn on Wi-Fi", source="human", device=real, app="settings", category="single-app",
                outcome="success", verified_by="human", steps=(
                    Step(home, tap(home, "Network & internet"), thought="Wi-Fi lives under network settings"),
                    Step(net, tap(net, "Wi-Fi: off")),
                    Step(wifi_on, Action("terminate", status="success")))),
        Episode(instruction="Find headphones under $50", source="human", device=real, app="shop",
                category="single-app", outcome="success", verified_by="human", steps=(
                    Step(results, tap(results, "Filter: price")),
                    Step(price, tap(price, "Under $50")),
                    Step(price, tap(price, "Apply")),
                    Step(results, Action("answer", text="Buds Lite, $39")))),
        Episode(instruction="Find headphones under $50", source="agent", device=real, app="shop",
                category="single-app", policy="tiny-sft", round=0, outcome="failure", verified_by="human", steps=(
                    Step(results, tap(results, "Studio Pro  $129"), thought="first result"),
                    Step(results, Action("terminate", status="success")))),
        Episode(instruction="Tell Alice 'running late'", source="oracle", device=mock, app="messages",
                category="single-app", task="messages.send", outcome="success", verified_by="verifier", steps=(
                    Step(inbox, tap(inbox, "Alice")),
                    Step(chat, tap(chat, "Type a message")),
                    Step(chat, Action("input_text", text="running late")),
                    Step(chat, tap(chat, "Send")),
                    Step(chat, Action("terminate", status="success")))),
        Episode(instruction="Tell Alice 'running late'", source="rollout", device=mock, app="messages",
                category="single-app", task="messages.send", policy="tiny-sft", round=1, outcome="failure",
                verified_by="verifier", steps=(
                    Step(inbox, Action("scroll", direction="down")),
                    Step(inbox, Action("key", key="back")),
                    Step(inbox, Action("terminate", status="infeasible")))),
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake.init(Path(tmp) / "lake")
        report = lake.write_episodes(episodes())
        assert report.written == 6 and report.quarantined == 0, report
        if OUT.exists():
            shutil.rmtree(OUT)
        export_jsonl(lake, OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
