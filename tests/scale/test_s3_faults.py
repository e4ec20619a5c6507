"""Bad credentials and a missing bucket, as a user meets them on the command line: an S3
server on 127.0.0.1 that checks signatures (moto with authentication on), and the CLI's
message naming what is wrong, without a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.s3_server import S3Server

ROOT = str(Path(__file__).resolve().parents[2])
ALLOW_ALL = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})


@pytest.fixture(scope="module")
def signed_s3():
    """moto enforcing signatures after its first requests (which make a user, its key, its
    policy and the bucket); then requests signed with a wrong secret until one is refused,
    so authentication is on whatever the start-up health checks used of the free count."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("INITIAL_NO_AUTH_ACTION_COUNT", "12")
        server = S3Server().__enter__()
    try:
        iam = boto3.client("iam", endpoint_url=server.endpoint, region_name="us-east-1", aws_access_key_id="boot",
                           aws_secret_access_key="boot")
        iam.create_user(UserName="phoneloop")
        key = iam.create_access_key(UserName="phoneloop")["AccessKey"]
        iam.put_user_policy(UserName="phoneloop", PolicyName="all", PolicyDocument=ALLOW_ALL)
        env = {**server.storage_options, "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
               "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}
        boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                     aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                     aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"]).create_bucket(Bucket="lake")
        wrong = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                             aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key="wrong")
        for _ in range(20):
            try:
                wrong.list_buckets()
            except ClientError:
                break
        else:
            raise RuntimeError("moto never started checking signatures")
        yield env
    finally:
        server.__exit__(None, None, None)


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    return subprocess.run([sys.executable, "-m", "phoneloop.cli", *args], capture_output=True, text=True,
                          timeout=300, env={**clean, **env, "PYTHONPATH": ROOT})


def test_wrong_credentials_are_refused_with_the_lake_named(signed_s3):
    made = _cli(signed_s3, "lake", "init", "--lake", "s3://lake/team")
    assert made.returncode == 0, made.stderr
    wrong = {**signed_s3, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}
    for args in (["lake", "info"], ["lake", "init"]):
        out = _cli(wrong, *args, "--lake", "s3://lake/team")
        assert out.returncode == 2, out.stderr
        assert "cannot read the lake at s3://lake/team" in out.stderr and "ACCESS_DENIED" in out.stderr
        assert "Traceback" not in out.stderr + out.stdout
    assert _cli(signed_s3, "lake", "info", "--lake", "s3://lake/team").returncode == 0  # nothing was harmed


@pytest.mark.parametrize("command", ["init", "info"])
def test_a_bucket_that_does_not_exist_is_named_as_such(signed_s3, command):
    out = _cli(signed_s3, "lake", command, "--lake", "s3://no-such-bucket/team")
    assert out.returncode == 2, out.stderr
    message = " ".join(out.stderr.split())  # the console wraps long lines
    assert "the bucket 'no-such-bucket' of s3://no-such-bucket/team does not exist" in message
    assert "Traceback" not in out.stderr + out.stdout
