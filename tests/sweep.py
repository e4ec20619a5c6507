"""The parametrised sweeps over every task template: sampled by default, full on demand.

``PHONELOOP_TEST_SWEEP=sampled`` (the default, what ``scripts/test.sh`` and CI run) gives
each template one seed, rotating over the sweep's seeds by the template's place in the
sorted list: every template is checked and every seed is used, in a third of the tests.
``PHONELOOP_TEST_SWEEP=full`` runs every (template, seed) pair; ``phoneloop tasks check
--seeds N`` runs the same invariants over seeds 0..N-1 outside pytest.
"""

import os

MODES = ("sampled", "full")
MODE = os.environ.get("PHONELOOP_TEST_SWEEP", "sampled")
if MODE not in MODES:
    raise RuntimeError(f"PHONELOOP_TEST_SWEEP={MODE!r}: expected one of {', '.join(MODES)}")


def template_seeds(names, seeds, mode: str = MODE) -> list[tuple[str, int]]:
    """(template, seed) pairs to parametrise a sweep with: all of them in ``full`` mode, one
    per template in ``sampled`` mode (the seed rotating so that each seed appears)."""
    names, seeds = sorted(names), list(seeds)
    if mode == "full":
        return [(n, s) for n in names for s in seeds]
    return [(n, seeds[i % len(seeds)]) for i, n in enumerate(names)]
