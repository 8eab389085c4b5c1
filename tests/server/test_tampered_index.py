"""A served index whose derived file is cut short in place (``cp`` over it, ``truncate``).

The engine maps the derived file into memory, and reading a mapping of a file truncated since
kills the process (SIGBUS). The server's snapshot therefore holds a private copy of that file,
shared by every snapshot of the same version, so the session goes on answering; the copies go
with the last snapshot that links them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_server.snapshot import COPY_PREFIX, SNAPSHOT_DIRNAME, take_snapshot
from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import ServerProcess


@pytest.fixture
def index(tmp_path: Path, built_index: Path) -> Path:
    out = tmp_path / "index"
    shutil.copytree(built_index, out, ignore=shutil.ignore_patterns(SNAPSHOT_DIRNAME))  # others serve it
    return out


@pytest.fixture
def server(index: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(["--index-dir", str(index), "--transport", "stdio"])
    try:
        process.send(INITIALIZE)
        assert process.receive()["id"] == 1
        process.send(INITIALIZED)
        yield process
    finally:
        process.stop()


def search(server: ServerProcess, request_id: int, query: str) -> dict[str, object]:
    arguments = {"query": query, "limit": 3}
    params = {"name": "search_docs", "arguments": arguments}
    server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
    answer = server.receive()
    assert answer["id"] == request_id
    return answer


@pytest.mark.integration
@pytest.mark.parametrize("length", [0, 64])
def test_a_derived_file_cut_short_under_a_serving_session_does_not_end_it(
    index: Path, server: ServerProcess, length: int
) -> None:
    before = search(server, 2, "retry configuration")
    assert "result" in before and not before["result"]["isError"]  # type: ignore[index]
    derived = list((index / ".lancedb").glob("*.derived"))
    assert derived
    for path in derived:
        os.truncate(path, length)  # what `cp` over the file or `truncate` does: same inode, cut short
    for request_id, query in enumerate(["retry configuration", "install", "authentication token"], 3):
        answer = search(server, request_id, query)
        assert "result" in answer, answer
    assert search(server, 9, "retry configuration")["result"] == before["result"]
    server.close_stdin()
    assert server.wait() == 0, server.stderr_text()
    assert not (index / SNAPSHOT_DIRNAME).exists()


def test_snapshots_of_one_version_share_one_private_copy_of_the_derived_file(index: Path) -> None:
    served = next((index / ".lancedb").glob("*.derived"))
    first, second = take_snapshot(index), take_snapshot(index)
    assert first is not None and second is not None
    copies = [s.path / ".lancedb" / served.name for s in (first, second)]
    assert copies[0].read_bytes() == served.read_bytes()
    assert copies[0].stat().st_ino == copies[1].stat().st_ino != served.stat().st_ino
    assert (index / ".lancedb" / "chunks.derived.json").stat().st_nlink == 3  # the rest is linked
    shared = [p.name for p in (index / SNAPSHOT_DIRNAME).iterdir() if p.name.startswith(COPY_PREFIX)]
    assert len(shared) == 1
    first.remove()
    assert copies[1].read_bytes() == served.read_bytes()
    second.remove()
    assert not (index / SNAPSHOT_DIRNAME).exists()  # the copy went with the last snapshot
