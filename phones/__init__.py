"""Phones, below every stage that drives them: the Phone protocol, the adb phone, the one episode loop.

    from phones.episode import OraclePolicy, run_episode
    from phones.make import make_phone
    phone = make_phone("mock", "mock-0")
    episode = run_episode(phone, OraclePolicy(phone, task), task, seed=0)   # mock or adb phone alike

Modules: ``protocol`` (the Phone protocol, ``is_verifiable``), ``episode`` (run_episode,
Policy, OraclePolicy), ``adb_phone`` (AdbPhone: a real phone over adbutils), ``text``
(escaping for ``input text``), ``make`` (a phone by kind), ``errors``. ``collectors`` and
``rollout`` both import this package; it imports neither.
"""
