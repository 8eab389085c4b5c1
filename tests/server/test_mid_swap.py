"""A server started on a folder that a build was killed in while it swapped a new index in serves a
complete index (the one the next build's repair keeps), reads only, and says so once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index, recover_interrupted_swap
from docs_mcp_core.metadata import read_metadata
from docs_mcp_server.boot import load_index_metadata
from docs_mcp_server.engine import LazyEngine
from docs_mcp_server.errors import BootError
from docs_mcp_server.snapshot import SNAPSHOT_DIRNAME
from tests.support.mid_swap import NEW_HIT, build_two_indexes, stopped
from tests.support.protocol import INITIALIZE, INITIALIZED
from tests.support.server_process import ServerProcess, run_server

NEW_GUIDE = "# Zephyr quokkas\n\n## Feeding zephyr quokkas\n\nZephyrquokka rations are served at dawn.\n"
MID_SWAP_LOG = "the index folder was left mid-swap by a build"


@pytest.fixture(scope="module")
def two_indexes(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> tuple[Path, Path]:
    return build_two_indexes(tmp_path_factory.mktemp("mid-swap"), examples_docs, NEW_GUIDE)


def _contents(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` (but a server's snapshots) with a file's bytes."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(folder.rglob("*"))
        if SNAPSHOT_DIRNAME not in p.relative_to(folder).parts
    }


def _served(out: Path) -> tuple[str, list[str]]:
    """What a server on ``out`` serves: its metadata's ``indexed_at`` and the hits of two queries."""
    view = load_index_metadata(out)
    lazy = LazyEngine(out)
    try:
        engine = lazy.get()
        assert engine.metadata.stats.indexed_at == view.stats["indexed_at"]
        hits = [
            hit.chunk_id
            for query in ("zephyrquokka rations", "retry configuration")
            for hit in engine.search(query, limit=1).hits
        ]
        return engine.metadata.stats.indexed_at, hits
    finally:
        lazy.close()


@pytest.mark.parametrize(
    ("renames", "which"),
    [(1, "previous"), (2, "new"), (3, "new")],
    ids=["between-the-table-renames", "after-the-table-rename", "after-the-chunks-rename"],
)
def test_a_server_serves_the_index_the_next_build_keeps(
    two_indexes: tuple[Path, Path], tmp_path: Path, renames: int, which: str
) -> None:
    out = stopped(two_indexes, tmp_path / "idx", renames)
    before = _contents(out)
    indexed_at, hits = _served(out)
    expected = read_metadata(two_indexes[0] if which == "previous" else two_indexes[1])
    assert indexed_at == expected.stats.indexed_at
    if which == "new":
        assert hits == [NEW_HIT]  # the new corpus only: no row of the previous table
    else:
        assert NEW_HIT not in hits and any(hit.startswith("guides/") for hit in hits)
    assert _contents(out) == before  # nothing renamed, written or removed
    recover_interrupted_swap(out)  # what the next build does first
    assert read_metadata(out).stats.indexed_at == indexed_at
    assert _served(out) == (indexed_at, hits)


def test_a_live_folder_without_a_table_beside_the_old_one(
    two_indexes: tuple[Path, Path], tmp_path: Path
) -> None:
    # stopped between the table renames, then a tool opened .lancedb and so created it empty
    out = stopped(two_indexes, tmp_path / "idx", 1)
    (out / ".lancedb").mkdir()
    indexed_at, hits = _served(out)
    assert indexed_at == read_metadata(two_indexes[0]).stats.indexed_at
    assert hits and NEW_HIT not in hits


def test_the_served_index_is_kept_until_a_build_publishes_another(
    two_indexes: tuple[Path, Path], tmp_path: Path, examples_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server on a folder left mid-swap does not reload on every call, not when the next build
    finishes the swap (the same files), and does when that build publishes its own index."""
    monkeypatch.setenv("DOCS_MCP_RELOAD_CHECK_SECONDS", "0")
    out = stopped(two_indexes, tmp_path / "idx", 2)
    lazy = LazyEngine(out)
    try:
        first = lazy.get()
        assert [h.chunk_id for h in first.search("zephyrquokka rations", limit=1).hits] == [NEW_HIT]
        assert lazy.get() is first and lazy.get() is first
        recover_interrupted_swap(out)
        assert lazy.get() is first
        build_index(BuildOptions(docs_dir=examples_docs, out_dir=out))
        fresh = lazy.get()
        assert fresh is not first
        assert not fresh.search("zephyrquokka rations", limit=1).hits
    finally:
        lazy.close()


def test_where_no_snapshot_can_be_made_the_complete_index_is_opened_from_outside_the_folder(
    two_indexes: tuple[Path, Path], tmp_path: Path
) -> None:
    out = stopped(two_indexes, tmp_path / "idx", 1)
    (out / SNAPSHOT_DIRNAME).write_text("", encoding="utf-8")  # no snapshot folder can be made here
    before = _contents(out)
    lazy = LazyEngine(out)
    try:
        engine = lazy.get()
        assert engine.metadata.stats.indexed_at == read_metadata(two_indexes[0]).stats.indexed_at
        assert engine.search("retry configuration", limit=1).hits
        generation = lazy._current
        assert generation is not None and generation.snapshot is not None
        view = generation.snapshot.path
        assert not view.resolve().is_relative_to(out.resolve())
    finally:
        lazy.close()
    assert not view.exists()
    assert _contents(out) == before


def test_a_first_build_stopped_before_its_table_went_live_leaves_no_index(
    two_indexes: tuple[Path, Path], tmp_path: Path
) -> None:
    out = stopped(two_indexes, tmp_path / "idx", 0)
    for name in (".lancedb", "chunks.json", "metadata.json"):  # a first build: nothing before it
        shutil.rmtree(out / name) if name == ".lancedb" else (out / name).unlink()
    with pytest.raises(BootError) as info:
        load_index_metadata(out)
    assert str(info.value) == (
        f"no complete index in '{out}': a build was stopped while it replaced the index there (it "
        f"left metadata.json.tmp). Re-run docs-mcp build --out {out} to build it again."
    )


@pytest.mark.integration
def test_the_server_command_on_a_folder_left_mid_swap(two_indexes: tuple[Path, Path], tmp_path: Path) -> None:
    out = stopped(two_indexes, tmp_path / "idx", 2)
    server = ServerProcess(["--index-dir", str(out), "--log-level", "info"])
    try:
        server.send(INITIALIZE)
        assert server.receive()["id"] == INITIALIZE["id"]
        server.send(INITIALIZED)
        call = {"name": "search_docs", "arguments": {"query": "zephyrquokka rations"}}
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        answer = server.receive()
        assert [h["chunk_id"] for h in answer["result"]["structuredContent"]["hits"]] == [NEW_HIT]
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    said = [json.loads(line) for line in server.stderr_lines if MID_SWAP_LOG in line]
    assert len(said) == 1, server.stderr_text()
    assert "the next docs-mcp build finishes or undoes the swap" in said[0]["message"]
    assert said[0]["properties"]["metadata"] == "metadata.json.tmp"


@pytest.mark.integration
def test_the_server_command_on_a_folder_with_no_complete_index(
    two_indexes: tuple[Path, Path], tmp_path: Path
) -> None:
    out = stopped(two_indexes, tmp_path / "idx", 1)
    shutil.rmtree(out / ".lancedb.old" / "chunks.lance")  # the previous table is damaged too
    result = run_server(["--index-dir", str(out)])
    assert result.returncode != 0
    assert f"no complete index in '{out}'" in result.stderr
    assert "Re-run docs-mcp build" in result.stderr
