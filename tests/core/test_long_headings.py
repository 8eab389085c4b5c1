"""A heading of megabytes (a paragraph directly above a ``---`` line reads as one) names its
chunk in a bounded number of characters: its chunk id, heading and breadcrumb were as long as the
heading, repeated in every search answer (a 160 KB page answered 2.7 MB; a 10 MB heading made a
chunk id get_doc could not be asked for, over the stdio line limit) and in the file's title."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.chunking import MAX_HEADING_LENGTH, MAX_SLUG_LENGTH
from docs_mcp_core.validation import validate_corpus
from tests.support.tiny_corpus import INDEXED_AT, build_pages, opened

LONG = "Install " * 20_000  # 160,000 characters
PAGES = {
    "guide.md": f"# {LONG}\n\nThe first page.\n\n## {LONG}\n\nRun pip install widget.\n\n## {LONG}\n\nAgain.\n",
    "setext.md": "# Setext\n\n" + "A paragraph that runs on and on. " * 5_000 + "\n---\n\nBelow it.\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_pages(tmp_path_factory, "long-headings", PAGES)


def test_a_long_heading_names_its_chunk_in_bounded_characters(index: Path) -> None:
    with opened(index) as engine:
        hits = [
            *engine.search("install widget", limit=10).hits,
            *engine.search("paragraph runs on", limit=10).hits,
        ]
        assert {h.chunk_id.partition("#")[0] for h in hits} >= {"guide.md", "setext.md"}
        for hit in hits:
            assert len(hit.chunk_id) <= 2 * MAX_SLUG_LENGTH + 30, hit.chunk_id[:80]  # two levels, -2, -part-N
            assert len(hit.heading) <= MAX_HEADING_LENGTH
            assert len(hit.breadcrumb) <= len("setext.md") + 2 * (MAX_HEADING_LENGTH + len(" > "))
        for chunk_id in {h.chunk_id for h in hits}:  # each can be asked for
            assert engine.get_doc(chunk_id).startswith(f"--- Chunk: {chunk_id} ")
        title = engine.metadata.files["guide.md"].get("title")
        assert title is not None and len(title) <= MAX_HEADING_LENGTH and title.endswith("…")


def test_validate_names_the_line_of_a_heading_too_long_to_be_a_name(tmp_path: Path) -> None:
    for relative, text in PAGES.items():
        (tmp_path / relative).write_text(text, encoding="utf-8")
    found = [(f.path, f.line) for f in validate_corpus(tmp_path).findings if "characters long" in f.message]
    assert found == [("guide.md", 1), ("guide.md", 5), ("guide.md", 9), ("setext.md", 3)]


def test_a_rebuild_parses_a_file_with_a_cut_heading_again(tmp_path: Path) -> None:
    # a reused file kept the chunks an earlier build made (ids as long as the heading, before the
    # cut) and its warning was not reported again
    for relative, text in PAGES.items():
        (tmp_path / relative).write_text(text, encoding="utf-8")
    (tmp_path / "short.md").write_text("# Short\n\nNothing long.\n", encoding="utf-8")
    options = BuildOptions(docs_dir=tmp_path, out_dir=tmp_path / "out", indexed_at=INDEXED_AT)
    build_index(options)
    again = build_index(options)
    assert again.cached_files == 1  # short.md only
    assert sum("characters long" in w for w in again.warnings) == 4
