"""The intervals every report of the platform uses, in one place (the lowest floor, so that the
mock phone's boundary labels, the training experiment and ``phoneloop eval`` agree):

- ``wilson(k, n)``: the Wilson score 95% interval of a success rate (statsmodels);
- ``paired_difference(a, b)``: success of ``b`` minus ``a`` over the instances both ran, with a
  percentile bootstrap 95% interval over those pairs and McNemar's exact p (statsmodels).
"""

from __future__ import annotations

import random
from typing import Any, Hashable


def wilson(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n`` (95% by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    # the bounds at the ends are exact (statsmodels' arithmetic leaves 1 - 1e-16 at k == n)
    return (0.0 if successes == 0 else max(0.0, float(low))), (1.0 if successes == n else min(1.0, float(high)))


def paired_difference(a: dict[Hashable, bool], b: dict[Hashable, bool], resamples: int = 2000,
                      seed: int = 0) -> dict[str, Any]:
    """Success of ``b`` minus ``a`` over the keys (instances) both have, with a percentile bootstrap
    95% interval over those pairs (fixed seed: the same numbers on every run) and McNemar's exact p
    on the discordant pairs."""
    from statsmodels.stats.contingency_tables import mcnemar

    keys = sorted(set(a) & set(b))
    if not keys:
        return {"pairs": 0, "diff": None, "low": None, "high": None, "p_value": None}
    diffs = [float(b[k]) - float(a[k]) for k in keys]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(resamples))
    only_a, only_b = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    both = sum(a[k] and b[k] for k in keys)
    p_value = float(mcnemar([[both, only_a], [only_b, len(keys) - both - only_a - only_b]], exact=True).pvalue)
    return {"pairs": len(keys), "diff": sum(diffs) / len(diffs), "low": means[int(0.025 * resamples)],
            "high": means[int(0.975 * resamples) - 1], "only_a": only_a, "only_b": only_b, "p_value": p_value}
