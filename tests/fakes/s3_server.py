"""A real S3-compatible server on 127.0.0.1 for object-store tests (moto's threaded server).

``moto`` is a dev dependency; tests that use :func:`s3_server` skip cleanly without it. The server
speaks the S3 REST API over plain HTTP on a free port, so LanceDB's storage layer and pyarrow's S3
client talk to it exactly as they would to MinIO or AWS.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

ACCESS_KEY = "docs-mcp-test-key"
SECRET_KEY = "docs-mcp-test-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Endpoint:
    url: str  # http://127.0.0.1:<port>

    def storage_options(self) -> dict[str, str]:
        """Explicit storage options (LanceDB key names) for this server."""
        return {
            "aws_endpoint": self.url,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION,
            "allow_http": "true",
        }

    def environment(self) -> dict[str, str]:
        """The standard AWS environment variables pointing at this server."""
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": REGION,
            "AWS_ALLOW_HTTP": "true",
        }

    def create_bucket(self, name: str) -> None:
        from pyarrow import fs

        filesystem = fs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
            endpoint_override=self.url,
            scheme="http",
            allow_bucket_creation=True,
        )
        filesystem.create_dir(name)


@contextmanager
def s3_server() -> Iterator[S3Endpoint]:
    """Start moto's S3 server on 127.0.0.1 (a free port) for the duration of the block."""
    server_module = pytest.importorskip("moto.server", reason="moto is not installed (dev dependency)")
    pytest.importorskip("flask", reason="moto's server needs flask (dev dependency)")
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield S3Endpoint(f"http://{host}:{port}")
    finally:
        server.stop()
