"""Training fixtures: one lake per session with the tiny model built once, three dataset versions,
and one SFT model trained once (the tests that need a trained policy share it)."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from datalake.lake import Lake
from datalake.types import Action, Device, Episode, Observation, Step, Target
from tests.training.mockdata import oracle_episode

SAMPLE = Path(__file__).resolve().parents[2] / "phoneloop" / "sample" / "episodes.jsonl"
W, H = 270, 600
CLOCK_TASK = "ClockDisableAlarm"
MEMO = {  # instruction -> the one action a trained model must reproduce
    "Turn on Wi-Fi": Action("tap", x=135, y=130, element=Target(index=1, text="Wi-Fi", bounds=(20, 100, 250, 160))),
    "Write hello": Action("input_text", text="hello"),
}


def _screen(seed: int) -> bytes:
    img = Image.new("RGB", (W, H), "white")
    ImageDraw.Draw(img).rectangle([20, 100, 250, 160], fill=(seed * 80 % 256, 120, 200))
    buf = BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def _memo_episodes() -> list[Episode]:
    return [Episode(instruction=text, source="human", device=Device(W, H, kind="real"), app="memo", task=f"memo.{k}",
                    outcome="success", verified_by="human", steps=(Step(Observation(_screen(k)), action),))
            for k, (text, action) in enumerate(MEMO.items())]


def _recipe(name: str, where: str, exports: str) -> str:
    return (f"name: {name}\nselect: SELECT episode_id FROM episodes WHERE {where}\n"
            f"split: {{by: episode, seed: 0, fractions: {{train: 1.0}}}}\nexports:\n{exports}")


@pytest.fixture(scope="session")
def train_lake(tmp_path_factory) -> Lake:
    """memo@v1 (2 one-step episodes), clock@v1 (oracle episodes on mock phones), both with sft+grpo exports;
    eponly@v1 (episodes export only); the bundled sample is in the lake too."""
    from curation.build import curate
    from curation.recipe import parse_recipe
    from datalake.interchange import import_jsonl

    lake = Lake.init(tmp_path_factory.mktemp("train") / "lake")
    import_jsonl(lake, SAMPLE)
    lake.write_episodes(_memo_episodes())
    lake.write_episodes([oracle_episode(CLOCK_TASK, seed) for seed in (0, 2)])
    both = "  - {format: sft}\n  - {format: grpo}\n"
    curate(lake, parse_recipe(_recipe("memo", "app = 'memo'", both)), allow_unredacted=True)  # synthetic "real" memos
    curate(lake, parse_recipe(_recipe("clock", f"task = '{CLOCK_TASK}'", both)))
    curate(lake, parse_recipe(_recipe("eponly", "app != 'memo'", "  - {format: episodes}\n")),
           allow_unredacted=True)  # the bundled sample's real episodes, exported as they are on purpose
    return lake


@pytest.fixture(scope="session")
def tiny_path(train_lake) -> Path:
    from training.tiny import tiny_model

    return tiny_model(train_lake.uri)


@pytest.fixture(scope="session")
def sft_model(train_lake, tiny_path):
    """The tiny model fine-tuned on memo@v1 until it reproduces both actions (registered as memo-sft)."""
    from training.sft import SFTRun, run_sft

    return run_sft(train_lake, SFTRun(dataset="memo@v1", output="memo-sft", model="tiny", max_steps=60,
                                      batch_size=2, learning_rate=5e-3, save_steps=1000))
