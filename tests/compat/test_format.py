"""The formats a build writes, checked without Node: the ones the original's LanceDB 0.26.2 reads
(``docs/metadata.md``; ``test_original_reads_ours.py`` runs that library on them)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.table import FTS_FORMAT_ENV, SEARCH_TEXT_COLUMNS

LANCE_2_1 = (2, 1)  # the major/minor version a Lance file of format 2.1 ends with, before "LANC"


def file_versions(db: Path) -> set[tuple[int, int]]:
    files = list((db / "chunks.lance").rglob("*.lance"))
    assert files
    versions: set[tuple[int, int]] = set()
    for path in files:
        tail = path.read_bytes()[-8:]
        assert tail[4:] == b"LANC", path
        versions.add(struct.unpack("<HH", tail[:4]))
    return versions


def test_data_and_index_files_are_lance_2_1_and_full_text_indexes_version_1(built_index: Path) -> None:
    table = import_lancedb().connect(str(built_index / ".lancedb")).open_table("chunks")
    full_text = {i.columns[0]: i.index_version for i in table.list_indices() if i.index_type == "FTS"}
    assert full_text == dict.fromkeys(["content_text", "heading", *SEARCH_TEXT_COLUMNS], 1)
    assert file_versions(built_index / ".lancedb") == {LANCE_2_1}


@pytest.mark.parametrize("before", [None, "2"])
def test_a_build_leaves_the_environment_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: str | None
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n## Retries\n\nretry with backoff\n", encoding="utf-8")
    if before is None:
        monkeypatch.delenv(FTS_FORMAT_ENV, raising=False)
    else:
        monkeypatch.setenv(FTS_FORMAT_ENV, before)
    build_index(BuildOptions(docs_dir=docs, out_dir=tmp_path / "out"))
    assert os.environ.get(FTS_FORMAT_ENV) == before
    table = import_lancedb().connect(str(tmp_path / "out" / ".lancedb")).open_table("chunks")
    assert {i.index_version for i in table.list_indices() if i.index_type == "FTS"} == {1}
