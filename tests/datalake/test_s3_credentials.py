"""An s3:// lake opened with no credentials anywhere names the missing credentials (issue 32),
instead of the SDK's "AWS Error UNKNOWN (HTTP status 500)"."""

import pytest

from datalake.errors import LakeError
from datalake.lake import Lake
from tests.adb.helpers import free_port


@pytest.fixture
def no_credentials(monkeypatch, tmp_path):
    import os

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.aws/credentials
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}", "AWS_ALLOW_HTTP": "true"}


def test_a_lake_with_no_s3_credentials_names_them(no_credentials):
    with pytest.raises(LakeError, match="no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        Lake.open("s3://bucket/lake", storage_options=no_credentials)


def test_with_credentials_the_error_is_the_requests_own(no_credentials):
    options = {**no_credentials, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
    with pytest.raises(LakeError, match="cannot read the lake at s3://bucket/lake") as info:
        Lake.open("s3://bucket/lake", storage_options=options)
    assert "no S3 credentials" not in str(info.value)
