from dataclasses import replace

import pytest

from curation import workset
from curation.ops import OPS
from curation.ops.balance import assign_splits
from curation.ops.base import Context
from curation.pii import find_pii
from datalake.lake import Lake
from tests.curation.data import corpus


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    lake = Lake.init(tmp_path_factory.mktemp("curation") / "lake")
    named = corpus()
    assert lake.write_episodes(list(named.values())).written == len(named)
    ids = {name: ep.episode_id for name, ep in named.items()}
    return lake, ids


def run(loaded, op, names=None, **params):
    lake, ids = loaded
    chosen = [ids[n] for n in (names or ids)]
    ws = workset.load(lake, chosen)
    ctx = Context(lake)
    out = OPS[op].fn(ws, ctx, **params)
    by_id = {v: k for k, v in ids.items()}
    return {by_id[e.episode_id]: e for e in out}, ctx


def test_every_op_has_a_docstring():
    assert all(op.doc for op in OPS.values())


def test_filter_keeps_verified_successes(loaded):
    kept, _ = run(loaded, "filter", outcome=["success"], verified_by=["human", "verifier"])
    assert "failed" not in kept and "unverified" not in kept and "real_a" in kept and "mock_a" in kept


def test_filter_by_step_count(loaded):
    kept, _ = run(loaded, "filter", max_steps=3)
    assert "loop" not in kept and "noop" in kept


def test_drop_noop_steps_removes_gestures_that_change_nothing(loaded):
    kept, _ = run(loaded, "drop_noop_steps", ["noop", "real_a"])
    assert [s.index for s in kept["noop"].steps] == [1, 2]
    assert len(kept["real_a"].steps) == 2


def test_drop_loops_removes_episodes_that_revisit_a_screen(loaded):
    kept, _ = run(loaded, "drop_loops", ["loop", "real_a"], max_visits=3)
    assert set(kept) == {"real_a"}


def test_drop_bad_frames_removes_blank_screens(loaded):
    kept, ctx = run(loaded, "drop_bad_frames", ["blank", "real_a"])
    assert [s.index for s in kept["blank"].steps] == [1]
    assert ctx.details["bad_frames"]["blank"] == 1


def test_drop_unparseable_removes_steps_with_bad_model_output(loaded):
    kept, _ = run(loaded, "drop_unparseable", ["unparseable"], style="qwen3vl")
    assert [s.index for s in kept["unparseable"].steps] == [1]


def test_drop_out_of_bounds_uses_the_resolved_action(loaded):
    lake, ids = loaded
    ws = workset.load(lake, [ids["real_a"]])
    from dataclasses import replace
    from datalake.types import Action
    bad = Action("tap", x=5000, y=10)
    ws[0].steps[0] = replace(ws[0].steps[0], action=bad, action_json=bad.to_json())
    out = OPS["drop_out_of_bounds"].fn(ws, Context(lake))
    assert [s.index for s in out[0].steps] == [1]


def test_dedup_exact_keeps_the_first_of_same_task_and_actions(loaded):
    kept, _ = run(loaded, "dedup_exact", ["real_a", "exact_dup", "real_b"])
    assert set(kept) == {"real_a", "real_b"}


def test_dedup_near_drops_episodes_with_near_identical_screens(loaded):
    kept, ctx = run(loaded, "dedup_near", ["real_a", "near_dup", "real_b"], threshold=6)
    assert set(kept) == {"real_a", "real_b"}
    assert ctx.details["near_duplicate_episodes"]


def test_dedup_near_keeps_the_same_task_on_different_screens(loaded):
    kept, _ = run(loaded, "dedup_near", ["real_a", "wifi_other"], threshold=6)
    assert set(kept) == {"real_a", "wifi_other"}


def test_dedup_near_keeps_near_identical_screens_with_another_instruction(loaded):
    lake, ids = loaded
    ws = workset.load(lake, [ids["real_a"], ids["near_dup"]])
    ws[1].instruction = "do thing 2"
    assert len(OPS["dedup_near"].fn(ws, Context(lake), threshold=6)) == 2


def test_split_keeps_every_name_of_a_task_in_one_split(loaded):
    lake, ids = loaded
    base = workset.load(lake, [ids["real_a"]])[0]
    names = [("settings.wifi_on", "Turn on Wi-Fi"), ("SettingsWifiOn", "Enable the Wi-Fi"),
             (None, "turn on wi-fi!"), ("settings-wifi-on", "Switch Wi-Fi on")]
    for seed in range(12):
        ws = [replace(base, episode_id=f"w{k}", task=task, instruction=text, steps=list(base.steps))
              for k, (task, text) in enumerate(names)]
        ws += [replace(base, episode_id=f"o{k}", task=f"other.task{k}", instruction=f"other {k}",
                       steps=list(base.steps)) for k in range(20)]
        assign_splits(ws, by="task", seed=seed, fractions={"train": 0.5, "val": 0.25, "test": 0.25})
        assert len({e.split for e in ws[:4]}) == 1, seed
        assert len({e.split for e in ws}) == 3


