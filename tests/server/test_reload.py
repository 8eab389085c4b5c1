"""A server keeps serving while its index folder is rebuilt, and picks the new index up."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from docs_mcp_core.index.private_copies import host_name
from docs_mcp_server.snapshot import SNAPSHOT_DIRNAME, remove_stale_snapshots
from tests.support.programs import SERVER_COMMAND, build_with_cli, server_env
from tests.support.protocol import text

pytestmark = pytest.mark.integration  # starts processes or listens on ports

NEW_GUIDE = "# Zephyr quokkas\n\n## Feeding zephyr quokkas\n\nZephyrquokka rations are served at dawn.\n"


@pytest.fixture(scope="module")
def first_build(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> tuple[Path, Path]:
    """A copy of ``examples/docs`` and the index ``docs-mcp build`` made of it, built once for the
    module; a test that rebuilds works on its own copy of both (:func:`_own_copy`)."""
    root = tmp_path_factory.mktemp("reload-first-build")
    docs = root / "docs"
    shutil.copytree(examples_docs, docs)
    return docs, build_with_cli(docs, root / "idx")


def _own_copy(first_build: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """The docs folder and its built index, copied into ``tmp_path`` (an index holds no absolute path)."""
    docs, out = tmp_path / "docs", tmp_path / "idx"
    shutil.copytree(first_build[0], docs)
    shutil.copytree(first_build[1], out)
    return docs, out


@pytest.mark.anyio
async def test_a_rebuilt_index_is_served_without_a_restart(
    tmp_path: Path, first_build: tuple[Path, Path]
) -> None:
    docs, out = _own_copy(first_build, tmp_path)
    params = StdioServerParameters(
        command=SERVER_COMMAND,
        args=["--index-dir", str(out), "--log-level", "warning"],
        env=server_env(DOCS_MCP_RELOAD_CHECK_SECONDS="0"),
    )
    async with Client(params) as client:
        before = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert not before.is_error
        assert before.structured_content["hits"] == []
        retries = await client.call_tool("search_docs", {"query": "retry configuration"})
        assert retries.structured_content["hits"]

        (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
        build_with_cli(docs, out)

        after = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert not after.is_error, text(after.content[0])
        hit = after.structured_content["hits"][0]
        assert hit["chunk_id"] == "guides/quokkas.md#zephyr-quokkas/feeding-zephyr-quokkas"
        doc = await client.call_tool("get_doc", {"chunk_id": hit["chunk_id"]})
        assert "served at dawn" in text(doc.content[0])

        # a metadata.json that cannot be read leaves the last good index serving
        (out / "metadata.json").write_text("{not json", encoding="utf-8")
        still = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert not still.is_error
        assert still.structured_content["hits"][0]["chunk_id"] == hit["chunk_id"]


def test_metadata_json_is_written_last_by_a_build(first_build: tuple[Path, Path]) -> None:
    """The reload signal is metadata.json: it must not be older than the table it describes."""
    _, out = first_build
    metadata_time = (out / "metadata.json").stat().st_mtime_ns
    newest_table_file = max(p.stat().st_mtime_ns for p in (out / ".lancedb").rglob("*") if p.is_file())
    assert metadata_time >= newest_table_file
    assert json.loads((out / "metadata.json").read_text(encoding="utf-8"))["stats"]["total_chunks"] > 0


def test_a_change_seen_by_the_non_blocking_check_is_reloaded_by_the_next_get(
    tmp_path: Path, first_build: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The async path asks ``opened()`` first and falls back to ``get()``: the change that
    ``opened()`` noticed must not be forgotten until the next check interval."""
    from docs_mcp_server.engine import LazyEngine

    monkeypatch.setenv("DOCS_MCP_RELOAD_CHECK_SECONDS", "3600")
    docs, out = _own_copy(first_build, tmp_path)
    lazy = LazyEngine(out)
    first = lazy.get()
    (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
    build_with_cli(docs, out)
    lazy._next_check = 0.0  # the check interval has run out
    assert lazy.opened() is None
    fresh = lazy.get()
    assert fresh is not first
    assert fresh.search("zephyrquokka rations", limit=1).hits
    assert lazy.opened() is fresh


def test_a_call_that_started_on_the_old_index_finishes_on_it(
    tmp_path: Path, first_build: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild renames the old table away and deletes it; a call holding the old generation still
    reads all of it, calls starting afterwards get the new one, and the old files go with the last call."""
    from docs_mcp_server.engine import LazyEngine

    monkeypatch.setenv("DOCS_MCP_RELOAD_CHECK_SECONDS", "0")
    docs, out = _own_copy(first_build, tmp_path)
    lazy = LazyEngine(out)
    with lazy.lease() as old:
        hit = old.search("retry configuration", limit=1).hits[0]
        (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
        build_with_cli(docs, out)

        page = old.get_doc(hit.chunk_id, 2)  # reads rows that only the deleted table had
        assert page.startswith(f"--- Chunk: {hit.chunk_id}") or f"--- Chunk: {hit.chunk_id}" in page
        assert not old.search("zephyrquokka rations", limit=1).hits
        with lazy.lease() as new:
            assert new is not old
            assert new.search("zephyrquokka rations", limit=1).hits
            assert len(list((out / SNAPSHOT_DIRNAME).iterdir())) == 2
    assert len(list((out / SNAPSHOT_DIRNAME).iterdir())) == 1  # the old generation's links are gone
    lazy.close()
    assert not (out / SNAPSHOT_DIRNAME).exists()


@pytest.mark.integration
@pytest.mark.anyio
async def test_get_doc_is_served_by_the_old_index_until_the_server_looks_again(
    tmp_path: Path, first_build: tuple[Path, Path]
) -> None:
    """Between a rebuild and the server's next look at metadata.json every tool keeps working (on the
    previous index), although the build has moved and deleted the files that index was opened on."""
    docs, out = _own_copy(first_build, tmp_path)
    params = StdioServerParameters(
        command=SERVER_COMMAND,
        args=["--index-dir", str(out), "--log-level", "warning"],
        env=server_env(DOCS_MCP_RELOAD_CHECK_SECONDS="3600"),  # the server does not look again here
    )
    async with Client(params) as client:
        found = await client.call_tool("search_docs", {"query": "retry configuration"})
        chunk_id = found.structured_content["hits"][0]["chunk_id"]
        before = await client.call_tool("get_doc", {"chunk_id": chunk_id, "context": 1})
        assert not before.is_error

        (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
        await anyio.to_thread.run_sync(build_with_cli, docs, out)

        after = await client.call_tool("get_doc", {"chunk_id": chunk_id, "context": 1})
        assert not after.is_error, text(after.content[0])
        assert text(after.content[0]) == text(before.content[0])
        resource = await client.read_resource("docs:///guides/retries.md")
        assert "retr" in text(resource.contents[0]).lower()
    assert not (out / SNAPSHOT_DIRNAME).exists()  # a server that stops removes its snapshots


@pytest.mark.anyio
async def test_an_index_folder_removed_while_served_is_not_made_again_and_can_be_rebuilt(
    tmp_path: Path, first_build: tuple[Path, Path]
) -> None:
    """Opening the table (here for a resource) gave LanceDB a folder that no longer existed, which it
    made again: ``idx/.docs-mcp-serving/<host>-<pid>-<n>/.lancedb``, so ``docs-mcp build --out idx``
    refused a folder that holds other files than an index while the server ran."""
    from mcp import MCPError

    docs, out = _own_copy(first_build, tmp_path)
    params = StdioServerParameters(
        command=SERVER_COMMAND,
        args=["--index-dir", str(out), "--log-level", "warning"],
        env=server_env(DOCS_MCP_RELOAD_CHECK_SECONDS="0"),
    )
    async with Client(params) as client:
        assert not (await client.call_tool("search_docs", {"query": "retry configuration"})).is_error
        shutil.rmtree(out)
        with pytest.raises(MCPError) as refused:
            await client.read_resource("docs:///guides/webhooks.md")
        assert str(refused.value).endswith(
            "was removed after the index was opened (its folder was deleted or replaced); build the index "
            "again with docs-mcp build"
        )
        assert not out.exists()
        (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
        await anyio.to_thread.run_sync(build_with_cli, docs, out)
        after = await client.call_tool("search_docs", {"query": "zephyrquokka rations"})
        assert after.structured_content["hits"], text(after.content[0])
        resource = await client.read_resource("docs:///guides/webhooks.md")
        assert "signature" in text(resource.contents[0]).lower()


@pytest.mark.integration
@pytest.mark.anyio
async def test_healthz_and_resources_report_the_generation_served_after_a_reload(
    tmp_path: Path, first_build: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2

    from docs_mcp_server import create_app
    from docs_mcp_server.http import serve_http

    monkeypatch.setenv("DOCS_MCP_RELOAD_CHECK_SECONDS", "0")
    docs, out = _own_copy(first_build, tmp_path)
    app = create_app(out)
    try:
        async with serve_http(app) as server, httpx2.AsyncClient() as http:
            health_url = server.url.removesuffix("/mcp") + "/healthz"
            async with Client(server.url) as client:
                assert not (await client.call_tool("search_docs", {"query": "retry"})).is_error
                first = (await http.get(health_url)).json()["index"]
                names = [r.name for r in (await client.list_resources()).resources]
                assert "guides/quokkas.md" not in names

                (docs / "guides" / "quokkas.md").write_text(NEW_GUIDE, encoding="utf-8")
                await anyio.to_thread.run_sync(build_with_cli, docs, out)
                rebuilt = json.loads((out / "metadata.json").read_text(encoding="utf-8"))["stats"]

                assert (await client.call_tool("search_docs", {"query": "zephyrquokka"})).structured_content[
                    "hits"
                ]
                second = (await http.get(health_url)).json()["index"]
                resources = (await client.list_resources()).resources
                guide = await client.read_resource("docs:///guides/quokkas.md")
    finally:
        app.close()
    assert first["status"] == second["status"] == "ready"
    assert second["stats"] == rebuilt
    assert second["stats"]["indexed_at"] != first["stats"]["indexed_at"]
    assert second["stats"]["total_files"] == first["stats"]["total_files"] + 1
    quokkas = next(r for r in resources if r.name == "guides/quokkas.md")
    assert quokkas.title == "Guides / Zephyr quokkas"
    assert "served at dawn" in text(guide.contents[0])


def test_snapshots_left_by_a_killed_server_are_removed_by_the_next_one(built_index: Path) -> None:
    from docs_mcp_server.engine import LazyEngine
    from docs_mcp_server.snapshot import take_snapshot

    orphan = take_snapshot(built_index)
    assert orphan is not None
    host, _, number = orphan.path.name.rpartition("-")
    host = host.rpartition("-")[0]
    dead = orphan.path.rename(orphan.path.with_name(f"{host}-{2**22 + 1}-{number}"))  # above any pid
    elsewhere = orphan.path.with_name(f"other-host-{os.getpid()}-1")
    elsewhere.mkdir()
    try:
        lazy = LazyEngine(built_index)
        assert lazy.get().search("retry", limit=1).hits
        lazy.wait_swept(30)  # the sweep runs beside the first searches
        assert not dead.exists()
        assert elsewhere.is_dir()  # another host's server may still be using it
        lazy.close()
    finally:
        elsewhere.rmdir()
        with contextlib.suppress(OSError):  # still used by other servers of this test session
            (built_index / SNAPSHOT_DIRNAME).rmdir()


@pytest.mark.anyio
@pytest.mark.parametrize("number", ["99999999999999999999", "\u00b2"])
async def test_a_snapshot_folder_named_with_no_process_number_leaves_searches_working(
    tmp_path: Path, first_build: tuple[Path, Path], number: str
) -> None:
    # the stale-snapshot sweep read it as a pid (int('²') or os.kill raised): every search failed
    _, out = _own_copy(first_build, tmp_path)
    host = host_name()
    odd = out / SNAPSHOT_DIRNAME / f"{host}-{number}-1"
    odd.mkdir(parents=True)
    params = StdioServerParameters(
        command=SERVER_COMMAND, args=["--index-dir", str(out), "--log-level", "warning"], env=server_env()
    )
    async with Client(params) as client:
        found = await client.call_tool("search_docs", {"query": "retry configuration"})
        assert not found.is_error, text(found.content[0])
        assert found.structured_content["hits"]
    assert odd.is_dir()  # not a name a server gives: left alone


@pytest.mark.skipif(not os.path.exists("/proc/self/ns/pid"), reason="no pid namespaces to tell apart")
def test_a_snapshot_of_another_pid_namespace_with_this_host_name_is_left_alone(tmp_path: Path) -> None:
    # a container sharing the index folder and the host name (two containers of one pod) sees
    # none of this one's processes: its sweep took this server's live snapshot for a dead one's
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    plain = socket.gethostname().replace(os.sep, "_") or "localhost"
    other = tmp_path / SNAPSHOT_DIRNAME / f"{plain}-{child.pid}-1"
    dead = tmp_path / SNAPSHOT_DIRNAME / f"{host_name()}-{child.pid}-2"
    other.mkdir(parents=True)
    dead.mkdir()
    remove_stale_snapshots(tmp_path)
    assert other.is_dir() and not dead.exists()
