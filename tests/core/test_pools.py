"""A corpus that holds every chunk many times ranks its deeper pool from the same run of the legs,
with the same pages as two runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.heading_leg import HeadingLeg
from docs_mcp_core.search.options import DEFAULT_POOL, MAX_FETCH
from docs_mcp_core.search.retrieval import Retrieval
from tests.support.tiny_corpus import build_pages, opened

COPIES = 30  # each page in this many folders: a pool of 200 rows holds about 7 distinct chunks
PAGE = "\n".join(
    [
        "# Links",
        "",
        *(
            f"## {verb} link\n\n{verb.capitalize()} a short link and its tags, {verb} links.\n"
            for verb in (
                "create",
                "update",
                "delete",
                "archive",
                "share",
                "count",
                "list",
                "export",
                "import",
                "tag",
                "move",
                "copy",
            )
        ),
    ]
)
PAGES = {f"copy-{n:02d}/links.md": PAGE for n in range(COPIES)}
QUERIES = ("links", "create a short link", "tags of a link", "share links")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "pools", PAGES, heading_vectors=True)) as engine:
        yield engine


def _retrieval(engine: SearchEngine) -> Retrieval:
    return engine._retrieval  # pyright: ignore[reportPrivateUsage]


def _pages(engine: SearchEngine, query: str, limit: int) -> list[tuple[list[tuple[str, float]], str | None]]:
    pages: list[tuple[list[tuple[str, float]], str | None]] = []
    cursor: str | None = None
    for _ in range(4):
        result = engine.search(query, limit=limit, cursor=cursor)
        pages.append(([(h.chunk_id, h.score) for h in result.hits], result.next_cursor))
        cursor = result.next_cursor
        if cursor is None:
            break
    return pages


def test_the_corpus_holds_each_chunk_as_often_as_it_was_copied(engine: SearchEngine) -> None:
    assert _retrieval(engine).copies == pytest.approx(COPIES)


@pytest.mark.parametrize("limit", [3, 10])
def test_pages_from_one_run_are_the_pages_of_two(engine: SearchEngine, limit: int) -> None:
    retrieval = _retrieval(engine)
    runs: list[int] = []
    real_run = retrieval._run  # pyright: ignore[reportPrivateUsage]

    async def counted(*args: object) -> object:
        runs.append(1)
        return await real_run(*args)  # type: ignore[arg-type]

    retrieval._run = counted  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
    try:
        together = {q: _pages(engine, q, limit) for q in QUERIES}
        one_run = len(runs)
        runs.clear()
        retrieval.__dict__["copies"] = 1.0  # as a corpus without copies: a second run when needed
        apart = {q: _pages(engine, q, limit) for q in QUERIES}
        two_runs = len(runs)
    finally:
        del retrieval._run  # pyright: ignore[reportPrivateUsage]
        retrieval.__dict__.pop("copies", None)
    assert together == apart
    assert any(hits for pages in together.values() for hits, _ in pages)
    assert one_run < two_runs  # the deeper pool came from the first run


@pytest.mark.parametrize("weak", [HeadingLeg.NEW_ROW_SIMILARITY, 0.99])
def test_each_legs_first_rows_are_the_start_of_its_deeper_rows(
    engine: SearchEngine, weak: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the heading leg keeps its weak rows (all of them at 0.99) only where another leg found them,
    # so its first pool is its own, not the start of its deeper one
    monkeypatch.setattr(HeadingLeg, "NEW_ROW_SIMILARITY", weak)
    retrieval = _retrieval(engine)
    for text in QUERIES:
        query = engine.parse_query(text)
        prefilter = retrieval.prefilter({})
        first, deeper = engine._loop.run(  # pyright: ignore[reportPrivateUsage]
            retrieval.pools(query, prefilter, 20, MAX_FETCH, 10)
        )
        assert deeper is not None
        alone = engine._loop.run(retrieval.legs(query, prefilter, 20))  # pyright: ignore[reportPrivateUsage]
        assert list(first) == list(alone)
        for name, (rows, scores) in first.items():
            assert rows.tolist() == alone[name][0].tolist(), (text, name)
            assert scores.tolist() == alone[name][1].tolist(), (text, name)
        assert len(deeper["match"][0]) > len(first["match"][0])  # the deeper pool holds more


def test_a_corpus_without_copies_runs_the_first_pool_alone(engine: SearchEngine) -> None:
    retrieval = _retrieval(engine)
    query = engine.parse_query("links")
    retrieval.__dict__["copies"] = 1.0
    try:
        _, deeper = engine._loop.run(  # pyright: ignore[reportPrivateUsage]
            retrieval.pools(query, retrieval.prefilter({}), DEFAULT_POOL, MAX_FETCH, 10)
        )
    finally:
        retrieval.__dict__.pop("copies", None)
    assert deeper is None
