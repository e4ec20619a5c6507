"""Turning phones into episodes: the Phone protocol, the adb phone, the episode loop, demo recording.

    from collectors import run_episode, OraclePolicy, collect
    episode = run_episode(phone, OraclePolicy(phone, task), task, seed=0)   # mock or adb phone alike
    collect("./lake", phone, OraclePolicy.factory, ["SettingsWifiOff"], seeds=range(3))

Modules: ``phone`` (the Phone protocol), ``loop`` (run_episode, OraclePolicy, collect),
``adb_phone`` (AdbPhone: a real phone over adbutils), ``text`` (escaping for ``input text``),
``farm`` (listing devices, one worker per serial), ``gestures`` (getevent lines to
tap/long_press/swipe/scroll), ``recorder`` (human demonstrations from ``getevent -lt``),
``human`` (oracle demonstrations with human noise and labelled detours), ``mock_collect``
(``phoneloop collect mock``: spawned workers, batched writes), ``errors``.
"""

from collectors.loop import CollectReport, OraclePolicy, Policy, collect, run_all, run_episode
from collectors.phone import Phone, is_verifiable

__all__ = ["CollectReport", "OraclePolicy", "Phone", "Policy", "collect", "is_verifiable", "run_all", "run_episode"]