def test_dedup_frames_drops_repeated_screen_action_pairs(loaded):
    kept, _ = run(loaded, "dedup_frames", ["real_a", "exact_dup"], threshold=0)
    assert sum(len(e.steps) for e in kept.values()) == 2


def test_redact_pseudonymises_pii_everywhere_and_blurs_the_screen(loaded):
    kept, ctx = run(loaded, "redact", ["pii", "real_a"])
    pii = kept["pii"]
    assert "4111" not in pii.instruction and "555 0134" not in pii.instruction
    assert [s.kind for s in find_pii(pii.instruction)] == ["PHONE", "CARD"]  # still a phone and a card: fakes
    typed = pii.steps[0].action.text
    assert "jo@example.com" not in typed and typed.startswith("mail me at user") and typed.endswith("@example.com")
    assert "jo@example.com" not in pii.steps[0].ui_tree and "415-555-0134" not in pii.steps[0].ui_tree
    fake_email = typed.removeprefix("mail me at ")
    assert fake_email in pii.steps[0].ui_tree  # the same fake in the typed text and the tree
    assert pii.steps[0].image is not None and pii.steps[0].image != ctx.frame(pii.steps[0].frame_sha)
    assert kept["real_a"].steps[0].image is None
    kinds = {(r["field"], r["kind"]) for r in ctx.details["redaction_records"]}
    assert {("instruction", "CARD"), ("instruction", "PHONE"), ("action", "EMAIL"),
            ("ui_tree", "PHONE"), ("ui_tree", "EMAIL"), ("screenshot_blur", "REGION")} <= kinds
    assert all("value" not in r for r in ctx.details["redaction_records"])


def test_redact_leaves_mock_phones_alone_unless_asked(loaded):
    kept, _ = run(loaded, "redact", ["mock_a"])
    assert kept["mock_a"].unredacted is None
    kept, ctx = run(loaded, "redact", ["mock_a"], phones=["real", "mock"], ocr="never")
    assert kept["mock_a"].unredacted is not None


@pytest.mark.parametrize("text, kinds", [
    ("call 138 0013 8000 now", {"PHONE"}),
    ("card 4111-1111-1111-1111", {"CARD"}),
    ("card 4111 1111 1111 1112", set()),  # fails Luhn: not a card, and too many digits for a phone
    ("id 11010519491231002X", {"ID"}),
    ("ssn 536-22-8726", {"ID"}),
    ("write to a.b+c@mail.example.org", {"EMAIL"}),
    ("meeting on 2026-11-29 at 10:30", set()),
    ("price $129.99, 3 items", set()),
    ("2024-05-01 10:30", set()),
    ("Set an alarm for 07:30 on 2024-05-01", set()),
    ("+44 20 7946 0018", {"PHONE"}),
    ("(415) 555-0134", {"PHONE"}),
    ("19950410 1640", set()),  # a compact date and time: "1640" is a valid German number to libphonenumber
    ("order #3103314 shipped", set()),  # seven digits, no area code
    ("PIN 1640 for card ending 4242, ref 20240501", set()),
    ("030 1234 5678", {"PHONE"}),  # Berlin, written nationally
])
def test_pii_detection(text, kinds):
    assert {s.kind for s in find_pii(text)} == kinds


@pytest.mark.parametrize("order", [("redact", "safety_tags"), ("safety_tags", "redact")])
def test_new_recipient_fires_with_redaction_in_the_recipe(loaded, order):
    lake, ids = loaded
    ws = workset.load(lake, [ids["pii"], ids["real_a"]])
    ctx = Context(lake)
    for op in order:
        ws = OPS[op].fn(ws, ctx)
    assert ws[0].tags == ["new_recipient"] and ws[1].tags == []
    assert "jo@example.com" not in ws[0].steps[0].action.text  # and the export stays redacted


def test_one_untasked_instruction_with_pii_stays_in_one_split_after_redaction(loaded):
    """The split sees one task, grouped on what was recorded."""
    lake, ids = loaded
    base = workset.load(lake, [ids["pii"]])[0]
    ws = [replace(base, episode_id=f"p{k}", task=None, steps=list(base.steps)) for k in range(6)]
    ws += [replace(base, episode_id=f"o{k}", task=f"other.task{k}", instruction=f"other {k}",
                   steps=list(base.steps)) for k in range(20)]
    ws = OPS["redact"].fn(ws, Context(lake), ocr="never")
    assert len({e.instruction for e in ws[:6]}) == 1  # one value, one fake in the whole lake
    for seed in range(8):
        assign_splits(ws, by="task", seed=seed, fractions={"train": 0.5, "val": 0.5})
        assert len({e.split for e in ws[:6]}) == 1, seed


