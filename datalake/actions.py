"""One action as one line of text, in a vocabulary: ``WORDS`` for people, ``UITARS`` for models.

    describe(Action("tap", x=540, y=1210, element=...))       # "tap 'Wi-Fi' at 540,1210"
    describe(action, UITARS, point=lambda x, y: box(x, y))    # "click(start_box='...')"

Annotators read ``WORDS`` (``annotate.tasks``: the action beside the frame); rollout
prompts write a policy's history back in ``UITARS`` syntax (``rollout.prompts``), with
``point`` turning device pixels into the model's coordinates. One walk over the action's
fields feeds both: a vocabulary is only templates, so a new action type or field is
described in one place.

Template fields: ``kind`` (the type, spaces for underscores), ``target`` (`` 'Wi-Fi'``:
the element's text, description or resource id), ``at`` (the vocabulary's ``at``
template around the start point, empty without one), ``p`` / ``p2`` (start and end
points), ``text``, ``app``, ``command``, ``tool`` (quoted by the vocabulary), ``key``,
``direction``, ``status``. A template named ``TYPE:KEY`` (``key:home``) wins for that key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from datalake.types import Action

Point = Callable[[float, float], str]


@dataclass(frozen=True)
class Vocabulary:
    templates: dict[str, str]  # action type (or TYPE:KEY) -> template
    default: str  # for types without a template
    at: str  # the start point's phrase, around {p}; "" when the action has no point
    quote: Callable[[str | None], str]  # how text fields are written
    point: Point  # device pixels -> text, unless describe() is given another


def _uitars_quote(text: str | None) -> str:
    return (text or "").replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")


WORDS = Vocabulary(
    templates={"swipe": "swipe {p} -> {p2}", "scroll": "scroll {direction}{target}{at}",
               "input_text": "type {text}{target}{at}", "key": "press {key}", "open_app": "open app {app}",
               "answer": "{kind} {text}", "ask_user": "{kind} {text}", "terminate": "terminate ({status})",
               "shell": "shell {command}", "tool": "tool {tool}"},
    default="{kind}{target}{at}", at=" at {p}", quote=repr, point=lambda x, y: f"{x:g},{y:g}")

UITARS = Vocabulary(  # the UI-TARS-1.5 MOBILE_USE action space (rollout.prompts.UITARS_SYSTEM)
    templates={"tap": "click(start_box='{p}')", "double_tap": "left_double(start_box='{p}')",
               "long_press": "long_press(start_box='{p}')", "swipe": "drag(start_box='{p}', end_box='{p2}')",
               "scroll": "scroll({at}direction='{direction}')", "input_text": "type(content='{text}')",
               "open_app": "open_app(app_name='{app}')", "key": "hotkey(key='{key}')", "key:home": "press_home()",
               "key:back": "press_back()", "answer": "finished(content='{text}')",
               "terminate": "finished(content='{text}')", "ask_user": "call_user(content='{text}')"},
    default="wait()", at="start_box='{p}', ", quote=_uitars_quote, point=lambda x, y: f"({round(x)},{round(y)})")


def describe(action: Action, vocabulary: Vocabulary = WORDS, point: Point | None = None) -> str:
    """``action`` as one line in ``vocabulary`` (see the module docstring for the fields)."""
    point = point or vocabulary.point
    el = action.element
    name = (el.text or el.content_desc or el.resource_id) if el is not None else None
    p = point(action.x, action.y) if action.x is not None and action.y is not None else ""
    p2 = point(action.x2, action.y2) if action.x2 is not None and action.y2 is not None else ""
    q = vocabulary.quote
    fields = {"kind": action.type.replace("_", " "), "target": f" {name!r}" if name else "",
              "at": vocabulary.at.format(p=p) if p else "", "p": p, "p2": p2, "text": q(action.text),
              "app": q(action.app), "command": q(action.command), "tool": q(action.name), "key": action.key,
              "direction": action.direction, "status": action.status}
    templates = vocabulary.templates
    template = templates.get(f"{action.type}:{action.key}") or templates.get(action.type, vocabulary.default)
    return template.format(**fields)
