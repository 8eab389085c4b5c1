"""A build writes only where an index, or nothing, is: a non-empty ``--out`` that is not a docs-mcp
index is refused before anything there is touched; real indexes and what an interrupted build left
are rebuilt as before."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.errors import BuildError, OutputNotAnIndexError
from docs_mcp_core.search import SearchEngine
from tests.support.named_pipes import without_waiting_on

INDEX_FILES = [".lancedb", "chunks.json", "metadata.json"]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / ".docs-mcp.json").write_text(json.dumps({"version": "1"}), encoding="utf-8")
    (folder / "alpha.md").write_text(
        "# Alpha\n\n## Lighthouse\n\nThe keeper trims the wick.\n", encoding="utf-8"
    )
    return folder


def _build(docs: Path, out: Path) -> None:
    build_index(BuildOptions(docs_dir=docs, out_dir=out))


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


def _serves(out: Path) -> bool:
    return [h.chunk_id for h in SearchEngine.open(out).search("lighthouse").hits] == [
        "alpha.md#alpha/lighthouse"
    ]


def test_a_folder_that_looks_like_an_index_but_is_not_is_refused_untouched(
    docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    (out / ".lancedb").mkdir(parents=True)
    (out / ".lancedb" / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (out / "metadata.json").write_text('{"author": "me"}\n', encoding="utf-8")
    (out / "chunks.json").write_text("[1, 2, 3]\n", encoding="utf-8")
    before = _snapshot(out)
    with pytest.raises(OutputNotAnIndexError) as caught:
        _build(docs, out)
    assert str(caught.value).startswith(
        f"'{out}' is not empty and is not a docs-mcp index (its metadata.json has no metadata_version; "
        "it holds .lancedb, chunks.json, metadata.json): "
    )
    assert _snapshot(out) == before  # not even a lock file


def test_a_folder_of_other_files_is_refused_naming_a_few(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "project"
    out.mkdir()
    for i in range(7):
        (out / f"file{i}.txt").write_text("x", encoding="utf-8")
    with pytest.raises(
        OutputNotAnIndexError, match=r"it has no metadata.json; it holds file0.txt, .*file4.txt and 2 more"
    ):
        _build(docs, out)
    assert sorted(p.name for p in out.iterdir()) == [f"file{i}.txt" for i in range(7)]


def test_an_empty_folder_and_a_real_index_are_written(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    _build(docs, out)
    assert sorted(p.name for p in out.iterdir()) == INDEX_FILES and _serves(out)
    (out / "README.txt").write_text("kept\n", encoding="utf-8")  # a file of the user's beside an index
    _build(docs, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(["README.txt", *INDEX_FILES]) and _serves(out)


def test_what_an_interrupted_first_build_left_is_not_refused(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "crashed"
    (out / ".lancedb.work").mkdir(parents=True)
    (out / ".lancedb.tmp").mkdir()
    (out / ".docs-mcp-build.lock").write_text("", encoding="utf-8")
    (out / "chunks.json.tmp").write_text("[", encoding="utf-8")
    _build(docs, out)
    assert sorted(p.name for p in out.iterdir()) == INDEX_FILES and _serves(out)


def test_a_first_publish_cut_short_is_recovered(docs: Path, tmp_path: Path) -> None:
    """Killed between the swap's renames on a first build: the table and chunks.json are in place,
    metadata.json is still ``metadata.json.tmp``."""
    built = tmp_path / "built"
    _build(docs, built)
    out = tmp_path / "cut"
    shutil.copytree(built, out)
    (out / "metadata.json").rename(out / "metadata.json.tmp")
    _build(docs, out)
    assert sorted(p.name for p in out.iterdir()) == INDEX_FILES and _serves(out)


def test_a_swap_cut_short_on_a_rebuild_is_recovered(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "swap"
    _build(docs, out)
    (out / ".lancedb").rename(out / ".lancedb.old")  # killed between the two renames
    _build(docs, out)
    assert sorted(p.name for p in out.iterdir()) == INDEX_FILES and _serves(out)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_at_metadata_json_is_refused_not_waited_on(docs: Path, tmp_path: Path) -> None:
    # the check that --out is an index opened it and waited for a writer forever
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "metadata.json")
    outcome = without_waiting_on(out / "metadata.json", lambda: _build(docs, out))
    assert isinstance(outcome, OutputNotAnIndexError), outcome
    assert "its metadata.json cannot be read: it is not a regular file, or this user may not" in str(outcome)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_left_at_metadata_json_tmp_is_not_waited_on(docs: Path, tmp_path: Path) -> None:
    # deciding whether a build had been stopped mid-swap read it: a server's start, docs-mcp search
    # and the next build each waited forever
    out = tmp_path / "out"
    _build(docs, out)
    os.mkfifo(out / "metadata.json.tmp")
    assert without_waiting_on(out / "metadata.json.tmp", lambda: _serves(out)) is True
    assert without_waiting_on(out / "metadata.json.tmp", lambda: _build(docs, out)) is None
    assert sorted(p.name for p in out.iterdir()) == INDEX_FILES and _serves(out)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("name", ["chunks.derived", "chunks.derived.json"])
def test_a_named_pipe_in_place_of_a_derived_file_is_not_waited_on(
    docs: Path, tmp_path: Path, name: str
) -> None:
    # opening the index read the derived files: a server's start, docs-mcp search and the next build
    # each waited forever; the index is served from its table instead, and the build writes them anew
    out = tmp_path / "out"
    _build(docs, out)
    pipe = out / ".lancedb" / name
    pipe.unlink()
    os.mkfifo(pipe)
    assert without_waiting_on(pipe, lambda: _serves(out)) is True
    assert without_waiting_on(pipe, lambda: _build(docs, out)) is None
    assert pipe.is_file() and _serves(out)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
@pytest.mark.parametrize("kind", ["folder", "named pipe"])
def test_something_else_at_the_lock_files_name_is_named_with_what_to_do(
    docs: Path, tmp_path: Path, kind: str
) -> None:
    # the build ended with "failed unexpectedly: IsADirectoryError" or "OSError: [Errno 22] Invalid argument"
    out = tmp_path / "out"
    _build(docs, out)
    lock = out / ".docs-mcp-build.lock"
    lock.mkdir() if kind == "folder" else os.mkfifo(lock)
    before = _snapshot(out)
    with pytest.raises(BuildError) as caught:
        _build(docs, out)
    assert str(caught.value) == (
        f"the build lock '{lock}' is not a regular file (a folder, a named pipe or a device); remove it, then "
        "build again"
    )
    assert _snapshot(out) == before and _serves(out)
