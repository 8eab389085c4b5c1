"""The ranking features computed from text (and the default ranking on small built indexes),
pinned on small hand-made inputs and tables; the query-time arithmetic is in test_ranker.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.chunking import Chunk
from docs_mcp_core.ranking import (
    expand_identifiers,
    generic_headings,
    identifier_part_spans,
    identifier_parts,
    nav_ratio,
    path_words,
    static_prior,
    unheaded_title,
)
from docs_mcp_core.search import Query, SearchEngine, SearchOptions


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("createMany", ["create", "many"]),
        ("create_many", ["create", "many"]),
        ("links.create_many", ["links", "create", "many"]),
        ("s.Links.Upsert", ["s", "links", "upsert"]),
        ("HTTPClient", ["http", "client"]),
        ("plain", ["plain"]),
    ],
)
def test_identifier_parts(token: str, parts: list[str]) -> None:
    assert identifier_parts(token) == parts


def test_expand_identifiers_keeps_the_text_and_adds_the_parts() -> None:
    text = "Call dub.links.createMany to add links."
    expanded = expand_identifiers(text)
    assert expanded.startswith(text)
    assert "dub links create many" in expanded
    assert expand_identifiers("no identifiers here") == "no identifiers here"


def test_identifier_part_spans_are_where_the_added_parts_stand(examples_docs: Path) -> None:
    text = "Pass a RetryConfig to dub.links.createMany, not retry_config or a plain word."
    spans = identifier_part_spans(text)
    assert [text[start:end] for start, end in spans] == [
        *("Retry", "Config"),
        *("dub", "links", "create", "Many"),
        *("retry", "config"),
    ]
    assert identifier_part_spans("plain words only, v2 and HTTP") == []
    # the same parts expand_identifiers adds, in the same order, over a whole corpus
    for path in sorted(examples_docs.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        added = expand_identifiers(text)[len(text) :].split()
        assert [text[start:end].lower() for start, end in identifier_part_spans(text)] == added, path


def test_path_words_are_the_path_and_ancestor_headings() -> None:
    words = path_words(
        "sdks/dub/python/docs/sdks/links/README.md",
        "sdks/dub/python/docs/sdks/links/README.md > Links > create",
    )
    assert words.split()[:7] == ["sdks", "dub", "python", "docs", "sdks", "links", "README"]
    assert "Links" in words and "create" not in words.split()  # own heading is not part of the path


def test_a_title_only_the_front_matter_states_stands_above_the_page() -> None:
    def chunk(heading: str, breadcrumb: str, content: str) -> Chunk:
        return Chunk("a.md#x", "a.md", heading, 2, content, content, breadcrumb, 0)

    sections = [chunk("Channels", "a.md > Channels", "Stable and next."), chunk("", "a.md", "Intro.")]
    assert unheaded_title("Release management", sections) == "Release management"
    assert unheaded_title(None, sections) is None and unheaded_title("  ", sections) is None
    # a heading says it: the chunk's own, a breadcrumb's, or a heading line inside a chunk (ATX with
    # a closing run, setext), compared without case, markup and punctuation
    assert unheaded_title("Channels", sections) is None
    assert unheaded_title("Caching", [chunk("Dir", "a.md > Caching > Dir", "x")]) is None
    assert unheaded_title("The `uv` CLI", [chunk("", "a.md", "# The uv CLI ##\n\nText.")]) is None
    assert unheaded_title("Setext", [chunk("", "a.md", "Setext\n======\n\nText.")]) is None
    assert unheaded_title("Setext", [chunk("", "a.md", "```sh\nSetext\n```")]) == "Setext"
    # the title is the words of a top heading above every chunk
    words = path_words("versioning.md", "versioning.md > Channels", "Release management")
    assert words == "versioning Release management"


def test_nav_ratio_and_generic_headings() -> None:
    toc = "## Operations\n\n* [create](a.md)\n* [list](b.md)\n* [delete](c.md)\n"
    assert nav_ratio(toc) == 1.0
    assert nav_ratio("## Create\n\nCreates a link.\n\n```py\nx = 1\n```\n") == 0.0
    headings = ["Fields"] * 30 + ["Example Usage"] * 25 + ["createMany", "upsert"]
    assert generic_headings(headings) == {"fields", "example usage"}


def test_static_prior_damps_link_lists_titles_generic_headings_and_depth() -> None:
    generic = {"fields"}
    plain = static_prior("a.md", "create", "Creates a thing.", generic)
    assert plain == pytest.approx(1.0)
    assert static_prior("a.md", "Operations", "* [x](x.md)\n* [y](y.md)", generic) == pytest.approx(0.5)
    assert static_prior("a.md", "Fields", "| a | b |", generic) == pytest.approx(0.8)
    assert static_prior("a/b/c.md", "create", "text", generic) < plain
    assert static_prior("a.md", "", "# cargo-yank(1)\n\n## Options", generic) == pytest.approx(0.5)
    assert static_prior("a.md", "", "# cargo-yank(1)\n\nRemove a crate.", generic) == pytest.approx(1.0)


def test_coverage_terms_drop_short_and_stop_words_and_cut_endings() -> None:
    def coverage_terms(query: str) -> list[str]:
        return Query.parse(query).coverage_terms

    assert coverage_terms("How do I verify the Webhook signature?") == ["verify", "webhook", "signature"]
    assert coverage_terms("tags TAG Tags") == ["tag"]
    assert coverage_terms("go to it") == []


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def ranked_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("ranking-docs")
    for lang in ("go", "python", "typescript"):
        _write(
            docs,
            f"sdks/{lang}/.docs-mcp.json",
            json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"language": lang}}),
        )
        _write(
            docs,
            f"sdks/{lang}/docs/links/README.md",
            "# Links\n\n## createMany\n\nAdd several short links in one request.\n\n"
            "## upsert\n\nUpdate a link or add it when it does not exist.\n\n"
            "## Operations\n\n* [createMany](#createmany)\n* [upsert](#upsert)\n* [links many](#many)\n",
        )
        # the same model page, byte for byte, in every language
        _write(
            docs,
            f"sdks/{lang}/docs/models/linkschema.md",
            "# LinkSchema\n\n## Fields\n\n| url | the destination |\n",
        )
    out = tmp_path_factory.mktemp("ranking-idx")
    build_index(BuildOptions(docs_dir=docs, out_dir=out, indexed_at="2026-01-01T00:00:00.000Z"))
    return out


def test_identifier_parts_are_searchable(ranked_index: Path) -> None:
    default = SearchEngine.open(ranked_index)
    original = SearchEngine.open(ranked_index, options=SearchOptions(ranking="original"))
    top = default.search("create many links", limit=3, filters={"language": "python"}).hits[0]
    assert top.chunk_id == "sdks/python/docs/links/README.md#links/createmany"
    orig_ids = [h.chunk_id for h in original.search("create many links", filters={"language": "python"}).hits]
    assert "sdks/python/docs/links/README.md#links/createmany" not in orig_ids[:1]


def test_taxonomy_cue_in_an_unfiltered_query_prefers_that_language(ranked_index: Path) -> None:
    engine = SearchEngine.open(ranked_index)
    for lang, word in (("go", "Go"), ("typescript", "TypeScript"), ("python", "Python")):
        hits = engine.search(f"upsert a link with the {word} SDK", limit=3).hits
        assert hits[0].metadata["language"] == lang


def test_link_lists_rank_below_the_sections_they_point_to(ranked_index: Path) -> None:
    engine = SearchEngine.open(ranked_index)
    ids = [h.chunk_id for h in engine.search("createMany upsert", limit=5, filters={"language": "go"}).hits]
    assert ids.index("sdks/go/docs/links/README.md#links/operations") > ids.index(
        "sdks/go/docs/links/README.md#links/createmany"
    )


def test_byte_identical_chunks_collapse_into_one_hit(ranked_index: Path) -> None:
    default = SearchEngine.open(ranked_index)
    original = SearchEngine.open(ranked_index, options=SearchOptions(ranking="original"))
    fields = [
        h for h in default.search("LinkSchema fields destination", limit=10).hits if h.heading == "Fields"
    ]
    assert len(fields) == 1
    orig_fields = [
        h for h in original.search("LinkSchema fields destination", limit=10).hits if h.heading == "Fields"
    ]
    assert len(orig_fields) == 3


def test_a_chunk_with_every_query_word_outranks_one_repeating_a_single_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import docs_mcp_core.search.ranker as ranker_module

    docs = tmp_path / "docs"
    # "webhook" is rare in the corpus, "verify" and "signature" are everywhere: BM25 alone prefers
    # the short section that repeats the rare word
    _write(docs, "guides/events.md", "# Events\n\n## Delivery\n\nWebhook events and webhook retries.\n")
    _write(
        docs,
        "guides/security.md",
        "# Security\n\n## Incoming requests\n\n"
        + "Verify the signature of each incoming webhook before you trust it.\n",
    )
    for i in range(8):
        _write(docs, f"guides/keys-{i}.md", f"# Keys {i}\n\n## Signing\n\nVerify the signature of key {i}.\n")
    out = tmp_path / "idx"
    build_index(BuildOptions(docs_dir=docs, out_dir=out, indexed_at="2026-01-01T00:00:00.000Z"))
    query = "verify webhook signature"
    security = "guides/security.md#security/incoming-requests"
    with_coverage = [h.chunk_id for h in SearchEngine.open(out).search(query, limit=3).hits]
    assert with_coverage[0] == security
    monkeypatch.setattr(ranker_module, "COVERAGE_DEPTH", 0)  # the signal off: no row is measured
    without = [h.chunk_id for h in SearchEngine.open(out).search(query, limit=3).hits]
    assert without[0] == "guides/events.md#events/delivery"
