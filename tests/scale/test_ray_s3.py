"""Ray actors writing to a lake on S3-compatible storage (moto on 127.0.0.1)."""

from __future__ import annotations

import uuid

import ray

from datalake.lake import Lake
from tests.factory import episode


@ray.remote(num_cpus=0.25, max_restarts=0)
class Appender:
    """One writer: opens the lake itself (as a rollout actor on another node would)."""

    def append(self, uri: str, options: dict, seeds: list[int]) -> int:
        lake = Lake.open(uri, storage_options=options)
        return sum(lake.write_episodes([episode(seed)]).written for seed in seeds)


def test_four_ray_actors_append_concurrently_to_an_s3_lake_and_lose_nothing(ray_cluster, s3):
    uri = f"s3://lake/{uuid.uuid4().hex}"
    Lake.init(uri, storage_options=s3.storage_options)
    shares = [list(range(w * 5, w * 5 + 5)) for w in range(4)]
    actors = [Appender.remote() for _ in shares]
    refs = [a.append.remote(uri, s3.storage_options, share) for a, share in zip(actors, shares)]
    written = ray.get(refs, timeout=300)
    for a in actors:
        ray.kill(a)
    assert written == [5, 5, 5, 5]
    lake = Lake.open(uri, storage_options=s3.storage_options)
    ids = [r["episode_id"] for r in lake.sql("SELECT episode_id FROM episodes").to_pylist()]
    assert sorted(ids) == sorted(episode(seed).episode_id for share in shares for seed in share)  # none lost, none twice
    steps = lake.sql("SELECT count(*) AS n FROM steps").to_pylist()[0]["n"]
    assert steps == sum(len(episode(seed).steps) for share in shares for seed in share)
    assert lake.info()["versions"]["episodes"] == 20  # one commit per append, none overwritten
