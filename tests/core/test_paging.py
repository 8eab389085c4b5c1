"""Paging through a long result list with ``next_cursor``: every result reachable, once, in one order.

The corpus has a word in a few hundred chunks, scored differently (how often the word occurs, how
long the chunk is), and 80 byte-identical chunks that give one hit: the default ranking's first
pool of 200 rows then holds far fewer than 200 distinct hits, and deeper pages need the deeper pool.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine, SearchOptions

WORD = "quokka"
REPEATED = f"A {WORD} reminder: every {WORD} page says this."


@pytest.fixture(scope="module")
def many_matches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("paging")
    docs = root / "docs"
    docs.mkdir()
    for f in range(60):
        sections = [f"# Page {f}\n\nAbout page {f}.\n"]
        for s in range(6):
            n = (f * 7 + s * 3) % 5 + 1
            filler = " ".join(f"filler{f}x{s}w{i}" for i in range((f + s) % 9 * 4))
            sections.append(f"## Part {s}\n\n{' '.join([WORD] * n)} in part {s} of page {f}. {filler}\n")
        if f < 80 // 2:
            sections.append(f"## Reminder\n\n{REPEATED}\n")
            sections.append(f"## Another reminder\n\n{REPEATED}\n")
        (docs / f"page{f:02d}.md").write_text("\n".join(sections), encoding="utf-8")
    out = root / "idx"
    build_index(BuildOptions(docs_dir=docs, out_dir=out, indexed_at="2026-01-01T00:00:00.000Z"))
    return out


def _expected(index: Path) -> int:
    """Distinct chunk texts that hold the word (byte-identical chunks give one hit)."""
    chunks = json.loads((index / "chunks.json").read_text(encoding="utf-8"))
    return len({c["content_text"] for c in chunks if WORD in c["content_text"].lower()})


def _follow(engine: SearchEngine, limit: int) -> list[str]:
    ids: list[str] = []
    result = engine.search(WORD, limit=limit)
    for _ in range(1000):  # bounded: at most 5,000 results
        ids += [h.chunk_id for h in result.hits]
        if result.next_cursor is None:
            return ids
        result = engine.search(WORD, limit=limit, cursor=result.next_cursor)
    raise AssertionError("next_cursor never ended")


def test_cursors_reach_every_result_once_in_one_order(many_matches: Path) -> None:
    engine = SearchEngine.open(many_matches, options=SearchOptions(ranking="default"))
    try:
        by_50 = _follow(engine, 50)
        assert len(by_50) == len(set(by_50)), "a hit was repeated"
        expected = _expected(many_matches)
        assert expected > 300
        assert len(by_50) == expected
        # one order, whatever the page size: the pages of 7 cut the same list
        assert _follow(engine, 7) == by_50
        assert [h.chunk_id for h in engine.search(WORD, limit=50).hits] == by_50[:50]
    finally:
        engine.close()
