"""The sampled sweep still checks every template and uses every seed; full mode is the product."""

import os
import subprocess
import sys

from tests.sweep import template_seeds


def test_sampled_covers_every_template_once_and_every_seed():
    names = [f"T{i}" for i in range(10)]
    pairs = template_seeds(names, [0, 1, 2], mode="sampled")
    assert sorted(n for n, _ in pairs) == sorted(names)
    assert {s for _, s in pairs} == {0, 1, 2}


def test_full_is_every_pair():
    assert len(template_seeds(["A", "B"], [0, 1, 2], mode="full")) == 6


def test_an_unknown_mode_is_refused_by_name():
    out = subprocess.run([sys.executable, "-c", "import tests.sweep"], capture_output=True, text=True,
                         env={**os.environ, "PHONELOOP_TEST_SWEEP": "everything"})
    assert out.returncode != 0 and "PHONELOOP_TEST_SWEEP='everything'" in out.stderr
