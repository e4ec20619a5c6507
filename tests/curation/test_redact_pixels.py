"""The redact op reads every screen of a real episode (issue 31): each distinct frame once,
text lines found first and only those the tree does not cover recognised, and a line
blurred when it holds detected PII, an "@" or a run of five digits."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw

from curation import ocr
from curation.ops.base import Context
from curation.ops.redact import redact
from curation.workset import EpisodeRow, StepRow
from datalake.types import Action
from mockphone.fonts import cjk_font

W, H = 540, 900


class Frames:
    def __init__(self) -> None:
        self.frames: dict[str, bytes] = {}

    def frame(self, sha: str) -> bytes:
        return self.frames[sha]


def screen(lines: list[str]) -> bytes:
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    for k, text in enumerate(lines):
        d.text((20, 40 + 80 * k), text, fill="black", font=cjk_font(26))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def tree(lines: list[str], texts: bool = True) -> str:
    nodes = "".join(f'<node index="{k}" text="{t if texts else ""}" content-desc="" class="android.widget.TextView" '
                    f'package="x" bounds="[0,{30 + 80 * k}][{W},{90 + 80 * k}]" />' for k, t in enumerate(lines))
    return (f'<hierarchy rotation="0"><node index="0" text="" content-desc="" class="android.widget.FrameLayout" '
            f'package="x" bounds="[0,0][{W},{H}]">{nodes}</node></hierarchy>')


def episode(frames: Frames, lines: list[str], ui_tree: str | None, n_steps: int = 1, eid: str = "e",
            sha: str | None = None) -> EpisodeRow:
    sha = sha or eid
    frames.frames[sha] = screen(lines)
    a = Action("tap", x=10, y=10)
    steps = [StepRow(index=i, frame_sha=sha, width=W, height=H, action_json=a.to_json(), action=a, ui_tree=ui_tree)
             for i in range(n_steps)]
    return EpisodeRow(episode_id=eid, instruction="Open the page", source="human", phone="real", app="x",
                      category=None, task=None, outcome="success", verified_by="human", policy=None, round=None,
                      width=W, height=H, steps=steps)


@pytest.mark.parametrize("line, blurred", [
    ("ref 48213 confirmed", True),  # a run of five digits
    ("write to me @ home", True),  # an "@"
    ("QQ 98 76 54 A", True),  # a handle, digit groups spaced
    ("Call Priya Raman", True),  # a name
    ("Settings and privacy", False),
    ("Battery 87%", False),
])
def test_a_line_drawn_on_a_webview_is_blurred_when_it_holds_pii_an_at_or_five_digits(line, blurred):
    frames = Frames()
    webview = (f'<hierarchy rotation="0"><node index="0" text="" content-desc="" class="android.webkit.WebView" '
               f'package="x" bounds="[0,0][{W},{H}]" /></hierarchy>')
    ctx = Context(frames)
    (out,) = redact([episode(frames, ["Account", line], webview)], ctx)
    assert (out.steps[0].image is not None) is blurred, ocr.read_text(frames.frames["e"])


def test_each_distinct_frame_is_read_once():
    frames = Frames()
    ws = [episode(frames, ["Account", "ref 48213"], None, n_steps=4, eid="a"),
          episode(frames, ["Account", "ref 48213"], None, n_steps=3, eid="b", sha="a")]  # the same frame again
    ctx = Context(frames)
    out = redact(ws, ctx)
    assert ctx.details["ocr"]["frames_read"] == 1
    assert all(s.image is not None for e in out for s in e.steps)


def test_a_screen_whose_tree_covers_all_drawn_text_needs_no_recognition(monkeypatch):
    frames = Frames()
    lines = ["Account", "Settings and privacy", "Help center"]
    calls = []
    real = ocr.recognise
    monkeypatch.setattr(ocr, "recognise", lambda px, boxes: calls.append(boxes) or real(px, boxes))
    ctx = Context(frames)
    redact([episode(frames, lines, tree(lines))], ctx)
    assert ctx.details["ocr"]["lines_found"] >= 3 and ctx.details["ocr"]["lines_recognised"] == 0
    assert all(not boxes for boxes in calls)
    ctx = Context(frames)
    redact([episode(frames, lines, tree(lines, texts=False), eid="empty")], ctx)  # the same pixels, empty nodes
    assert ctx.details["ocr"]["lines_recognised"] >= 3
