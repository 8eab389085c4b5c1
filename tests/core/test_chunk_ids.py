"""Chunk ids are unique within a file: where the original's rule gives two chunks one id, the later
one gets the first free ``-N``, and ``validate`` and ``build`` say so with the line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, BuildReporter, build_index
from docs_mcp_core.chunking import IdCollision, Strategy, build_chunks
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.validation import validate_corpus

SAME = "# Doc\n\n## Same\n\none\n\n## Same\n\ntwo\n\n## Same\n\nthree\n\n## Same-2\n\nfour\n"
BIG_BODY = "\n\n".join(["word " * 40] * 10)
BIG = f"# Doc\n\n## Big\n\n{BIG_BODY}\n\n## Big part 2\n\nthe heading's own text\n"
DELIMITER = re.compile(r"^--- Chunk: (\S+) \(Chunk \d+ of \d+\) \((?:Target|Context: [+-]\d+)\) ---$", re.M)


def test_a_repeated_heading_and_a_heading_spelled_like_its_counter() -> None:
    collisions: list[IdCollision] = []
    chunks = build_chunks("same.md", SAME, Strategy("h2"), collisions=collisions)
    assert [c.chunk_id for c in chunks] == [
        "same.md#_preamble",
        "same.md#doc/same",
        "same.md#doc/same-2",  # the second "Same" keeps the original's id
        "same.md#doc/same-3",
        "same.md#doc/same-2-2",  # "Same-2" would have been same-2 too
    ]
    assert chunks[-1].heading == "Same-2" and chunks[-1].content.startswith("## Same-2\n")
    assert collisions == [IdCollision("same.md#doc/same-2", "same.md#doc/same-2-2", 15, 7)]


def test_a_split_part_and_a_heading_spelled_like_it() -> None:
    collisions: list[IdCollision] = []
    chunks = build_chunks("big.md", BIG, Strategy("h2", max_chunk_size=500), collisions=collisions)
    ids = [c.chunk_id for c in chunks]
    assert len(ids) == len(set(ids))
    assert ids[:3] == ["big.md#_preamble", "big.md#doc/big", "big.md#doc/big-part-2"]
    assert chunks[2].heading == "Big"  # the split part keeps the original's id: it comes first
    assert ids[-1] == "big.md#doc/big-part-2-2" and chunks[-1].heading == "Big part 2"
    assert [(c.original_id, c.chunk_id) for c in collisions] == [("big.md#doc/big-part-2", ids[-1])]


def test_a_free_suffix_is_chosen_past_ids_the_file_already_has() -> None:
    markdown = "## A\n\n1\n\n## A\n\n2\n\n## A-2\n\n3\n\n## A-2-2\n\n4\n"
    ids = [c.chunk_id for c in build_chunks("a.md", markdown, Strategy("h2"))]
    assert ids == ["a.md#a", "a.md#a-2", "a.md#a-2-3", "a.md#a-2-2"]


def test_files_without_collisions_report_none() -> None:
    collisions: list[IdCollision] = []
    build_chunks("a.md", "## A\n\n1\n\n## A\n\n2\n", Strategy("h2"), collisions=collisions)
    assert collisions == []


@pytest.fixture
def dup_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / ".docs-mcp.json").write_text(
        json.dumps(
            {
                "version": "1",
                "overrides": [{"pattern": "big.md", "strategy": {"chunk_by": "h2", "max_chunk_size": 500}}],
            }
        ),
        encoding="utf-8",
    )
    (docs / "same.md").write_text(SAME, encoding="utf-8")
    (docs / "big.md").write_text(BIG, encoding="utf-8")
    return docs


def test_validate_warns_with_the_line_of_the_renamed_chunk(dup_docs: Path) -> None:
    report = validate_corpus(dup_docs, workers=1)
    assert report.ok
    assert [f.render() for f in report.findings] == [
        "big.md:25: warning: this chunk's id would be 'big.md#doc/big-part-2' like the chunk at line 9; "
        "it is 'big.md#doc/big-part-2-2' instead (rename a heading to choose the ids yourself)",
        "same.md:15: warning: this chunk's id would be 'same.md#doc/same-2' like the chunk at line 7; "
        "it is 'same.md#doc/same-2-2' instead (rename a heading to choose the ids yourself)",
    ]


def test_get_doc_serves_both_chunks_and_context_lists_each_once(dup_docs: Path, tmp_path: Path) -> None:
    warned: list[str] = []

    class Reporter(BuildReporter):
        def warn(self, message: str) -> None:
            warned.append(message)

    out = tmp_path / "out"
    build_index(BuildOptions(docs_dir=dup_docs, out_dir=out), Reporter())
    assert [w.split(": warning: ")[0] for w in warned] == ["big.md:25", "same.md:15"]
    ids = [c["chunk_id"] for c in json.loads((out / "chunks.json").read_text(encoding="utf-8"))]
    assert len(ids) == len(set(ids))
    engine = SearchEngine.open(out)
    assert engine.get_doc("same.md#doc/same-2").split("\n", 2)[1] == "## Same"
    assert engine.get_doc("same.md#doc/same-2-2").split("\n", 2)[1] == "## Same-2"
    assert engine.get_doc("big.md#doc/big-part-2-2").split("\n", 2)[1] == "## Big part 2"
    listed = DELIMITER.findall(engine.get_doc("same.md#doc/same-3", context=5))
    assert listed == [i for i in ids if i.startswith("same.md#")]
    listed = DELIMITER.findall(engine.get_doc("big.md#doc/big-part-4", context=5))
    assert listed == [i for i in ids if i.startswith("big.md#")]
