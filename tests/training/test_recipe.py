"""The recipe experiment refuses evaluation suites that overlap its training set (before any compute)."""

from dataclasses import replace

import pytest

from training.recipe import QUICK, SuiteOverlapsTraining, check_suites


@pytest.mark.parametrize("change,message", [
    ({"eval_seeds": (1, 100)}, "shares 3 instance"),  # a training seed in the held-out seeds
    ({"ood_template": ("MailStar",)}, "trained template"),
    ({"ood_app": ("SettingsBluetoothOn",)}, "trained app"),
])
def test_recipe_refuses_suites_that_overlap_its_training_set(change, message):
    check_suites(QUICK)  # the shipped suites pass
    with pytest.raises(SuiteOverlapsTraining, match=message):
        check_suites(replace(QUICK, **change))