def test_safety_tags_mark_payments_and_deletions_and_can_drop(loaded):
    kept, ctx = run(loaded, "safety_tags", ["payment", "delete", "real_a", "pii"])
    assert kept["payment"].tags == ["payment"] and kept["delete"].tags == ["deletion"]
    assert kept["pii"].tags == ["new_recipient"] and kept["real_a"].tags == []
    kept, _ = run(loaded, "safety_tags", ["payment", "real_a"], drop=["payment"])
    assert set(kept) == {"real_a"}


def test_balance_caps_each_group(loaded):
    kept, _ = run(loaded, "balance", ["real_a", "exact_dup", "near_dup", "real_b"], by="task", max_episodes=1)
    assert len([k for k in kept if kept[k].task == "settings.wifi"]) == 1 and "real_b" in kept


def test_mix_sets_the_real_to_mock_step_ratio(loaded):
    names = ["real_a", "real_b", "exact_dup", "near_dup", "mock_a"]
    kept, ctx = run(loaded, "mix", names, real=1, mock=1)
    assert ctx.details["mix"] == {"real_steps": 2, "mock_steps": 2}
    again, _ = run(loaded, "mix", names, real=1, mock=1)
    assert set(again) == set(kept)  # seeded


def test_splits_are_leak_free_by_task_and_seeded(loaded):
    lake, ids = loaded
    ws = workset.load(lake, list(ids.values()))
    counts = assign_splits(ws, by="task", seed=3, fractions={"train": 0.6, "val": 0.2, "test": 0.2})
    assert sum(counts.values()) == len(ws)
    split_of_task = {}
    for e in ws:
        key = e.task or e.instruction.strip().lower()
        assert split_of_task.setdefault(key, e.split) == e.split
    first = [e.split for e in ws]
    assign_splits(ws, by="task", seed=3, fractions={"train": 0.6, "val": 0.2, "test": 0.2})
    assert [e.split for e in ws] == first


def test_values_written_next_to_each_other_are_each_found():
    from curation.pii import find_pii

    text = "canary6.person@corp-mail.net +1 415 555 0106 4539 1488 0603 4368 110105194912161060"
    assert [(s.kind, text[s.start:s.end]) for s in find_pii(text)] == [
        ("EMAIL", "canary6.person@corp-mail.net"), ("PHONE", "+1 415 555 0106"), ("CARD", "4539 1488 0603 4368"),
        ("ID", "110105194912161060")]
    assert find_pii("2024-05-01 10:30 and 12 34 56") == []


@pytest.mark.parametrize("op, params", [("dedup_exact", {}), ("dedup_near", {}), ("dedup_frames", {"threshold": 0})])
def test_dedup_after_redact_still_sees_a_repeated_episode_with_pii(loaded, op, params):
    """A dedup op after redaction compares what was recorded."""
    lake, ids = loaded
    (pii,) = workset.load(lake, [ids["pii"]])
    ws = [pii, replace(pii, episode_id="again", steps=list(pii.steps))]
    ctx = Context(lake)
    ws = OPS["redact"].fn(ws, ctx, ocr="never")
    assert ws[0].steps[0].action.text == ws[1].steps[0].action.text  # one value, one fake in the lake
    kept = OPS[op].fn(ws, ctx, **params)
    assert sum(len(e.steps) for e in kept) == len(pii.steps)


def test_dates_times_prices_and_order_numbers_are_never_pii():
    """A seeded fuzz over the numbers phone screens show that are not personal data."""
    import random

    rng = random.Random(0)
    for _ in range(300):
        y, m, d = rng.randrange(1990, 2030), rng.randrange(1, 13), rng.randrange(1, 29)
        h, mi, sec = rng.randrange(24), rng.randrange(60), rng.randrange(60)
        for text in (f"{y}-{m:02d}-{d:02d} {h:02d}:{mi:02d}", f"{d:02d}/{m:02d}/{y} {h}:{mi:02d}",
                     f"{y}{m:02d}{d:02d} {h:02d}{mi:02d}", f"{y}-{m:02d}-{d:02d}T{h:02d}:{mi:02d}:{sec:02d}Z",
                     f"${rng.randrange(10 ** 6)}.{rng.randrange(100):02d}", f"order #{rng.randrange(10 ** 7)}",
                     f"{rng.randrange(1, 100)} items at {h}:{mi:02d} on {y}-{m:02d}-{d:02d}",
                     f"PIN {rng.randrange(10 ** 4):04d} ref {y}{m:02d}{d:02d}"):
            assert find_pii(text) == [], text
