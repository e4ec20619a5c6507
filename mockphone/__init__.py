"""The simulated Android phone: screens, widgets, renderer, uiautomator XML, mock apps, tasks, verifiers.

    from datalake.types import Action
    from mockphone import MockPhone
    from mockphone.tasks.registry import get, select
    from mockphone.tasks.oracle import solve

    phone = MockPhone(seed=0)                       # 1080x2400 @ 420 dpi, 12 apps
    task = get("ShopSearchPriceRange")(seed=0)      # params drawn from the seed, validated
    task.initialize_task(phone)
    obs = phone.observe()                           # datalake.types.Observation (PNG + XML)
    phone.act(Action("open_app", app="shop"))       # any action of the shared vocabulary
    solve(phone, task)                              # the oracle demonstration, from the UI tree
    assert task.is_successful(phone) == 1.0         # verified against app state

Modules: ``phone`` (MockPhone), ``navigation`` (back stacks, shade, dialogs),
``gestures`` (what each action does), ``shell`` (the ``adb shell`` subset),
``widgets`` / ``layout`` / ``screen`` / ``render`` / ``uixml`` (one node tree drawn
as PNG and dumped as XML), ``apps/`` (one module per app), ``tasks/`` (TaskEval-shaped
tasks, registry and selectors, oracle runner), ``perturb`` (seeded interruptions and their
profiles), ``frames`` (region caching, PNG reuse, raw pixels), ``gym`` (a ``gymnasium.Env``)
and ``openenv_env`` (the same over OpenEnv's HTTP/WebSocket protocol).
"""

from mockphone.layout import Display
from mockphone.perturb import PROFILES, Perturbations, load_profile
from mockphone.phone import ActResult, MockPhone

__all__ = ["PROFILES", "ActResult", "Display", "MockPhone", "Perturbations", "load_profile"]
