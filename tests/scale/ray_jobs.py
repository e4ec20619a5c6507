"""A phone worker for the Ray backend tests: speaks the pool's worker protocol, does no phone work.

Each job is ``{"job": N, "seconds": S}``: the worker says ``started``, sends its process id
(so a test can kill the actor's process mid-job), sleeps ``S`` and sends ``result``."""

from __future__ import annotations

import os
import time


def work(phone: str, jobs, results, parent=None) -> None:
    try:
        while (job := jobs.get()) is not None:
            results.put({"kind": "started", "phone": phone, "job": job})
            results.put({"kind": "pid", "phone": phone, "pid": os.getpid(), "job": None})
            time.sleep(job["seconds"])
            results.put({"kind": "result", "phone": phone, "job": job})
    finally:
        results.put({"kind": "done", "phone": phone})


def where(phone: str, jobs, results, parent=None) -> None:
    """Says which Ray node this worker runs on (first, whether or not it gets a job), then ends its jobs."""
    import ray

    try:
        results.put({"kind": "node", "phone": phone, "node": ray.get_runtime_context().get_node_id(), "job": None})
        while (job := jobs.get()) is not None:
            results.put({"kind": "started", "phone": phone, "job": job})
            results.put({"kind": "result", "phone": phone, "job": job})
    finally:
        results.put({"kind": "done", "phone": phone})
