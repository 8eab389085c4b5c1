"""The heading-path leg: a section found by what its page and heading names mean.

A reference in the shape generated SDK docs take (one page per resource, one section per
operation: an operation id and code) answers a question in the reader's own words only through
the names of its pages and headings. The leg's vectors are built by a real build with the shipped
local model; the factorised arithmetic is checked against the plain sum it stands for.
"""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docs_mcp_core.build import BuildOptions, EmbeddingOptions, build_index
from docs_mcp_core.embedding.local import LocalEmbeddingProvider
from docs_mcp_core.index.derived_files import read_derived
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search import engine as engine_module
from docs_mcp_core.search.heading_leg import (
    HeadingTexts,
    HeadingVectors,
    HeadingVocabulary,
    chain_text,
    path_text,
)
from docs_mcp_core.search.hits import SearchHit
from docs_mcp_core.search.ranker import RankingWeights

PAGES = {
    "payouts": (
        "list",
        'res = client.payouts.list(status="pending")',
        "get",
        'client.payouts.get(payout_id="po_1")',
    ),
    "webhooks": (
        "create",
        'client.webhooks.create(url="https://example.com")',
        "delete",
        'client.webhooks.delete(webhook_id="wh_1")',
    ),
    "customers": (
        "list",
        "client.customers.list()",
        "update",
        'client.customers.update(customer_id="c_1", name="Ada")',
    ),
}
QUESTION = "how much money did I earn"  # no word of it is in the corpus


def _search(
    index: Path, query: str, options: SearchOptions | None = None, *, limit: int = 3, on_warning: Any = None
) -> list[SearchHit]:
    engine = SearchEngine.open(index, options=options or SearchOptions(), on_warning=on_warning)
    try:
        return engine.search(query, limit=limit).hits
    finally:
        engine.close()


def _write_reference(docs: Path) -> None:
    folder = docs / "sdks" / "acme"
    folder.mkdir(parents=True)
    for resource, (op1, code1, op2, code2) in PAGES.items():
        page = f"# {resource.title()}\n\n## {op1}\n\n```python\n{code1}\n```\n\n## {op2}\n\n```python\n{code2}\n```\n"
        (folder / f"{resource}.md").write_text(page, encoding="utf-8")


