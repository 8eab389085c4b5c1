"""Token budgets (``max_tokens``) on get_doc and search_docs, and search facets, on real indexes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.errors import SearchError, SearchOptionsError
from docs_mcp_core.markdown import cut_points
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search.budget import markdown_pieces
from docs_mcp_core.search.facets import facet_counts
from docs_mcp_core.tokens import count_tokens

NOTICE = re.compile(
    r"\n\n--- Cut at max_tokens (\d+): about [\d,]+ more tokens follow\. To read on, repeat "
    r'this call with cursor "([^"]+)" ---$'
)
CONTINUED = re.compile(r"^--- (?:Chunk|Section): .* \(continued\) ---\n")
TOO_LARGE = re.compile(
    r"--- The next (.+) needs about [\d,]+ tokens, more than max_tokens \d+\. To read it, "
    r'repeat this call with max_tokens (\d+) or more and cursor "([^"]+)" ---$'
)

MARKDOWN = """# Guide

Intro paragraph
that spans two lines.

- first item
- second item
  with a continuation

  and a second paragraph
- third item

| code | meaning |
| ---- | ------- |
| 400 | bad request |
| 401 | unauthorized |
| 404 | not found |

```python
def f():

    return 1
```

> a quote
"""


def tokens(text: str) -> int:
    return count_tokens(text, "o200k_base")


def test_pieces_join_to_the_text_and_cut_only_between_blocks() -> None:
    pieces = markdown_pieces(MARKDOWN, "--- again ---\n")
    assert "".join(p.text for p in pieces) == MARKDOWN
    starts = [p.text.split("\n", 1)[0] for p in pieces]
    assert starts == [
        "# Guide",
        "Intro paragraph",
        "- first item",
        "- second item",
        "- third item",
        "| code | meaning |",
        "| 401 | unauthorized |",
        "| 404 | not found |",
        "```python",
        "> a quote",
    ]
    rows = [p for p in pieces if p.kind == "table row"]
    assert {p.resume for p in rows} == {"--- again ---\n| code | meaning |\n| ---- | ------- |\n"}
    assert next(p.kind for p in pieces if p.text.startswith("```")) == "code block"


def test_cut_points_of_text_without_blocks() -> None:
    assert cut_points("") == []
    assert markdown_pieces("", "x") == []
    assert "".join(p.text for p in markdown_pieces("\n\nplain", "")) == "\n\nplain"


# ── get_doc ────────────────────────────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page with long prose, tables, lists and a code block too large for small budgets."""
    root = tmp_path_factory.mktemp("budget-docs")
    rows = "\n".join(
        f"| E{i:03d} | error number {i} means the request was refused for reason {i} |" for i in range(60)
    )
    prose = "\n\n".join(
        " ".join(f"Sentence {i} explains detail {j} of the retry policy." for i in range(6)) for j in range(5)
    )
    code = "\n".join(f"    client.call_{i}(timeout={i})  # call {i}" for i in range(120))
    page = (
        "# Reference\n\nThe reference.\n\n## Errors\n\n"
        f"{prose}\n\n| code | meaning |\n| ---- | ------- |\n{rows}\n\n"
        + "\n".join(f"- item {i}: {prose[:100]}" for i in range(12))
        + f"\n\n## Big example\n\nBefore the code.\n\n```python\ndef main():\n{code}\n```\n\nAfter the code.\n"
    )
    (root / "reference.md").write_text(page, encoding="utf-8")
    (root / ".docs-mcp.json").write_text(json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}}))
    out = tmp_path_factory.mktemp("budget-index")
    build_index(BuildOptions(docs_dir=root, out_dir=out))
    return out


@pytest.fixture(scope="module")
def engine(corpus: Path) -> SearchEngine:
    return SearchEngine.open(corpus)


def _read_all(engine: SearchEngine, chunk_id: str, budget: int, **kwargs: Any) -> list[tuple[str, int]]:
    """Every part of a budgeted answer with the budget it was read with, following its cursors (a
    block too large for ``budget`` is read with the budget the answer asks for, as an agent would)."""
    parts: list[tuple[str, int]] = []
    cursor, asked = None, budget
    for _ in range(200):
        text = engine.get_doc(chunk_id, max_tokens=asked, cursor=cursor, **kwargs)
        parts.append((text, asked))
        notice, too_large = NOTICE.search(text), TOO_LARGE.search(text)
        if too_large is not None:
            cursor, asked = too_large.group(3), int(too_large.group(2))
            continue
        if notice is None:
            return parts
        assert int(notice.group(1)) == asked
        cursor, asked = notice.group(2), budget
    raise AssertionError("the cursors never ended")


