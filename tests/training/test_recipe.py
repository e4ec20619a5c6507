"""The recipe experiment refuses evaluation suites that overlap its training set (before any compute)."""

from dataclasses import replace

import pytest

from training.recipe import QUICK, RecipeConfig, SuiteOverlapsTraining, check_suites


@pytest.mark.parametrize("change,message", [
    ({"eval_seeds": (1, 100)}, "shares 3 instance"),  # a training seed in the held-out seeds
    ({"ood_template": ("MailStar",)}, "trained template"),
    ({"ood_app": ("SettingsBluetoothOn",)}, "trained app"),
])
def test_recipe_refuses_suites_that_overlap_its_training_set(change, message):
    check_suites(QUICK)  # the shipped suites pass
    with pytest.raises(SuiteOverlapsTraining, match=message):
        check_suites(replace(QUICK, **change))


def test_recipe_refuses_another_seed_whose_instance_repeats_a_training_one():
    # ClockCancelTimer on seed 102 is the same instance (content and oracle episode) as on training seed 2:
    # a seed-only check would let a memorising model look like one that generalises
    check_suites(RecipeConfig())  # the shipped default passes
    with pytest.raises(SuiteOverlapsTraining, match=r"ClockCancelTimer on seed 102 is the training instance"):
        check_suites(replace(QUICK, train_seeds=(0, 1, 2), eval_seeds=(100, 102)))
