"""The execution layer: where phone workers run and how jobs reach them, for every stage that drives phones.

    from fleet.backends import make_backend
    from fleet.pool import Pool
    backend = make_backend("local", target="mypackage.worker:work")   # or "ray", address="auto"
    pool = Pool(backend, "mock", ["mock-0", "mock-1"], jobs, (lake_uri, spec_dict))
    pool.run(handle, on_death=...)

Modules: ``backends`` (spawned local processes, threads, Ray actors), ``placement`` (which
Ray node a phone's actor runs on), ``pool`` (the one scheduling loop), ``errors``. The
fleet does not know what a job does: ``collectors`` and ``rollout`` hand it a worker
("module:function") and read its messages; it imports neither.
"""
