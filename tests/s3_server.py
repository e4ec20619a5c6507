"""An S3-compatible server on 127.0.0.1 for tests: moto in server mode, as its own process.

    with S3Server() as s3:
        s3.create_bucket("lake")
        Lake.init("s3://lake/l1", storage_options=s3.storage_options)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx

ACCESS_KEY, SECRET_KEY, REGION = "phoneloop-test", "phoneloop-test-secret", "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class S3Server:
    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    @property
    def storage_options(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": REGION,
                "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}

    @property
    def env(self) -> dict[str, str]:
        """The standard environment variables a user would export for this server."""
        return dict(self.storage_options)

    def __enter__(self) -> S3Server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(self.endpoint, timeout=1)
                return self
            except httpx.HTTPError:
                if self.proc.poll() is not None:
                    raise RuntimeError("moto server exited at start")
                time.sleep(0.2)
        raise RuntimeError(f"moto server did not answer on {self.endpoint}")

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def upload_folder(self, folder, bucket: str, prefix: str) -> int:
        client, n = self.client(), 0
        for root, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(root, name)
                key = f"{prefix}/{os.path.relpath(path, folder)}"
                client.upload_file(path, bucket, key)
                n += 1
        return n
