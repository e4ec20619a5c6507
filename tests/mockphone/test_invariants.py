"""Every registered task keeps the verifier invariants (the same checks ``phoneloop tasks check`` runs)."""

import functools

import pytest

from datalake.types import Action
from mockphone.tasks import invariants
from mockphone.tasks.registry import REGISTRY
from tests.mockphone.helpers import WifiOff
from tests.sweep import template_seeds

NAMES = sorted(REGISTRY)
SEEDS = [0, 1, 2]


@pytest.mark.parametrize("name,seed", template_seeds(NAMES, SEEDS))  # every template; all seeds in full mode
def test_every_wrong_but_plausible_ending_scores_below_one(name, seed):
    cls = REGISTRY[name]
    assert len(invariants.wrong_endings(cls(seed=seed), seed)) >= 2
    assert invariants.check_wrong_endings(cls, seed) == []


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_same_screens_actions_and_score(name):
    assert invariants.check_determinism(REGISTRY[name], 0) == []


@pytest.mark.parametrize("name", NAMES)
def test_start_screen_render_and_xml_agree(name):
    assert invariants.check_render_xml(REGISTRY[name], 0) == []


@pytest.fixture(scope="module")
def fuzz_report():
    return _fuzz_report()  # cached per process: a worker that runs both fuzzer tests builds it once


@functools.cache
def _fuzz_report():
    """The fuzzer over the sweep's (template, seed) pairs: in sampled mode each template at its one seed
    (the donors drawn from the templates of that seed), in full mode every template at every seed."""
    report = invariants.FuzzReport()
    for seed in SEEDS:
        names = [n for n, s in template_seeds(NAMES, SEEDS) if s == seed]
        part = invariants.fuzz([REGISTRY[n] for n in names], seeds=[seed], rng_seed=12 + seed, per_task=2)
        report.pairs += part.pairs
        report.unchanged += part.unchanged
        report.damaged += part.damaged
        report.inside += part.inside
        report.failures += part.failures
    return report


FUZZ_PAIRS = len(template_seeds(NAMES, SEEDS)) * 2  # per_task draws per (template, seed)


def test_collateral_damage_fuzzer_finds_no_fooled_verifier(fuzz_report):
    print(f"\ncollateral-damage fuzzer: {fuzz_report.to_dict()}")
    assert fuzz_report.failures == []


def test_fuzzer_pairs_mostly_change_state_and_damage_is_decided_without_the_verifier(fuzz_report):
    assert fuzz_report.pairs >= 0.9 * FUZZ_PAIRS  # a draw that changed nothing is drawn again
    assert fuzz_report.changed_share > 0.5 and fuzz_report.damaged > 0.9 * fuzz_report.pairs


class _LeakyVerifier(WifiOff):
    """A deliberately weak task: it allows every change, so the fuzzer must still agree with it (canary)."""

    allowed = ("*",)


class _BrokenOracle(_LeakyVerifier):
    """A deliberately broken task: its oracle does nothing."""

    allowed = ("system.settings[global/wifi_on]",)

    def oracle(self, ui):
        yield Action("wait", seconds=1)


def test_invariants_catch_a_broken_oracle():
    failures, _ = invariants.check([_BrokenOracle], seeds=[0], fuzz_per_task=1)
    assert {f.invariant for f in failures} >= {"oracle-one"}
    assert all(f.task == "_BrokenOracle" and f.seed == 0 for f in failures)


def test_allow_everything_task_lets_side_effects_through_and_the_check_names_it():
    failures = invariants.check_wrong_endings(_LeakyVerifier, 0)
    assert any("side-effect" in f.detail for f in failures)


class _GuiOnlyMixed(_LeakyVerifier):
    """A deliberately broken mixed task: its tool path calls a tool that does not exist."""

    category = "mixed"
    via = "gui"
    allowed = ("system.settings[global/wifi_on]",)

    def oracle(self, ui):
        if self.via == "tool":
            yield Action("tool", name="wifi.off", args={})
        else:
            yield Action("shell", command="svc wifi disable")


def test_oracle_check_runs_every_path_of_a_mixed_task():
    failures = invariants.check_oracle_one(_GuiOnlyMixed, 0)
    assert [f.detail.split(" scores")[0] for f in failures] == ["oracle via tool"]
    assert invariants.check_oracle_one(REGISTRY["MixedWifiOff"], 0) == []