def _reference_with(tmp_path: Path, pages: dict[str, str]) -> Path:
    """The reference with ``pages`` (relative path → markdown) beside it, built with heading vectors."""
    docs = tmp_path / "docs"
    _write_reference(docs)
    for relative, text in pages.items():
        (docs / relative).parent.mkdir(parents=True, exist_ok=True)
        (docs / relative).write_text(text, encoding="utf-8")
    out = tmp_path / "idx"
    build_index(BuildOptions(docs_dir=docs, out_dir=out, heading_vectors=True))
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same reference built with heading vectors and without (lexical only)."""
    docs = tmp_path_factory.mktemp("reference")
    _write_reference(docs)
    with_vectors, lexical = tmp_path_factory.mktemp("with-headings"), tmp_path_factory.mktemp("lexical")
    build_index(
        BuildOptions(
            docs_dir=docs, out_dir=with_vectors, heading_vectors=True, indexed_at="2026-01-01T00:00:00.000Z"
        )
    )
    build_index(BuildOptions(docs_dir=docs, out_dir=lexical, indexed_at="2026-01-01T00:00:00.000Z"))
    return with_vectors, lexical


def test_path_and_chain_texts_are_the_names_split_into_words() -> None:
    assert path_text("sdks/dub/python/docs/sdks/links/README.md") == "sdks dub python sdks links"
    assert path_text("guides/retry-policies.md") == "guides retry policies"
    assert chain_text("sdks/links/README.md > Links > createMany") == "links > create many"
    assert chain_text("guides/intro.md") == ""


def test_texts_are_collected_once_per_distinct_path_and_chain() -> None:
    texts = HeadingTexts()
    for crumb in ("a/b.md > B > one", "a/b.md > B > two", "a/b.md > B > one"):
        texts.add("a/b.md", crumb)
    texts.add("a/c.md", "a/c.md")
    assert list(texts.paths) == ["a b", "a c"]
    assert list(texts.chains) == ["b > one", "b > two"]


def test_factorised_similarity_is_the_cosine_of_the_summed_vectors() -> None:
    rng = np.random.default_rng(7)
    unit = lambda m: (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)  # noqa: E731
    paths, chains = unit(rng.normal(size=(2, 8))), unit(rng.normal(size=(3, 8)))
    vocabulary = HeadingVocabulary(
        {"a b": 0, "a c": 1}, paths, {"b > one": 0, "b > two": 1, "c": 2}, chains, "m"
    )
    rows = [
        ("a/b.md", "a/b.md > B > one"),
        ("a/b.md", "a/b.md > B > two"),
        ("a/c.md", "a/c.md"),
        ("a/c.md", "a/c.md > C"),
    ]
    vectors = HeadingVectors.assemble(vocabulary, [f for f, _ in rows], [b for _, b in rows])
    query = unit(rng.normal(size=(1, 8)))[0]
    expected = []
    for path, chain in ((0, 0), (0, 1), (1, None), (1, 2)):
        summed = paths[path] + (chains[chain] if chain is not None else 0)
        expected.append(float(summed @ query / np.linalg.norm(summed)))
    assert np.allclose(vectors.similarity(query), expected, atol=1e-5)
    positions, scores = vectors.nearest(query, np.array([True, False, True, True]), 2)
    assert 1 not in positions.tolist() and len(positions) == 2
    assert scores[0] >= scores[1]


def test_a_question_in_the_readers_words_finds_the_section_its_names_mean(
    reference: tuple[Path, Path],
) -> None:
    with_vectors, lexical = reference
    hits = _search(with_vectors, QUESTION)
    assert hits and hits[0].chunk_id.startswith("sdks/acme/payouts.md#")
    assert _search(lexical, QUESTION) == []  # no shared word: the lexical legs find nothing


@pytest.mark.parametrize(
    "asked", [f"{QUESTION}?", f'"{QUESTION}"', f"'{QUESTION}?'", "how much `money` did I earn?!"]
)
def test_punctuation_and_quotes_around_a_question_do_not_move_its_vector(
    reference: tuple[Path, Path], asked: str
) -> None:
    # a question mark or quotes say nothing about the section wanted, but would move the model's vector
    engine = SearchEngine.open(reference[0], options=SearchOptions())
    try:
        retrieval = engine._retrieval
        prefilter = retrieval.prefilter({})

        def heading_leg(query: str) -> tuple[list[int], list[float]]:
            legs = engine._loop.run(retrieval.legs(engine.parse_query(query), prefilter, 50))
            positions, similarity = legs["heading"]
            return positions.tolist(), similarity.tolist()

        assert heading_leg(asked) == heading_leg(QUESTION)
    finally:
        engine.close()


def test_the_nearest_rows_are_found_on_the_legs_thread_beside_the_lexical_legs(
    reference: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the two matrix products of a search run while the lexical legs score, not after them
    engine = SearchEngine.open(reference[0], options=SearchOptions())
    try:
        leg = engine._retrieval.heading
        assert leg is not None
        threads: list[str] = []
        nearest = HeadingVectors.nearest

        def recorded(self: HeadingVectors, *args: Any) -> Any:
            threads.append(threading.current_thread().name)
            return nearest(self, *args)

        monkeypatch.setattr(HeadingVectors, "nearest", recorded)
        assert engine.search(QUESTION, limit=3).hits
        assert threads and all(name.startswith("docs-mcp-heading") for name in threads)

        # what the thread found is the leg's answer at that depth, and another depth is ranked again
        mask = np.ones(len(leg.vectors), dtype=bool)
        mask[::2] = False
        future = leg.start(QUESTION, mask, 200)
        assert future is not None
        started = future.result(30)
        assert started is not None
        for fetch in (200, 2):
            positions, similarity = leg.finish(started, mask, fetch, [])
            expected, scores = leg.vectors.nearest(started.embedding, mask, min(fetch, leg.DEPTH))
            keep = scores >= leg.NEW_ROW_SIMILARITY
            assert positions.tolist() == expected[keep].tolist()
            assert similarity.tolist() == scores[keep].tolist()
            assert not set(positions.tolist()) & set(np.flatnonzero(~mask).tolist())
    finally:
        engine.close()


def test_a_warmed_up_engine_has_the_heading_model_loaded(reference: tuple[Path, Path]) -> None:
    # a server warms up before it imports the MCP SDK: the first search must not load the model
    engine = SearchEngine.open(reference[0], options=SearchOptions())
    try:
        leg = engine._retrieval.heading
        assert leg is not None
        assert isinstance(leg.embedder, LocalEmbeddingProvider)
        engine.warm()
        assert leg.embedder.loaded
    finally:
        engine.close()


def test_of_two_sections_of_one_page_the_one_whose_name_means_the_question_gains(
    reference: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_vectors, _ = reference
    hits = {h.chunk_id: h.score for h in _search(with_vectors, "stop a webhook")}
    monkeypatch.setattr(engine_module, "RankingWeights", functools.partial(RankingWeights, sibling=0.0))
    without = {h.chunk_id: h.score for h in _search(with_vectors, "stop a webhook")}
    delete, create = "sdks/acme/webhooks.md#webhooks/delete", "sdks/acme/webhooks.md#webhooks/create"
    assert hits[delete] == pytest.approx(without[delete] * 1.05, rel=1e-4)  # the nearer sibling
    assert hits[create] == pytest.approx(without[create], rel=1e-6)


def test_the_original_recipe_searches_without_the_leg(reference: tuple[Path, Path]) -> None:
    with_vectors, lexical = reference
    query = "update a customer"
    results = [
        [(h.chunk_id, h.score) for h in _search(index, query, SearchOptions(ranking="original"), limit=5)]
        for index in (with_vectors, lexical)
    ]
    assert results[0] and results[0] == results[1]


def test_metadata_names_the_model_and_the_derived_files_hold_the_vectors(
    reference: tuple[Path, Path],
) -> None:
    with_vectors, lexical = reference
    meta = json.loads((with_vectors / "metadata.json").read_text(encoding="utf-8"))
    assert meta["heading_vectors"] == {"provider": "local", "model": "all-MiniLM-L6-v2", "dimensions": 384}
    assert meta["embedding"] is None  # no chunk vectors: the original reads a lexical index
    assert "heading_vectors" not in json.loads((lexical / "metadata.json").read_text(encoding="utf-8"))
    files, why = read_derived(with_vectors / ".lancedb", "chunks")
    assert files is not None, why
    part = files.parts["headings"]
    assert part.arrays["row_path"].shape == (9,)  # three sections a page
    assert part.arrays["paths"].shape == (3, 384)  # one vector per page, not per section


def test_an_index_whose_derived_files_lack_the_vectors_is_searched_without_them(
    reference: tuple[Path, Path], tmp_path: Path
) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(reference[0], copy)
    meta = json.loads((copy / "metadata.json").read_text(encoding="utf-8"))
    meta["heading_vectors"]["model"] = "another-model"  # vectors from a model this engine does not run
    (copy / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    notes: list[str] = []
    assert _search(copy, QUESTION, on_warning=notes.append) == []
    assert [h.chunk_id for h in _search(copy, "payouts list", limit=1)] == [
        "sdks/acme/payouts.md#payouts/list"
    ]
    assert any("heading-path vectors" in n and "rebuild" in n for n in notes)


def test_a_build_with_local_chunk_vectors_also_embeds_the_headings(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    _write_reference(docs)
    out = tmp_path / "idx"
    build_index(
        BuildOptions(
            docs_dir=docs, out_dir=out, heading_vectors=True, embedding=EmbeddingOptions(provider="local")
        )
    )
    hits = _search(out, QUESTION)
    assert hits and hits[0].chunk_id.startswith("sdks/acme/payouts.md#")


def test_a_query_that_writes_a_flag_or_a_key_is_left_to_the_lexical_legs(
    reference: tuple[Path, Path],
) -> None:
    # the names a flag or a key spells are found by the anchor cue; headings near in meaning compete
    with_vectors, _ = reference
    assert _search(with_vectors, QUESTION)
    assert _search(with_vectors, f"{QUESTION} --dry-run") == []
    assert _search(with_vectors, f"{QUESTION} tool.billing.max-amount") == []


def test_a_query_that_writes_a_flag_or_a_key_gets_no_chunk_vector_rows_either(tmp_path: Path) -> None:
    # the chunk vectors of a `local` build mean what the headings mean, and compete the same way
    docs = tmp_path / "docs"
    _write_reference(docs)
    out = tmp_path / "idx"
    local = EmbeddingOptions(provider="local")
    build_index(BuildOptions(docs_dir=docs, out_dir=out, heading_vectors=True, embedding=local))
    assert _search(out, QUESTION)
    assert _search(out, f"{QUESTION} --dry-run") == []
    assert _search(out, f"{QUESTION} tool.billing.max-amount") == []


def test_a_hyphenated_word_names_a_definition_only_where_the_corpus_defines_one(tmp_path: Path) -> None:
    # prose writes hyphenated words (month-end, two-factor) that no anchor of the corpus holds: the
    # query's meaning is in its words, and the heading leg reads them; a key the corpus defines
    # (its settings page's element id) is left to the lexical legs and the anchor cue
    settings = (
        '# Settings\n\n<dl>\n<dt id="max-amount"><code>max-amount</code></dt>\n'
        "<dd>The largest single transfer allowed.</dd>\n</dl>\n"
    )
    out = _reference_with(tmp_path, {"settings.md": settings})
    prose = _search(out, "my month-end earnings")  # no word of it is in the corpus
    assert prose and prose[0].chunk_id.startswith("sdks/acme/payouts.md#")
    defined = _search(out, "my month-end earnings max-amount")
    assert defined and all(h.chunk_id.startswith("settings.md") for h in defined)


def test_an_environment_variable_the_corpus_spells_is_left_to_the_lexical_legs(tmp_path: Path) -> None:
    # ACME_CACHE_DIR is the variable's name, not the words of the `acme cache dir` command's page,
    # whose path the heading leg reads as the same three words
    out = _reference_with(
        tmp_path,
        {
            "cli/acme-cache-dir.md": "# acme cache dir\n\nShow the cache directory.\n\n```console\n"
            "$ acme cache dir\n```\n",
            "environment.md": "# Environment variables\n\n## ACME_CACHE_DIR\n\nWhere acme keeps its cache."
            "\n\n## ACME_API_KEY\n\nThe key the client sends.\n",
        },
    )
    assert _search(out, "ACME_CACHE_DIR")[0].chunk_id == "environment.md#environment-variables/acmecachedir"
    spelled = [h.chunk_id for h in _search(out, f"{QUESTION} ACME_API_KEY")]
    assert spelled[0] == "environment.md#environment-variables/acmeapikey"
    assert not any(c.startswith("sdks/acme/payouts.md") for c in spelled)  # no heading rows
    # a name of that shape the corpus does not spell leaves the question to the leg
    unspelled = _search(out, f"{QUESTION} ACME_PAYOUT_LIMIT")
    assert unspelled and unspelled[0].chunk_id.startswith("sdks/acme/payouts.md#")


def test_row_scale_in_blocks_is_the_whole_computation_bit_for_bit() -> None:
    """The build sums each row's path and chain vectors a block at a time (the whole sum held
    three arrays of every row's vector); every row's scale stays the same bits."""
    from docs_mcp_core.search.heading_leg import _SCALE_BLOCK, _row_scale

    rng = np.random.default_rng(7)
    paths = rng.standard_normal((300, 384)).astype(np.float32)
    chains = rng.standard_normal((40, 384)).astype(np.float32)
    rows = 2 * _SCALE_BLOCK + 123  # three blocks, the last one short
    row_path = rng.integers(0, len(paths), rows).astype(np.int32)
    row_chain = rng.integers(0, len(chains), rows).astype(np.int32)
    whole = np.linalg.norm(paths[row_path] + chains[row_chain], axis=1)
    expected = (1.0 / np.maximum(whole, 1e-12)).astype(np.float32)
    got = _row_scale(paths, chains, row_path, row_chain)
    assert got.dtype == np.float32
    assert np.array_equal(got.view(np.uint32), expected.view(np.uint32))
    assert len(_row_scale(paths, chains, row_path[:0], row_chain[:0])) == 0


def test_a_query_with_a_lone_surrogate_leaves_the_leg_on_for_later_searches(
    reference: tuple[Path, Path],
) -> None:
    # a client's JSON may carry "\ud800": the tokenizer refused it, and that one request turned the
    # leg off for the server's life (a question in the reader's words then found nothing)
    notes: list[str] = []
    engine = SearchEngine.open(reference[0], options=SearchOptions(), on_warning=notes.append)
    try:
        engine.search("\ud800 payouts earn", limit=3)
        hits = engine.search(QUESTION, limit=3).hits
    finally:
        engine.close()
    assert notes == []
    assert hits and hits[0].chunk_id.startswith("sdks/acme/payouts.md#")
