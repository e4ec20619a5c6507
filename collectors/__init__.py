"""Turning phones into episodes in the lake: collection runs, the device farm, demo recording, importers.

    from collectors.collect import collect
    from phones.episode import OraclePolicy
    collect("./lake", phone, OraclePolicy.factory, ["SettingsWifiOff"], seeds=range(3))

Modules: ``collect`` (collect, run_all, write), ``farm`` (listing devices, one worker per
serial), ``farm_phones`` (phone refs, health checks), ``farm_pool`` (the farm's worker on
a ``fleet`` backend), ``gestures`` (getevent lines to tap/long_press/swipe/scroll),
``recorder`` (human demonstrations from ``getevent -lt``), ``human`` (oracle
demonstrations with human noise and labelled detours), ``mock_collect`` (``phoneloop
collect mock``: spawned workers, batched writes), ``importers``, ``errors``. The phone
protocol, the adb phone and the episode loop are in ``phones``; the job pool in ``fleet``.
"""

from collectors.collect import CollectReport, collect, run_all, write

__all__ = ["CollectReport", "collect", "run_all", "write"]
