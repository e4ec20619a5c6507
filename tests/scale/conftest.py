"""Fixtures the scale tests share: the local S3 server (moto, 127.0.0.1) with a ``lake``
bucket, and a local Ray cluster on this machine's two cores (one per test module)."""

import pytest
import ray

from tests.s3_server import S3Server


@pytest.fixture(scope="module")
def s3():
    with S3Server() as server:
        server.create_bucket("lake")
        yield server


@pytest.fixture(scope="module")
def ray_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
