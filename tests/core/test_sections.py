"""get_doc's sections: which chunks make the section (and the parent section) of a chunk, read from
chunk ids, and the answer that joins them as the file reads."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.errors import SearchError
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.sections import FileChunk, find_section, section_paths, split_chunk_id

HEADER = re.compile(r"^--- Section: (\S+) \((Chunks? [\d-]+) of (\d+)\) \(Target: (\S+)\) ---\n")


def _file(*ids: str, crumbs: dict[str, str] | None = None) -> list[FileChunk]:
    """A file's chunks; a chunk's breadcrumb is its id without a -part-N suffix unless given."""
    return [
        FileChunk(
            i, f"f.md#{cid}" if cid else "f.md", (crumbs or {}).get(cid, re.sub(r"-part-\d+$", "", cid))
        )
        for i, cid in enumerate(ids)
    ]


def test_parts_share_their_base_path() -> None:
    chunks = _file("_preamble", "a/b", "a/b-part-2", "a/b-part-4", "a/c")
    assert section_paths(chunks) == [("_preamble",), ("a", "b"), ("a", "b"), ("a", "b"), ("a", "c")]
    assert find_section(chunks, 2, "section").indexes == [1, 2, 3]  # part 3 merged away: a gap


def test_a_heading_that_ends_in_part_n_is_its_own_section() -> None:
    # "Setup part 2" slugs to setup-part-2: a sibling of "Setup", with its own breadcrumb
    chunks = _file("a/setup", "a/setup-part-2", crumbs={"a/setup-part-2": "f.md > A > Setup part 2"})
    assert section_paths(chunks) == [("a", "setup"), ("a", "setup-part-2")]
    assert find_section(chunks, 1, "section").indexes == [1]
    # and a part only continues the section directly before it
    far = _file("a/setup", "a/other", "a/setup-part-2")
    assert section_paths(far)[2] == ("a", "setup-part-2")


def test_sub_sections_belong_to_their_section_and_parent() -> None:
    chunks = _file("_preamble", "a/b", "a/b/x", "a/b/x-part-2", "a/b/y", "a/c", "a/b2")
    assert find_section(chunks, 1, "section").indexes == [1, 2, 3, 4]
    assert find_section(chunks, 3, "section").indexes == [2, 3]
    assert find_section(chunks, 3, "parent").indexes == [1, 2, 3, 4]
    parent = find_section(chunks, 1, "parent")  # the h1 "a": its heading is in the preamble
    assert (parent.path, parent.indexes, parent.lead) == (("a",), [1, 2, 3, 4, 5, 6], 0)
    assert find_section(chunks, 5, "parent").lead == 0
    assert find_section(chunks, 4, "chunk").indexes == [4]


def test_the_top_level_and_whole_files() -> None:
    top = _file("_preamble", "_preamble-part-2", "a", "b")
    assert find_section(top, 1, "section").indexes == [0, 1]
    assert find_section(top, 2, "parent").indexes == [0, 1, 2, 3]  # above h1: the whole file
    assert find_section(top, 2, "parent").section_id("f.md") == "f.md"
    whole = _file("", "_part-2", "_part-3")
    assert section_paths(whole) == [(), (), ()]
    assert find_section(whole, 2, "section").indexes == [0, 1, 2]
    refined = _file("_preamble/x", "_preamble/x/y", "_preamble/x/y-part-2", "_preamble/x/z")
    assert find_section(refined, 2, "section").indexes == [1, 2]
    assert find_section(refined, 2, "parent").indexes == [0, 1, 2, 3]
    assert find_section(refined, 0, "parent").section_id("f.md") == "f.md#_preamble"


def test_bad_requests() -> None:
    with pytest.raises(ValueError, match="unknown scope 'page'"):
        find_section(_file("a"), 0, "page")
    with pytest.raises(ValueError, match="not in the file"):
        find_section(_file("a"), 3, "section")


# ── get_doc on the example corpus ──────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def engine(built_index: Path) -> SearchEngine:
    return SearchEngine.open(built_index)


@pytest.fixture(scope="module")
def errors_md(built_index: Path) -> list[dict[str, Any]]:
    chunks = json.loads((built_index / "chunks.json").read_text(encoding="utf-8"))
    return sorted((c for c in chunks if c["filepath"] == "guides/errors.md"), key=lambda c: c["chunk_index"])


def _flat(text: str) -> str:
    return re.sub(r"\n\s*\n", "\n\n", text).strip()


def test_a_split_section_arrives_whole_and_in_order(
    engine: SearchEngine, errors_md: list[dict[str, Any]], examples_docs: Path
) -> None:
    target = "guides/errors.md#errors/error-code-reference-part-2"
    text = engine.get_doc(target, scope="section")
    header = HEADER.match(text)
    assert header is not None
    assert header.groups() == ("guides/errors.md#errors/error-code-reference", "Chunks 3-4", "13", target)
    body = text[header.end() :]
    assert body == f"{errors_md[2]['content']}\n\n{errors_md[3]['content']}"
    source = (examples_docs / "guides" / "errors.md").read_text(encoding="utf-8")
    assert _flat(body) in _flat(source)  # reads as the file does


def test_the_parent_section_includes_its_heading_from_the_chunk_before(
    engine: SearchEngine, errors_md: list[dict[str, Any]], examples_docs: Path
) -> None:
    text = engine.get_doc("guides/errors.md#errors/handling-errors-by-category/rate-limiting", scope="parent")
    header = HEADER.match(text)
    assert header is not None
    assert header.group(1, 2) == ("guides/errors.md#errors/handling-errors-by-category", "Chunks 5-12")
    assert text[header.end() :] == "\n\n".join(c["content"] for c in errors_md[4:12])
    top = engine.get_doc("guides/errors.md#errors/getting-help", scope="parent")
    header = HEADER.match(top)
    assert header is not None and header.group(1, 2) == ("guides/errors.md#errors", "Chunks 2-13")
    body = top[header.end() :]
    assert body.startswith("# Errors")  # the h1 and its intro live in the preamble chunk
    source = (examples_docs / "guides" / "errors.md").read_text(encoding="utf-8")
    assert _flat(body) == _flat(source[source.index("# Errors") :])


def test_scope_errors(engine: SearchEngine) -> None:
    with pytest.raises(SearchError, match=r"^scope must be one of: chunk, section, parent$"):
        engine.get_doc("guides/errors.md#errors/error-model", scope="page")
    with pytest.raises(SearchError, match=r"^context applies only to scope 'chunk'"):
        engine.get_doc("guides/errors.md#errors/error-model", context=1, scope="section")


# ── every split section of sdk-docs ────────────────────────────────────────────────────────────


@pytest.mark.slow
@pytest.mark.integration
def test_every_part_of_sdk_docs_brings_its_whole_section(sdk_docs_index: Path) -> None:
    engine = SearchEngine.open(sdk_docs_index)
    chunks = json.loads((sdk_docs_index / "chunks.json").read_text(encoding="utf-8"))
    by_file: dict[str, list[dict[str, Any]]] = {}
    for chunk in chunks:
        by_file.setdefault(chunk["filepath"], []).append(chunk)
    checked = 0
    for chunk in chunks:
        match = re.match(r"^(.*#.*)-part-\d+$", chunk["chunk_id"])
        if not match:
            continue
        base = match.group(1)
        siblings = sorted(by_file[chunk["filepath"]], key=lambda c: c["chunk_index"])
        parts = [c for c in siblings if re.fullmatch(re.escape(base) + r"(-part-\d+)?", c["chunk_id"])]
        text = engine.get_doc(chunk["chunk_id"], scope="section")
        header = HEADER.match(text)
        assert header is not None, chunk["chunk_id"]
        body = text[header.end() :]
        at = 0
        for part in parts:  # each part after the one before it (two parts may have equal text)
            found = body.find(part["content"], at)
            assert found >= 0, f"{chunk['chunk_id']}: {part['chunk_id']} missing or out of order"
            at = found + len(part["content"])
        checked += 1
    assert checked == 141  # every -part-N chunk the original's chunking gives sdk-docs


@pytest.mark.parametrize(
    ("chunk_id", "expected"),
    [
        ("sdks/c#/README.md#c-sharp/install", ("sdks/c#/README.md", "c-sharp/install")),
        ("sdks/c#/README.md#_preamble-part-2", ("sdks/c#/README.md", "_preamble-part-2")),
        ("sdks/c#/README.md", ("sdks/c#/README.md", None)),
        ("notes#1.md", ("notes#1.md", None)),
        ("guides/a.md#a/b", ("guides/a.md", "a/b")),
        ("guides/a.md", ("guides/a.md", None)),
    ],
)
def test_a_chunk_id_splits_at_the_fragment_not_at_a_hash_in_its_path(
    chunk_id: str, expected: tuple[str, str | None]
) -> None:
    assert split_chunk_id(chunk_id) == expected


def test_sections_of_a_file_whose_path_holds_a_hash(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sdks" / "c#").mkdir(parents=True)
    (docs / ".docs-mcp.json").write_text(json.dumps({"version": "1"}), encoding="utf-8")
    (docs / "sdks" / "c#" / "README.md").write_text(
        "## Install\n\nrun dotnet add\n\n## Usage\n\ncall it\n", encoding="utf-8"
    )
    build_index(BuildOptions(docs_dir=docs, out_dir=tmp_path / "out"))
    engine = SearchEngine.open(tmp_path / "out")
    target = "sdks/c#/README.md#install"
    header = HEADER.match(engine.get_doc(target, scope="parent"))
    assert header is not None
    assert header.groups() == ("sdks/c#/README.md", "Chunks 1-2", "2", target)  # the whole file
    header = HEADER.match(engine.get_doc(target, scope="section"))
    assert header is not None and header.group(1) == target
    assert engine.get_doc(target, context=-1).startswith("## Install\n")
