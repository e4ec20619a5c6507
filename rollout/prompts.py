"""The prompt each output style is sent: JSON and Qwen3-VL use the training prompt
(``curation.exports.build_prompt``), UI-TARS gets its own mobile prompt and history.

The UI-TARS prompt follows the published ``MOBILE_USE`` template of UI-TARS-1.5: an
action space of ``click(start_box)``, ``long_press``, ``type(content)``, ``scroll``,
``drag(start_box, end_box)``, ``open_app``, ``press_home``/``press_back``,
``hotkey(key)``, ``wait``, ``finished(content)``, and a ``Thought: ... Action: ...`` reply.
Previous actions are written back in the same syntax, so the model reads its own history.
"""

from __future__ import annotations

from curation.coords import to_model
from datalake.actions import UITARS, describe
from curation.elements import render_marks
from datalake.types import Action

UITARS_SYSTEM = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the next action to complete the task.

## Output Format
```
Thought: ...
Action: ...
```

## Action Space
click(start_box='<|box_start|>(x1,y1)<|box_end|>')
long_press(start_box='<|box_start|>(x1,y1)<|box_end|>')
type(content='') #If you want to submit your input, use "\\n" at the end of `content`.
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')
drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
open_app(app_name='')
press_home()
press_back()
hotkey(key='enter or back or home')
wait() #Sleep for 5s and take a screenshot to check for any changes.
finished(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the content in normal python string format.

## Note
- Use English in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in `Thought` part.
- Coordinates are {coords}.
"""


def prompt(instruction: str, history: list[tuple[Action, tuple[int, int]]], style: str, coords: str,
           elements: list | None = None, size: tuple[int, int] | None = None) -> list[dict]:
    """System + user messages (one screenshot placeholder) for one step in ``style``; with ``elements``
    (``curation.elements.marks`` of the screen, of ``size``) the element list the exports show."""
    from curation.exports import COORDS_TEXT, build_prompt  # imports datasets (~2 s): only when a model acts

    if style != "uitars":
        screen = None if elements is None else render_marks(elements, coords, size)
        return build_prompt(instruction, history, {"action_format": style, "coords": coords}, n_images=1,
                            elements=screen)

    lines = [f"## User Instruction\n{instruction}"]
    if history:
        lines.append("## Previous actions")
        lines.extend(f"{k + 1}. Action: {format_uitars(a, coords, size)}" for k, (a, size) in enumerate(history))
    return [{"role": "system", "content": [{"type": "text", "text": UITARS_SYSTEM.format(coords=COORDS_TEXT[coords])}]},
            {"role": "user", "content": [{"type": "image", "text": None}, {"type": "text", "text": "\n".join(lines)}]}]


def _box(x: float, y: float, coords: str, size: tuple[int, int]) -> str:
    mx, my = to_model(x, y, coords, size)
    return f"<|box_start|>{UITARS.point(mx, my)}<|box_end|>"


def format_uitars(a: Action, coords: str, size: tuple[int, int]) -> str:
    """One action in UI-TARS syntax (for the history lines of the prompt), points in ``coords``."""
    return describe(a, UITARS, point=lambda x, y: _box(x, y, coords, size))
