"""Writers of each public dataset's published on-disk form, for fixtures: TFRecord
(GZIP, masked CRC32C framing) of ``tf.train.Example`` protos, the JSON shapes, and a
pickled AndroidWorld checkpoint whose classes live in ``android_world.*`` modules."""

from __future__ import annotations

import dataclasses
import gzip
import json
import pickle
import sys
import types
import zlib
from pathlib import Path

import numpy as np

from collectors.importers import protos
from collectors.importers.tfrecord import write_records
from tests.factory import png

W, H = 1080, 2400


def raw_pixels(seed: int, size=(W, H)) -> bytes:
    """A screenshot as AitW stores it: raw uint8 RGB pixels, row-major (height, width, 3)."""
    pixels = np.full((size[1], size[0], 3), seed % 251, dtype=np.uint8)
    pixels[seed % size[1], :, 0] = 255
    return pixels.tobytes()


def aitw_step(episode: str, step: int, length: int, action_type: int, touch=(-1.0, -1.0), lift=(-1.0, -1.0),
              text: str = "", goal: str = "turn on wifi", size=(W, H), image: bytes | None = None) -> bytes:
    if image is None:
        image = raw_pixels(zlib.crc32(f"{episode}/{step}".encode()), size)
    return protos.example({
        "episode_id": [episode], "step_id": [step], "episode_length": [length], "goal_info": [goal],
        "image/encoded": [image], "image/width": [size[0]],
        "image/height": [size[1]], "image/channels": [3],
        "results/action_type": [action_type], "results/yx_touch": [float(v) for v in touch],
        "results/yx_lift": [float(v) for v in lift], "results/type_action": [text],
        "image/ui_annotations_positions": [0.1, 0.2, 0.05, 0.3], "image/ui_annotations_text": ["Wi-Fi"],
        "image/ui_annotations_ui_types": ["TEXT"], "device_type": ["pixel_6"], "android_api_level": [31],
        "current_activity": ["com.android.settings/.Settings"],
    })


def forest(text: str = "OK") -> bytes:
    f = protos.AndroidAccessibilityForest()
    window = f.windows.add(id=1, layer=0)
    root = window.tree.nodes.add(unique_id=1, class_name="android.widget.FrameLayout", package_name="com.example")
    root.bounds_in_screen.right, root.bounds_in_screen.bottom = W, H
    root.child_ids.append(2)
    button = window.tree.nodes.add(unique_id=2, class_name="android.widget.Button", text=text,
                                   view_id_resource_name="com.example:id/ok", is_clickable=True, is_enabled=True)
    button.bounds_in_screen.left, button.bounds_in_screen.top = 100, 200
    button.bounds_in_screen.right, button.bounds_in_screen.bottom = 300, 260
    return f.SerializeToString()


def androidcontrol_episode(episode: int, actions: list[dict], size=(W, H), declared=None) -> bytes:
    n = len(actions) + 1
    declared = declared or size
    return protos.example({
        "episode_id": [episode], "goal": [f"goal {episode}"],
        "screenshots": [png(episode * 100 + i, size) for i in range(n)],
        "screenshot_widths": [declared[0]] * n, "screenshot_heights": [declared[1]] * n,
        "accessibility_trees": [forest(f"b{i}") for i in range(n)],
        "actions": [json.dumps(a) for a in actions], "step_instructions": [f"do {i}" for i in range(len(actions))],
    })


def write_tfrecord(path: Path, records: list[bytes]) -> Path:
    write_records(path, records, compression="GZIP")
    return path


def write_odyssey(root: Path, episode: str, steps: list[dict], size=(W, H)) -> Path:
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    (root / "screenshots").mkdir(exist_ok=True)
    for i, step in enumerate(steps):
        step.setdefault("step", i)
        step.setdefault("screenshot", f"{episode}_{i}.png")
        (root / "screenshots" / step["screenshot"]).write_bytes(png(i + 7, size))
    record = {"episode_id": episode, "device_info": {"device_name": "Pixel 7 Pro", "w": size[0], "h": size[1]},
              "task_info": {"category": "Web_Shopping", "app": ["Chrome", "Amazon"], "meta_task": "buy {item}",
                            "task": "buy a pen", "instruction": "Buy a pen on Amazon"},
              "step_length": len(steps), "steps": steps}
    path = root / "annotations" / f"{episode}.json"
    path.write_text(json.dumps(record))
    return path


