"""A phrase with stop words inside it, as the original's LanceDB (0.26.2 for Node) reads it.

LanceDB 0.26.2 drops a phrase query's stop words and looks for its other words next to each other,
while the index keeps the gap a stop word leaves in the text: ``rerun if changed`` finds the text
``rerun changed`` and never ``rerun-if-changed``, and ``build the script`` finds ``build script``.
The ``original`` ranking's phrase leg reads phrases that way, so that it finds the rows the
original finds; the default ranking keeps the gaps (``docs/ranking.md``).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search.analyzer import LANCEDB_0_26_STOP_WORDS, LANCEDB_STOP_WORDS, analyze
from docs_mcp_core.search.options import MAX_FETCH
from tests.support.compat import original_answers

pytestmark = pytest.mark.integration  # the original's LanceDB runs in node

WORD = re.compile(r"[A-Za-z]+")
# the stop words of one LanceDB version only: an index built by ours drops them, 0.26 searches them
ONE_LIST_ONLY = LANCEDB_STOP_WORDS ^ LANCEDB_0_26_STOP_WORDS


def phrases_with_a_stop_word(index: Path, count: int) -> list[str]:
    """Phrases with a stop word of LanceDB 0.26 inside: two words the corpus writes next to each
    other with ``the`` put between them (``retry the configuration``: the original finds the text
    ``retry configuration``), and three words it writes with a stop word in the middle (``retry
    the request``: the original finds it only where the two others also stand together)."""
    found: dict[str, None] = {}
    for chunk in json.loads((index / "chunks.json").read_text(encoding="utf-8")):
        words = WORD.findall(chunk["content_text"])
        for first, middle, last in zip(words, words[1:], words[2:], strict=False):
            if {first.lower(), middle.lower(), last.lower()} & ONE_LIST_ONLY:
                continue
            if {first.lower(), middle.lower()} & LANCEDB_0_26_STOP_WORDS:
                continue
            if len(set(analyze(f"{first} {middle}", LANCEDB_0_26_STOP_WORDS))) == 2:
                found.setdefault(f"{first} the {middle}")
        if len(found) >= count:
            break
    for chunk in json.loads((index / "chunks.json").read_text(encoding="utf-8")):
        words = WORD.findall(chunk["content_text"])
        for first, middle, last in zip(words, words[1:], words[2:], strict=False):
            if {first.lower(), middle.lower(), last.lower()} & ONE_LIST_ONLY:
                continue
            ends = {first.lower(), last.lower()}
            stopped = middle.lower() in LANCEDB_0_26_STOP_WORDS and not ends & LANCEDB_0_26_STOP_WORDS
            if stopped and len(set(analyze(f"{first} {last}", LANCEDB_0_26_STOP_WORDS))) == 2:
                found.setdefault(f"{first} {middle} {last}")
        if len(found) >= 2 * count:
            break
    return list(found)[: 2 * count]


def original_phrase_rows(engine: SearchEngine, query: str) -> list[str]:
    async def legs() -> Any:
        parsed = engine.parse_query(query)
        found, _ = await engine._retrieval.pools(
            parsed, engine._retrieval.prefilter({}), MAX_FETCH, MAX_FETCH, 5
        )
        return found

    positions, _ = asyncio.run(legs()).get("phrase", ([], []))
    return sorted(engine._catalog.chunk_ids[int(p)] for p in positions)


def test_a_phrase_with_a_stop_word_inside_finds_the_rows_the_original_finds(
    node: str, built_index: Path, tmp_path: Path
) -> None:
    engine = SearchEngine.open(built_index, options=SearchOptions(ranking="original"))
    phrases = phrases_with_a_stop_word(built_index, 20)
    assert len(phrases) >= 20
    queries = [
        {"name": q, "kind": "phrase", "query": q, "slop": 0, "limit": MAX_FETCH, "report": ["chunk_id"]}
        for q in phrases
    ]
    answers = original_answers(node, built_index / ".lancedb", queries, tmp_path)["results"]
    differing = []
    found_some = 0
    for q in phrases:
        theirs = sorted(row["chunk_id"] for row in answers[q].get("rows", []))
        found_some += bool(theirs)
        if original_phrase_rows(engine, q) != theirs:
            differing.append(q)
    assert found_some >= 5
    assert differing == []
