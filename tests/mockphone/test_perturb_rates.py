"""Every interruption kind happens at its documented rate over 200 seeded oracle episodes (binomial bounds).

Opportunities of the once-per-launch kinds are counted from what the episode did (the
apps it opened), not from the perturber, so a kind that another one crowds out, or that
waits for a launch episodes never reach, fails here.
"""

import pytest
from scipy.stats import binom

from mockphone.perturb import ACCOUNT_APPS, ONE_OFF, PROFILES
from mockphone.phone import MockPhone
from mockphone.tasks.oracle import solve
from mockphone.tasks.registry import select

EPISODES = 240  # enough checkouts that each kind can be told drawn or not (more Bank templates joined the selector)
# checkout tasks, account apps and one without: every kind has enough opportunities to be told apart
SELECTOR = "ShopBuy*,ShopShipToAddress,FoodOrder*,Bank*,Mail*,ClockAddAlarm"
ALPHA = 1e-4  # each bound fails a correct implementation with probability 1e-4


@pytest.fixture(scope="module", params=["real-like", "heavy"])
def tallies(request):
    profile = PROFILES[request.param]
    names = [cls.name() for cls in select(SELECTOR)]
    opportunities, shown, first_launches, account_launches = {}, {}, 0, 0
    for i in range(EPISODES):
        phone = MockPhone(seed=i, perturbations=profile)
        task = select(names[i % len(names)])[0](seed=i)
        task.initialize_task(phone)
        solve(phone, task)
        for kind, n in phone.perturber.opportunities.items():
            opportunities[kind] = opportunities.get(kind, 0) + n
        for kind, n in phone.perturber.shown.items():
            shown[kind] = shown.get(kind, 0) + n
        apps = set(phone.system.opened)
        first_launches += len(apps)
        account_launches += len(apps & ACCOUNT_APPS)
    for kind in ONE_OFF:  # one draw per app and episode, whatever else that launch showed
        opportunities[kind] = account_launches if kind == "login" else first_launches
    return profile, opportunities, shown


@pytest.mark.parametrize("kind", sorted(PROFILES["real-like"].rates()))
def test_each_kind_appears_within_its_binomial_bounds(tallies, kind):
    profile, opportunities, shown = tallies
    n, rate = opportunities.get(kind, 0), profile.rates()[kind]
    low, high = binom.interval(1 - ALPHA, n, rate)
    assert low > 0, f"{kind}: only {n} opportunities at rate {rate}: the test cannot tell whether it is drawn"
    assert low <= shown.get(kind, 0) <= high, (
        f"{kind}: {shown.get(kind, 0)} in {n} opportunities at rate {rate} (expected {n * rate:.1f}, "
        f"bounds {low:.0f}..{high:.0f})")
