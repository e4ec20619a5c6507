"""Small, deterministic test data: PNG screens, UI trees, episodes, interchange files."""

from __future__ import annotations

import json
from io import BytesIO
from pathlib import Path

from PIL import Image

from datalake.types import Action, Device, Episode, Observation, Step

W, H = 108, 240


def png(seed: int, size: tuple[int, int] = (W, H)) -> bytes:
    """A distinct small PNG per seed."""
    color = (seed * 37 % 256, seed * 91 % 256, seed * 53 % 256)
    img = Image.new("RGB", size, color)
    img.putpixel((seed % size[0], (seed // size[0]) % size[1]), (255 - color[0], 0, 0))
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def ui_tree(label: str = "OK") -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
            f'<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" '
            f'content-desc="" clickable="false" enabled="true" bounds="[0,0][{W},{H}]">'
            f'<node index="0" text="{label}" resource-id="com.example:id/ok" class="android.widget.Button" '
            f'package="com.example" content-desc="" clickable="true" enabled="true" bounds="[10,20][60,50]" />'
            '</node></hierarchy>')


def episode(seed: int = 0, n_steps: int = 3, **kwargs) -> Episode:
    steps = [Step(Observation(png(seed * 100 + i), ui_tree=ui_tree(), package="com.example"),
                  Action("tap", x=20 + i, y=30)) for i in range(n_steps - 1)]
    steps.append(Step(Observation(png(seed * 100 + n_steps - 1)), Action("terminate", status="success")))
    defaults = dict(instruction=f"task {seed}", source="human", device=Device(W, H), app="settings",
                    outcome="success", verified_by="human")
    defaults.update(kwargs)
    return Episode(steps=tuple(steps), **defaults)


def record(seed: int, folder: Path, n_steps: int = 2, **overrides) -> dict:
    """An interchange record whose screenshots are written into ``folder/frames``."""
    (folder / "frames").mkdir(parents=True, exist_ok=True)
    steps = []
    for i in range(n_steps):
        name = f"frames/s{seed}_{i}.png"
        (folder / name).write_bytes(png(seed * 100 + i))
        steps.append({"screenshot": name, "ui_tree": ui_tree(), "action": {"type": "tap", "x": 20, "y": 30}})
    rec = {"instruction": f"task {seed}", "source": "human", "app": "settings",
           "device": {"width": W, "height": H}, "outcome": "success", "steps": steps}
    rec.update(overrides)
    return rec


def write_jsonl(path: Path, records: list) -> Path:
    """Records may be dicts (dumped as JSON) or raw bytes lines."""
    with open(path, "wb") as fh:
        for rec in records:
            fh.write(rec if isinstance(rec, bytes) else json.dumps(rec).encode())
            fh.write(b"\n")
    return path


def truncated_png(seed: int) -> bytes:
    data = png(seed)
    return data[: len(data) // 2]


def corrupt_png(seed: int) -> bytes:
    data = bytearray(png(seed))
    data[40] ^= 0xFF  # inside IDAT: the CRC no longer matches
    return bytes(data)




def ray_seeing_phones(serials):
    """Start a local Ray cluster (2 CPUs) whose one node "sees" the adb phones ``serials``
    (a custom resource ``adb:SERIAL`` each, as real-phone actors are pinned); stop it with ``ray.shutdown()``."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             resources={f"adb:{serial}": 1 for serial in serials})
