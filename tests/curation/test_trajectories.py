"""What curation keeps stays true: recorded histories, the number to type, training-only selections."""

from __future__ import annotations

import re

from pathlib import Path

import pytest
from datasets import load_dataset

from collectors.collect import run_all
from curation import workset
from curation.build import curate
from curation.errors import EmptySelection
from curation.exports import sft_rows
from curation.formats import parse_action
from curation.ops import OPS
from curation.ops.base import Context
from curation.pii import find_pii
from curation.recipe import parse_recipe
from datalake.lake import Lake
from mockphone.phone import MockPhone
from phones.episode import OraclePolicy
from tests.curation.data import corpus, episode

SFT = {"coords": "rel1000", "action_format": "json", "history": 4, "previous_screenshot": True, "thought": False}


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = Lake.init(tmp_path_factory.mktemp("trajectories") / "lake")
    named = corpus()
    lake.write_episodes(list(named.values()))
    return lake, {k: v.episode_id for k, v in named.items()}


def test_a_dropped_step_leaves_the_other_histories_intact(lake):
    lake, ids = lake
    (full,) = workset.load(lake, [ids["noop"]])
    (cut,) = OPS["drop_noop_steps"].fn([full], Context(lake))
    assert [s.index for s in cut.steps] == [1, 2]  # step 0 changed nothing and is dropped
    frame = Context(lake).frame
    rows_full = {r["step_index"]: r for r in sft_rows([full], SFT, lambda s: frame(s.frame_sha))}
    rows_cut = {r["step_index"]: r for r in sft_rows([cut], SFT, lambda s: frame(s.frame_sha))}
    for index in (1, 2):
        assert rows_cut[index]["messages"] == rows_full[index]["messages"]  # same previous actions
        assert rows_cut[index]["images"] == rows_full[index]["images"]  # same previous screenshot
    assert "Previous actions:\n1. " in rows_cut[1]["messages"][1]["content"][-1]["text"]


RECIPE = """
name: contacts
select: SELECT episode_id FROM episodes_resolved WHERE task = 'ContactsAdd'
ops:
  - op: redact{params}
split: {{by: episode, seed: 0, fractions: {{train: 1.0}}}}
exports:
  - {{format: sft, action_format: json}}
"""


@pytest.fixture(scope="module")
def contacts(tmp_path_factory):
    lake = Lake.init(tmp_path_factory.mktemp("contacts") / "lake")
    episodes, errors = run_all(MockPhone(seed=0), OraclePolicy.factory, ["ContactsAdd"], seeds=range(3))
    assert not errors and all(e.outcome == "success" for e in episodes)
    lake.write_episodes(episodes)
    return lake


def _number(text: str) -> str | None:
    """The one phone-number-like run in ``text`` (7+ digits with spaces, dashes, dots or brackets), as its
    last 9 digits: read from outside the detector, since a fake from a region with no fictional range is
    an invalid number on purpose and need not read as PHONE."""
    runs = [re.sub(r"\D", "", m) for m in re.findall(r"\+?\(?\d[\d \-().]{5,}\d", text or "")]
    runs = [r for r in runs if len(r) >= 7]
    return runs[0][-9:] if len(runs) == 1 else None


def typed_numbers(dv) -> list[tuple[str, str]]:
    """(number in the instruction, number typed) for every step that types a phone number."""
    out = []
    for row in load_dataset(dv.path, "sft", split="train"):
        task = row["messages"][1]["content"][-1]["text"].split("\n")[0]
        answer = row["messages"][2]["content"][0]["text"]
        action = parse_action(answer, "json", "rel1000", (1080, 2400))
        typed = _number(action.text) if action.type == "input_text" else None
        if typed:  # the name typed into the same form has no digits
            out.append((_number(task), typed))
    return out


@pytest.mark.parametrize("params, pseudonymised", [("", False), ("\n    phones: [real, mock]", True)])
def test_mock_contacts_add_still_types_the_number_its_instruction_names(contacts, params, pseudonymised):
    originals = {re.sub(r"\D", "", s.key)[-9:] for e in contacts.sql("SELECT instruction FROM episodes").to_pylist()
                 for s in find_pii(e["instruction"]) if s.kind == "PHONE"}
    assert len(originals) == 3
    dv = curate(contacts, parse_recipe(RECIPE.format(params=params)))
    pairs = typed_numbers(dv)
    assert len(pairs) == 3
    assert all(named == typed for named, typed in pairs)
    named = {n for n, _ in pairs}
    assert (named == originals) is not pseudonymised and (named & originals == set()) is pseudonymised


SELECT_ALL = """
name: everything
select: SELECT episode_id FROM episodes_resolved{include}
split: {{by: episode, seed: 0, fractions: {{train: 1.0}}}}
exports:
  - {{format: episodes}}
"""


def test_evaluation_episodes_are_left_out_unless_the_recipe_asks(tmp_path):
    lake = Lake.init(tmp_path / "lake")
    train = episode(1, task="a.task")
    baseline = episode(2, task="b.task", source="oracle", verified_by="verifier")
    baseline = type(baseline)(**{**baseline.__dict__, "episode_id": "", "purpose": "eval"})
    lake.write_episodes([train, baseline])
    dv = curate(lake, parse_recipe(SELECT_ALL.format(include="")), allow_unredacted=True)  # the selection is tested
    assert load_dataset(dv.path, "episodes", split="train")["episode_id"] == [train.episode_id]
    dv = curate(lake, parse_recipe(SELECT_ALL.format(include="\ninclude_eval: true")), allow_unredacted=True)
    assert len(load_dataset(dv.path, "episodes", split="train")) == 2
    only_eval = SELECT_ALL.format(include=" WHERE task <> 'a.task'")
    with pytest.raises(EmptySelection, match="include_eval"):
        curate(lake, parse_recipe(only_eval))
    assert Path(dv.path).is_dir()
