"""Episodes that exercise every curation op: real and mock phones, PII, duplicates,
near-duplicate screens, blank frames, no-ops, loops, unparseable model output."""

from __future__ import annotations

import random
from io import BytesIO

from PIL import Image, ImageDraw

from datalake.types import Action, Device, Episode, Observation, Step, Target

W, H = 270, 600


def screen(seed: int, label: str = "", tweak: int = 0, blank: bool = False) -> bytes:
    """A distinct UI-like screen per seed; ``tweak`` moves one small detail (a near-duplicate)."""
    img = Image.new("RGB", (W, H), "black" if blank else "white")
    if not blank:
        rng = random.Random(seed)
        d = ImageDraw.Draw(img)
        for _ in range(10):
            x, y = rng.randrange(W - 60), rng.randrange(H - 40)
            d.rectangle([x, y, x + rng.randrange(20, 60), y + rng.randrange(10, 40)],
                        fill=tuple(rng.randrange(256) for _ in range(3)))
        d.text((10, 10), label or f"screen {seed}", fill="black")
        d.text((25, 120), label or f"field {seed}", fill="black")  # inside the tree's field node
        if tweak:
            d.point((W - 5 - tweak, H - 5), fill="red")
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def tree(text: str = "OK", desc: str = "") -> str:
    return ('<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
            f'package="com.example" content-desc="" bounds="[0,0][{W},{H}]">'
            f'<node index="0" text="{text}" resource-id="com.example:id/field" class="android.widget.TextView" '
            f'package="com.example" content-desc="{desc}" clickable="true" bounds="[20,100][250,160]" />'
            '</node></hierarchy>')


def step(seed: int, action: Action, **kw) -> Step:
    obs_kw = {k: kw.pop(k) for k in ("ui_tree",) if k in kw}
    png = kw.pop("png", None) or screen(seed)
    return Step(Observation(png, **obs_kw), action, **kw)


def tap(x=50, y=120, text="OK") -> Action:
    return Action("tap", x=x, y=y, element=Target(index=1, text=text, bounds=(20, 100, 250, 160)))


def episode(seed: int, *, phone="real", app="settings", task=None, instruction=None, steps=None, outcome="success",
            verified_by="human", source="human") -> Episode:
    steps = steps or [step(seed * 10, tap()), step(seed * 10 + 1, Action("terminate", status="success"))]
    return Episode(instruction=instruction or f"do thing {seed}", source=source, device=Device(W, H, kind=phone),
                   app=app, task=task, outcome=outcome, verified_by=verified_by, steps=tuple(steps))


def corpus() -> dict[str, Episode]:
    """Named episodes; each name says what an op should do with it."""
    e = {}
    e["real_a"] = episode(1, app="settings", task="settings.wifi")
    e["real_b"] = episode(2, app="shop", task="shop.search")
    e["mock_a"] = episode(3, phone="mock", app="settings", task="settings.bt", source="oracle", verified_by="verifier")
    e["mock_b"] = episode(4, phone="mock", app="clock", task="clock.alarm", source="oracle", verified_by="verifier")
    e["failed"] = episode(5, outcome="failure")
    e["unverified"] = episode(6, verified_by="none")
    e["exact_dup"] = episode(1, app="settings", task="settings.wifi", instruction="do thing 1 again")
    near_steps = [step(0, tap(51), png=screen(10, tweak=1)), step(0, Action("terminate", status="success"),
                                                                   png=screen(11, tweak=1))]
    e["near_dup"] = episode(7, app="settings", task="settings.wifi", instruction="do thing 1", steps=near_steps)
    e["wifi_other"] = episode(17, app="settings", task="settings.wifi", instruction="do thing 1",
                              steps=[step(200, tap(52)), step(201, Action("terminate", status="success"))])
    e["blank"] = episode(8, steps=[step(0, tap(), png=screen(0, blank=True)),
                                   step(81, Action("terminate", status="success"))])
    e["noop"] = episode(9, steps=[step(90, tap()), step(90, tap(60, 130)), step(91, Action("terminate",
                                                                                              status="success"))])
    e["loop"] = episode(12, steps=[step(120 + (i % 2), Action("key", key="back")) for i in range(9)]
                        + [step(129, Action("terminate", status="success"))])
    e["pii"] = episode(13, app="messages", task="messages.send",
                       instruction="Text +1 415 555 0134 that my card 4111 1111 1111 1111 expired",
                       steps=[step(130, Action("input_text", text="mail me at jo@example.com"),
                                   ui_tree=tree("Call 415-555-0134", "jo@example.com")),
                              step(131, Action("terminate", status="success"))])
    e["unparseable"] = episode(14, steps=[step(140, tap(), raw_output="I think I should click somewhere"),
                                          step(141, Action("terminate", status="success"),
                                               raw_output='<tool_call>\n{"name": "mobile_use", "arguments": '
                                                          '{"action": "terminate", "status": "success"}}\n</tool_call>')])
    e["payment"] = episode(15, app="bank", task="bank.transfer", instruction="Transfer $20 to Bob")
    e["delete"] = episode(16, app="files", task="files.delete", instruction="Delete the file notes.txt")
    return e