def _body(part: str) -> str:
    """A part without its notice, its continuation line and a repeated table header."""
    part = TOO_LARGE.sub("", NOTICE.sub("", part))
    continued = CONTINUED.match(part)
    if continued:
        part = part[continued.end() :]
        if part.startswith("|"):
            part = part.split("\n", 2)[2]
    return part


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("budget", [200, 350, 800])
@pytest.mark.parametrize("scope", ["chunk", "section", "parent"])
def test_budgeted_parts_fit_and_together_are_the_whole_answer(
    engine: SearchEngine, budget: int, scope: str
) -> None:
    chunk_id = "reference.md#reference/errors"
    whole = engine.get_doc(chunk_id, scope=scope)
    parts = _read_all(engine, chunk_id, budget, scope=scope)
    assert len(parts) > 1
    for part, asked in parts:
        assert tokens(part) <= asked
        assert part.count("```") % 2 == 0  # a code block is never split
        for line in part.splitlines():
            assert not line.startswith("|") or line.endswith("|")  # nor a table row
    assert _flat("\n".join(_body(p) for p, _ in parts)) == _flat(whole)
    # a part that starts inside the table repeats its header, so it still reads as a table
    inside = [p for p, _ in parts[1:] if CONTINUED.sub("", p).startswith("| code | meaning |\n| ---- |")]
    assert inside


def test_an_answer_that_fits_is_the_unbudgeted_one(engine: SearchEngine) -> None:
    chunk_id = "reference.md#_preamble"
    assert engine.get_doc(chunk_id, max_tokens=1000) == engine.get_doc(chunk_id)
    assert engine.get_doc(chunk_id, context=1, max_tokens=100_000) == engine.get_doc(chunk_id, context=1)


def test_a_block_larger_than_the_budget_is_named_with_the_budget_it_needs(engine: SearchEngine) -> None:
    chunk_id = "reference.md#reference/big-example"
    first = engine.get_doc(chunk_id, max_tokens=300)
    assert tokens(first) <= 300
    assert first.startswith(
        f"--- Chunk: {chunk_id} (Chunk 3 of 3) (Target) ---\n## Big example\n\nBefore the code."
    )
    second = engine.get_doc(chunk_id, max_tokens=300, cursor=NOTICE.search(first).group(2))  # type: ignore[union-attr]
    too_large = TOO_LARGE.search(second)
    assert too_large is not None and too_large.group(1) == "code block"
    needed, cursor = int(too_large.group(2)), too_large.group(3)
    third = engine.get_doc(chunk_id, max_tokens=needed, cursor=cursor)
    assert third.startswith(f"--- Chunk: {chunk_id} (Chunk 3 of 3) (Target) (continued) ---\n```python\n")
    assert tokens(third) <= needed and "After the code." in third


def test_cursor_and_budget_errors(engine: SearchEngine) -> None:
    chunk_id = "reference.md#reference/errors"
    cursor = NOTICE.search(engine.get_doc(chunk_id, max_tokens=300)).group(2)  # type: ignore[union-attr]
    with pytest.raises(
        SearchError, match=r"^Invalid cursor: does not match this chunk_id, scope and context$"
    ):
        engine.get_doc("reference.md#reference/big-example", max_tokens=300, cursor=cursor)
    with pytest.raises(SearchError, match=r"^Invalid cursor: does not match"):
        engine.get_doc(chunk_id, scope="section", max_tokens=300, cursor=cursor)
    tampered = f"{int(cursor.split('.')[0]) + 1}.{cursor.split('.')[1]}"
    with pytest.raises(SearchError, match=r"^Invalid cursor: does not match"):
        engine.get_doc(chunk_id, max_tokens=300, cursor=tampered)
    search_cursor = engine.search("code", limit=1).next_cursor
    assert search_cursor is not None
    for bad in ("nonsense", search_cursor, "-1.abc"):
        with pytest.raises(SearchError, match=r"^Invalid cursor: expected a get_doc cursor"):
            engine.get_doc(chunk_id, cursor=bad)
    for bad_budget in (0, 199, 1_000_001):
        with pytest.raises(SearchError, match=r"^max_tokens must be between 200 and 1000000$"):
            engine.get_doc(chunk_id, max_tokens=bad_budget)
    # without a budget a cursor fetches all the rest
    rest = engine.get_doc(chunk_id, cursor=cursor)
    assert NOTICE.search(rest) is None and rest.startswith("--- Chunk: ")


def test_the_encoding_is_configurable(corpus: Path) -> None:
    cl100k = SearchEngine.open(corpus, options=SearchOptions(token_encoding="cl100k_base"))
    text = cl100k.get_doc("reference.md#reference/errors", max_tokens=300)
    assert count_tokens(text, "cl100k_base") <= 300
    with pytest.raises(SearchOptionsError, match="unknown token encoding 'gpt2'"):
        SearchOptions(token_encoding="gpt2").check()  # pyright: ignore[reportArgumentType]