def write_amex(root: Path, episode: str, steps: list[dict], size=(W, H), dim=None, folder="episodes") -> Path:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "screenshot").mkdir(exist_ok=True)
    for i, step in enumerate(steps):
        step.setdefault("step_id", i)
        step.setdefault("image_path", f"{episode}_{i}.png")
        step.setdefault("device_dim", list(dim or size))
        for key in ("touch_coord", "lift_coord"):
            step.setdefault(key, [-1, -1])
        step.setdefault("type_text", "")
        (root / "screenshot" / step["image_path"]).write_bytes(png(i + 11, size))
    path = root / folder / f"{episode}.json"
    path.write_text(json.dumps({"episode_id": episode, "instruction": "Open the settings", "steps": steps}))
    return path


def write_odyssey_splits(root: Path, episodes: list[str]) -> None:
    """GUI-Odyssey's ``splits/``: one JSON per split scheme, episode file names per split."""
    (root / "splits").mkdir(parents=True, exist_ok=True)
    for scheme in ("random_split", "task_split", "device_split", "app_split"):
        (root / "splits" / f"{scheme}.json").write_text(json.dumps(
            {"train": [f"{e}.json" for e in episodes[:-1]], "test": [f"{e}.json" for e in episodes[-1:]]}))


def write_amex_element_anno(root: Path, image: str) -> Path:
    """AMEX's ``element_anno/``: one JSON per screenshot with its clickable and scrollable elements."""
    (root / "element_anno").mkdir(parents=True, exist_ok=True)
    path = root / "element_anno" / image.replace(".png", ".json")
    path.write_text(json.dumps({
        "image_path": image, "page_caption": "Settings home", "keyboard_activate": False,
        "clickable_elements": [{"bbox": [100, 200, 300, 260], "xpath": ["/hierarchy/node[1]"],
                                "resource_id": "android:id/title", "text": "Network", "functionality": "open network"}],
        "scrollable_elements": [{"bbox": [0, 160, 1080, 2200], "xpath": ["/hierarchy/node[0]"]}],
        "package": "com.android.settings", "activity": ".Settings"}))
    return path


@dataclasses.dataclass
class JSONAction:  # the shape of android_world.env.json_action.JSONAction
    action_type: str | None = None
    index: int | None = None
    x: int | None = None
    y: int | None = None
    text: str | None = None
    direction: str | None = None
    goal_status: str | None = None
    app_name: str | None = None
    keycode: str | None = None
    clear_text: bool | None = None


def android_world_module() -> type:
    """Register JSONAction under android_world.env.json_action so pickles name that module."""
    for name in ("android_world", "android_world.env", "android_world.env.json_action"):
        sys.modules.setdefault(name, types.ModuleType(name))
    JSONAction.__module__ = "android_world.env.json_action"
    sys.modules["android_world.env.json_action"].JSONAction = JSONAction
    return JSONAction


def write_android_world(path: Path, episodes: list[dict]) -> Path:
    android_world_module()
    with gzip.open(path, "wb") as fh:
        pickle.dump(episodes, fh)
    return path


def aw_episode(actions: list, success: float = 1.0, size=(W, H), goal="Turn wifi off") -> dict:
    rng = np.random.default_rng(len(actions))
    shots = []
    for _ in actions:
        shot = np.full((size[1], size[0], 3), 240, dtype=np.uint8)
        shot[:40, :40] = rng.integers(0, 255, size=(40, 40, 3), dtype=np.uint8)
        shots.append(shot)
    return {"goal": goal, "task_template": "SystemWifiTurnOff", "instance_id": 0, "seed": 30,
            "is_successful": success, "agent_name": "m3a_gpt4v", "episode_length": len(actions),
            "run_time": 12.5, "exception_info": None,
            "episode_data": {"raw_screenshot": shots, "action_output_json": actions,
                             "action_output": [f"Action: {a}" for a in actions],
                             "action_reason": ["because"] * len(actions), "summary": ["did it"] * len(actions)}}
