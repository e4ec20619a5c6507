"""Worker targets for tests/rollout/test_local_backend.py (importable by spawned processes)."""


def chatty(phone, jobs, results, parent_pid=None):
    """Streams messages while it works, so a SIGKILL lands mid-send as often as not."""
    while (job := jobs.get()) is not None:
        results.put({"kind": "started", "job": job, "phone": phone})
        for _ in range(100):
            results.put({"kind": "noise", "phone": phone, "pad": "x" * 4000})
        results.put({"kind": "ended", "job": job, "phone": phone})
    results.put({"kind": "done", "phone": phone})
