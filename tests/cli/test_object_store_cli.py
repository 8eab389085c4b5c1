"""The command line against an index in an S3-compatible object store (moto on 127.0.0.1).

``docs-mcp search`` and ``docs-mcp get`` take the same locations and ``--storage-option`` flags as
``docs-mcp build``; two builds publishing to one prefix at once: the second is refused.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_core.index.location import GENERATION_PREFIX, open_storage
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.s3_server import S3Endpoint, s3_server
from tests.support.programs import cli_env, docs_mcp_command

pytestmark = pytest.mark.integration  # starts processes or listens on ports

BUCKET = "docs-mcp-cli-tests"
LOCK_OBJECT = ".docs-mcp-build.lock"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with s3_server() as endpoint:
        endpoint.create_bucket(BUCKET)
        yield endpoint


def _env(s3: S3Endpoint | None) -> dict[str, str]:
    env = {k: v for k, v in cli_env().items() if not k.startswith("AWS_")}
    if s3 is not None:
        env.update(s3.environment())
    return env


def _run(
    *args: str | Path, s3: S3Endpoint | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*docs_mcp_command(), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=_env(s3),
    )


def _flags(s3: S3Endpoint) -> list[str]:
    flags: list[str] = []
    for key, value in s3.storage_options().items():
        flags += ["--storage-option", f"{key}={value}"]
    return flags


def test_search_and_get_read_an_object_store_index_like_a_folder(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    uri = f"s3://{BUCKET}/cli/examples"
    local = tmp_path / "idx"
    for out in (uri, local):
        done = _run("build", "--docs-dir", examples_docs, "--out", out, s3=s3)
        assert done.returncode == 0, done.stderr

    # configured by flags alone (no AWS_* variables), as the server and the build are
    remote = _run("search", "retry configuration", "--index-dir", uri, "--json", *_flags(s3))
    assert remote.returncode == 0, remote.stderr
    here = _run("search", "retry configuration", "--index-dir", local, "--json")
    assert here.returncode == 0, here.stderr
    remote_hits = json.loads(remote.stdout)["hits"]
    assert remote_hits
    assert [h["chunk_id"] for h in remote_hits] == [h["chunk_id"] for h in json.loads(here.stdout)["hits"]]

    chunk_id = remote_hits[0]["chunk_id"]
    got = _run("get", chunk_id, "--index-dir", uri, "--context", "1", s3=s3)  # configured by the environment
    assert got.returncode == 0, got.stderr
    assert got.stdout == _run("get", chunk_id, "--index-dir", local, "--context", "1").stdout


def test_search_names_a_missing_remote_index_and_bad_flags(s3: S3Endpoint) -> None:
    missing = _run("search", "retry", "--index-dir", f"s3://{BUCKET}/nothing/here", s3=s3)
    assert missing.returncode == 1
    assert f"s3://{BUCKET}/nothing/here/metadata.json" in missing.stderr
    assert "s3:/" + BUCKET not in missing.stderr.replace("s3://", "")  # never turned into a local path
    bad = _run("get", "a.md#x", "--index-dir", f"s3://{BUCKET}/x", "--storage-option", "endpoint")
    assert bad.returncode == 2
    assert "--storage-option" in bad.stderr and "KEY=VALUE" in bad.stderr
    scheme = _run("search", "retry", "--index-dir", "ftp://host/x")
    assert scheme.returncode == 2
    assert "unsupported index location 'ftp://host/x'" in scheme.stderr


def test_a_second_build_publishing_to_the_same_prefix_is_refused(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    uri = f"s3://{BUCKET}/cli/locked"
    done = _run("build", "--docs-dir", examples_docs, "--out", uri, s3=s3)
    assert done.returncode == 0, done.stderr
    storage = open_storage(uri, s3.storage_options())
    published = storage.read_bytes("metadata.json")

    with FakeOpenAI() as api:
        api.hold()
        first = subprocess.Popen(
            [
                *docs_mcp_command(),
                "build",
                "--docs-dir",
                str(examples_docs),
                "--out",
                uri,
                "--embedding-provider",
                "openai",
                "--embedding-model",
                "text-embedding-3-small",
                "--embedding-base-url",
                api.base_url,
                "--embedding-api-key",
                api.api_key,
                "--cache-dir",
                str(tmp_path / "cache"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(s3),
        )
        try:
            api.wait_for(lambda: bool(api.requests_to("embeddings")) or first.poll() is not None, timeout=90)
            assert api.requests_to("embeddings"), "the first build never reached its embedding preflight"
            assert storage.exists(LOCK_OBJECT)
            second = _run("build", "--docs-dir", examples_docs, "--out", uri, s3=s3, timeout=120)
            assert second.returncode == 1, second.stderr
            assert f"another build (pid {first.pid}" in second.stderr
            assert "Traceback" not in second.stderr
            assert storage.read_bytes("metadata.json") == published
            assert first.poll() is None
        finally:
            api.release()
            try:
                stdout, stderr = first.communicate(timeout=180)
            finally:
                if first.poll() is None:
                    first.kill()
                    first.wait(timeout=10)
    assert first.returncode == 0, stderr
    assert uri in stdout
    assert not storage.exists(LOCK_OBJECT)
    live = json.loads(storage.read_bytes("metadata.json"))
    assert live["embedding"]["provider"] == "openai"
    previous = json.loads(published)["index"]["path"]
    generations = sorted(n for n in storage.list_names() if n.startswith(GENERATION_PREFIX))
    assert generations == sorted([previous, live["index"]["path"]])  # nothing from the refused build