# ── search_docs ────────────────────────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def examples(built_index: Path) -> SearchEngine:
    return SearchEngine.open(built_index)


@pytest.mark.parametrize("budget", [200, 300, 500, 900])
def test_a_budgeted_page_fits_and_continues_where_it_stopped(examples: SearchEngine, budget: int) -> None:
    full = examples.search("retry backoff error", limit=10)
    fitted = examples.search("retry backoff error", limit=10, max_tokens=budget)
    text = fitted.text()
    assert tokens(text) <= budget
    assert "\n" not in text  # compact JSON
    assert json.loads(text) == fitted.to_dict()
    kept = [h.chunk_id for h in fitted.hits]
    assert kept == [h.chunk_id for h in full.hits][: len(kept)]  # same order, the tail left out
    assert fitted.cut is not None and fitted.cut.startswith(f"Fitted to max_tokens {budget}: ")
    if len(kept) < len(full.hits):
        assert fitted.next_cursor is not None and "left out" in fitted.cut
        following = examples.search("retry backoff error", limit=10, cursor=fitted.next_cursor)
        assert following.hits[0].chunk_id == full.hits[len(kept)].chunk_id


def test_a_fitted_page_first_leaves_out_the_fields_other_fields_carry(examples: SearchEngine) -> None:
    full = examples.search("retry backoff error", limit=5)
    compact = json.dumps(full.to_dict(), ensure_ascii=False, separators=(",", ":"))
    lean_page = examples.search("retry backoff error", limit=5, max_tokens=tokens(compact) - 1)
    assert lean_page.cut is not None and "filepath, heading and score left out" in lean_page.cut
    assert [h.chunk_id for h in lean_page.hits] == [h.chunk_id for h in full.hits]
    for hit, original in zip(lean_page.to_dict()["hits"], full.hits, strict=True):
        assert list(hit) == ["chunk_id", "breadcrumb", "snippet", "metadata"]
        assert original.chunk_id.split("#", 1)[0] == original.filepath  # what the chunk_id carries
        assert f"{original.filepath} > {hit['breadcrumb']}" == original.breadcrumb
        assert original.breadcrumb.endswith(original.heading)
    assert lean_page.next_cursor == full.next_cursor


def test_without_a_budget_the_result_is_the_original_shape(examples: SearchEngine) -> None:
    result = examples.search("retry backoff", limit=3)
    assert result.text() == json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
    assert list(result.to_dict()) == ["hits", "next_cursor", "hint"]
    roomy = examples.search("retry backoff", limit=3, max_tokens=100_000)
    assert roomy.cut is None and roomy.to_dict() == result.to_dict() and "\n" not in roomy.text()


def test_a_budget_too_small_for_any_answer(examples: SearchEngine) -> None:
    with pytest.raises(SearchError, match=r"^max_tokens must be between 200 and 1000000$"):
        examples.search("retry", max_tokens=50)


def test_facets_count_the_top_candidates_of_unfiltered_keys(examples: SearchEngine) -> None:
    plain = examples.search("payment", limit=5)
    assert plain.facets is None and "facets" not in plain.to_dict()
    result = examples.search("payment", limit=5, facets=True)
    assert result.facets is not None
    assert list(result.facets) == list(examples.metadata.taxonomy)
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in plain.hits]
    for counts in result.facets.values():
        assert 0 < sum(counts.values()) <= 50
        assert list(counts.values()) == sorted(counts.values(), reverse=True)
    filtered = examples.search("payment", limit=5, filters={"language": "python"}, facets=True)
    assert filtered.facets is not None and "language" not in filtered.facets


@dataclass
class _Catalog:
    taxonomy: dict[str, tuple[np.ndarray, list[str]]] = field(default_factory=dict)


def test_facet_counts_over_the_first_fifty_positions() -> None:
    codes = np.array([0, 1, 1, -1, 2, 1] * 20, dtype=np.int32)  # 120 rows; -1: no value
    catalog = _Catalog({"language": (codes, ["go", "python", "typescript"]), "empty": (np.full(120, -1), [])})
    positions = np.arange(120)[::-1]  # ranking order: the last rows first
    counts = facet_counts(catalog, positions, ["language", "empty", "unknown"])  # type: ignore[arg-type]
    top = codes[positions[:50]]
    expected = {v: int((top == i).sum()) for i, v in enumerate(["go", "python", "typescript"])}
    # most frequent first, ties in name order
    assert list(counts["language"].items()) == sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))
    assert sum(counts["language"].values()) == int((top >= 0).sum())
    # a key none of the candidates has a value for is left out, as is one the catalog does not know
    assert "empty" not in counts and "unknown" not in counts
