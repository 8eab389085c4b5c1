"""Chunking rules (upstream-behaviour §3, and the original's chunking tests, §7)."""

from __future__ import annotations

import pytest

from docs_mcp_core.chunking import DEFAULT_MAX_CHUNK_SIZE, Strategy, build_chunks, embedding_input, slugify
from docs_mcp_core.markdown import utf16_len


def ids(markdown: str, strategy: Strategy, path: str = "guides/example.md") -> list[str]:
    return [c.chunk_id for c in build_chunks(path, markdown, strategy)]


def test_ids_are_ancestor_paths_with_per_parent_duplicate_counters() -> None:
    markdown = "\n".join(
        [
            "# Auth",
            "",
            "## Login",
            "first",
            "",
            "## Login",
            "second",
            "",
            "# Billing",
            "",
            "## Retry",
            "third",
        ]
    )
    assert ids(markdown, Strategy("h2")) == [
        "guides/example.md#_preamble",
        "guides/example.md#auth/login",
        "guides/example.md#auth/login-2",
        "guides/example.md#billing/retry",
    ]


def test_a_section_absorbs_later_higher_level_headings() -> None:
    markdown = "\n".join(
        ["# Auth", "", "## Login", "first", "", "## Login", "second", "", "# Billing", "", "## Retry"]
    )
    chunks = build_chunks("guides/example.md", markdown, Strategy("h2"))
    second = next(c for c in chunks if c.chunk_id.endswith("#auth/login-2"))
    assert "# Billing" in second.content


def test_preamble_before_the_first_boundary() -> None:
    chunks = build_chunks("guides/preamble.md", "intro\n\n## First\nbody", Strategy("h2"))
    assert [c.chunk_id for c in chunks] == ["guides/preamble.md#_preamble", "guides/preamble.md#first"]
    assert chunks[0].heading == "" and chunks[0].heading_level == 0
    assert chunks[0].breadcrumb == "guides/preamble.md"


def test_no_boundary_heading_gives_one_preamble_chunk_even_for_an_empty_file() -> None:
    assert ids("just text\n\n### deep", Strategy("h2"), "a.md") == ["a.md#_preamble"]
    empty = build_chunks("empty.md", "", Strategy("h2"))
    assert [(c.chunk_id, c.content) for c in empty] == [("empty.md#_preamble", "")]


def test_duplicate_parents_get_their_own_slug_in_child_ids() -> None:
    markdown = "\n".join(
        ["# Examples", "", "## Setup", "first setup", "", "# Examples", "", "## Setup", "second"]
    )
    assert ids(markdown, Strategy("h2"), "guides/examples.md") == [
        "guides/examples.md#_preamble",
        "guides/examples.md#examples/setup",
        "guides/examples.md#examples-2/setup",
    ]


def test_file_strategy_ids_and_fields() -> None:
    chunks = build_chunks("docs/a.md", "# Title\n\nBody text.\n", Strategy("file"), {"lang": "py"})
    assert len(chunks) == 1
    chunk = chunks[0]
    assert chunk.chunk_id == "docs/a.md"
    assert (chunk.heading, chunk.heading_level, chunk.breadcrumb, chunk.chunk_index) == (
        "",
        0,
        "docs/a.md",
        0,
    )
    assert chunk.metadata == {"lang": "py"}
    assert list(chunk.to_dict()) == [
        "chunk_id",
        "filepath",
        "heading",
        "heading_level",
        "content",
        "content_text",
        "breadcrumb",
        "chunk_index",
        "metadata",
    ]


def test_h1_and_h3_strategies() -> None:
    markdown = "# One\n\na\n\n## Sub\n\nb\n\n### Deep\n\nc\n\n# Two\n\nd\n"
    assert ids(markdown, Strategy("h1"), "x.md") == ["x.md#one", "x.md#two"]
    assert ids(markdown, Strategy("h3"), "x.md") == ["x.md#_preamble", "x.md#one/sub/deep"]


def test_fenced_code_is_kept_in_content_text() -> None:
    chunks = build_chunks("guides/code.md", "## Usage\n```ts\nclient.users.list()\n```", Strategy("h2"))
    assert "client.users.list()" in chunks[0].content_text


def test_headings_inside_code_fences_are_not_boundaries() -> None:
    markdown = "## Real\n\n```md\n## Not a heading\n```\n\n## Second\n\ntext\n"
    assert ids(markdown, Strategy("h2"), "c.md") == ["c.md#real", "c.md#second"]


def test_min_size_never_merges_across_headings() -> None:
    chunks = build_chunks(
        "guides/min-merge.md", "## One\nsmall\n\n## Two\ntiny", Strategy("h2", min_chunk_size=100)
    )
    assert [c.chunk_id for c in chunks] == ["guides/min-merge.md#one", "guides/min-merge.md#two"]


def test_split_parts_are_merged_back_when_undersized() -> None:
    markdown = "\n".join(
        ["## One", "This paragraph is intentionally long enough to force a split.", "", "tiny"]
    )
    chunks = build_chunks("guides/parts.md", markdown, Strategy("h2", max_chunk_size=70, min_chunk_size=20))
    assert [c.chunk_id for c in chunks] == ["guides/parts.md#one"]
    assert "tiny" in chunks[0].content
    # without min_chunk_size the same section is split in two parts
    split = build_chunks("guides/parts.md", markdown, Strategy("h2", max_chunk_size=70))
    assert [c.chunk_id for c in split] == ["guides/parts.md#one", "guides/parts.md#one-part-2"]


def test_merged_parts_are_not_renumbered() -> None:
    # parts: [heading + 64 x] [tiny] [68 x]; the tiny part 2 is merged into part 1
    markdown = f"## One\n\n{'x' * 64}\n\ntiny\n\n{'y' * 68}\n"
    chunks = build_chunks("p.md", markdown, Strategy("h2", max_chunk_size=70, min_chunk_size=20))
    assert [c.chunk_id for c in chunks] == ["p.md#one", "p.md#one-part-3"]


def _big(n: int) -> str:
    return "x" * n


def test_oversized_h2_is_refined_at_h3() -> None:
    markdown = "\n".join(
        [
            "## Authentication",
            _big(50),
            "",
            "### OAuth",
            _big(50),
            "",
            "### JWT",
            _big(50),
            "",
            "### API Keys",
            _big(50),
        ]
    )
    chunks = build_chunks("docs/auth.md", markdown, Strategy("h2", max_chunk_size=100))
    assert [c.chunk_id for c in chunks] == [
        "docs/auth.md#authentication",
        "docs/auth.md#authentication/oauth",
        "docs/auth.md#authentication/jwt",
        "docs/auth.md#authentication/api-keys",
    ]
    oauth = chunks[1]
    assert oauth.breadcrumb == "docs/auth.md > Authentication > OAuth"
    assert (oauth.heading, oauth.heading_level) == ("OAuth", 3)
    assert chunks[0].heading_level == 2


def test_refinement_recurses_h2_h3_h4() -> None:
    markdown = "\n".join(
        [
            "## Config",
            _big(50),
            "",
            "### Advanced",
            _big(50),
            "",
            "#### Timeouts",
            _big(50),
            "",
            "#### Retries",
            _big(50),
        ]
    )
    chunks = build_chunks("docs/config.md", markdown, Strategy("h2", max_chunk_size=100))
    by_id = {c.chunk_id: c for c in chunks}
    assert list(by_id) == [
        "docs/config.md#config",
        "docs/config.md#config/advanced",
        "docs/config.md#config/advanced/timeouts",
        "docs/config.md#config/advanced/retries",
    ]
    timeouts = by_id["docs/config.md#config/advanced/timeouts"]
    assert timeouts.breadcrumb == "docs/config.md > Config > Advanced > Timeouts"
    assert timeouts.heading_level == 4


def test_node_split_fallback_when_no_sub_headings() -> None:
    markdown = "\n".join(["## Huge Section", "Paragraph one. " + _big(80), "", "Paragraph two. " + _big(80)])
    chunks = build_chunks("docs/huge.md", markdown, Strategy("h2", max_chunk_size=100))
    # greedy whole-node groups: the heading alone (adding paragraph one would exceed 100), then each paragraph
    assert [c.chunk_id for c in chunks] == [
        "docs/huge.md#huge-section",
        "docs/huge.md#huge-section-part-2",
        "docs/huge.md#huge-section-part-3",
    ]
    assert [c.content for c in chunks[1:]] == ["Paragraph one. " + _big(80), "Paragraph two. " + _big(80)]
    # the level keeps being bumped while looking for sub-headings (original quirk)
    assert {c.heading_level for c in chunks} == {6}
    assert {c.heading for c in chunks} == {"Huge Section"}


def test_a_single_oversized_node_is_never_bisected() -> None:
    fence = "```\n" + "\n".join(["line"] * 60) + "\n```"
    chunks = build_chunks("f.md", f"## Code\n\n{fence}\n", Strategy("h2", max_chunk_size=100))
    assert [c.chunk_id for c in chunks] == ["f.md#code", "f.md#code-part-2"]
    assert chunks[1].content == fence


def test_default_max_chunk_size_applies() -> None:
    markdown = "\n".join(["## Giant", _big(DEFAULT_MAX_CHUNK_SIZE + 1000), "", "## Small", "tiny"])
    chunks = build_chunks("docs/giant.md", markdown, Strategy("h2"))
    giant = [c for c in chunks if c.chunk_id.startswith("docs/giant.md#giant")]
    assert len(giant) > 1
    assert DEFAULT_MAX_CHUNK_SIZE == 20_000


def test_default_max_applies_to_the_file_strategy_too() -> None:
    markdown = "\n".join(["# A", _big(15_000), "", "# B", _big(15_000)])
    chunks = build_chunks("big.md", markdown, Strategy("file"))
    assert [c.chunk_id for c in chunks] == ["big.md#a", "big.md#b"]


def test_refined_section_keeps_its_id_for_text_before_the_first_sub_heading() -> None:
    markdown = "\n".join(
        [
            "## Parent",
            "This is the preamble before any h3.",
            "",
            "### Child One",
            _big(80),
            "",
            "### Child Two",
            _big(80),
        ]
    )
    chunks = build_chunks("docs/pre.md", markdown, Strategy("h2", max_chunk_size=100))
    assert [c.chunk_id for c in chunks] == [
        "docs/pre.md#parent",
        "docs/pre.md#parent/child-one",
        "docs/pre.md#parent/child-two",
    ]
    assert "preamble before any h3" in chunks[0].content


def test_refined_preamble_children_hang_under_preamble() -> None:
    markdown = "\n".join(["intro " + _big(40), "", "# Sub", _big(80), "", "## Real", "body"])
    got = ids(markdown, Strategy("h2", max_chunk_size=100), "r.md")
    assert got[:2] == ["r.md#_preamble", "r.md#_preamble/sub"]


def test_duplicate_sub_headings_inside_a_refined_section() -> None:
    markdown = "\n".join(["## Parent", "", "### Example", _big(80), "", "### Example", _big(80)])
    assert ids(markdown, Strategy("h2", max_chunk_size=100), "docs/dedup.md") == [
        "docs/dedup.md#parent",
        "docs/dedup.md#parent/example",
        "docs/dedup.md#parent/example-2",
    ]


def test_content_is_the_exact_source_slice() -> None:
    markdown = "---\ntitle: T\n---\n\n## One  \n\nSome *text*   \n\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Two\n\n- x\n"
    chunks = build_chunks("s.md", markdown, Strategy("h2"))
    assert chunks[0].content == "## One  \n\nSome *text*   \n\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    assert chunks[1].content == "## Two\n\n- x"
    for chunk in chunks:
        assert chunk.content in markdown
        assert "title: T" not in chunk.content


def test_plain_text_keeps_list_items_and_table_cells_apart() -> None:
    markdown = "## Data\n\n- alpha\n- beta\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    text = build_chunks("t.md", markdown, Strategy("h2"))[0].plain_text
    words = text.split()
    assert "alpha" in words and "beta" in words
    assert "alphabeta" not in text
    assert {"a", "b", "1", "2"} <= set(words)
    assert "Data" in words


@pytest.mark.parametrize(
    ("markdown", "kept", "gone"),
    [
        ("Call `client.get<Link>()` with `Bearer <token>`.", ["client.get<Link>()", "Bearer <token>"], ["`"]),
        ("Set `__pydantic_extra__` and `*string` fields.", ["__pydantic_extra__", "*string"], []),
        (
            "See [`links.create<T>`](https://x.test/a) and **`x*y`**.",
            ["links.create<T>", "x*y"],
            ["https", "**"],
        ),
        ('<Card title="Go" description="run `@` refs" /> after', ["after"], ["Card", "title", "@"]),
        ("Double ``a ` b`` ticks, <b>bold</b> text.", ["a ` b", "bold"], ["<b>", "``"]),
    ],
)
def test_plain_text_keeps_code_spans_verbatim(markdown: str, kept: list[str], gone: list[str]) -> None:
    text = build_chunks("c.md", f"## Code\n\n{markdown}\n", Strategy("h2"))[0].plain_text
    for fragment in kept:
        assert fragment in text
    for fragment in gone:
        assert fragment not in text


def test_sizes_are_counted_in_utf16_code_units() -> None:
    emoji = "😀" * 30  # 30 code points, 60 UTF-16 units
    assert utf16_len(emoji) == 60
    markdown = f"## E\n\n{emoji}\n\n{emoji}\n"
    # 4 + 2 + 60 + 2 + 60 = 128 units but only 98 code points
    assert len(build_chunks("e.md", markdown, Strategy("h2", max_chunk_size=100))) > 1
    assert len(build_chunks("e.md", markdown, Strategy("h2", max_chunk_size=128))) == 1


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello, World!", "hello-world"),
        ("  Spaces   and---dashes ", "spaces-and-dashes"),
        ("Ünïcödé only", "ncd-only"),
        ("日本語", ""),
    ],
)
def test_slugify(heading: str, slug: str) -> None:
    assert slugify(heading) == slug


def test_non_ascii_heading_falls_back_to_section() -> None:
    assert ids("## 日本語\n\ntext\n\n## 日本語\n\nmore", Strategy("h2"), "j.md") == [
        "j.md#section",
        "j.md#section-2",
    ]


def test_heading_text_strips_inline_markup() -> None:
    chunks = build_chunks("m.md", "## The `client.get()` **call**\n\nbody", Strategy("h2"))
    assert chunks[0].heading == "The client.get() call"
    assert chunks[0].chunk_id == "m.md#the-clientget-call"


def test_blank_filepath_is_rejected() -> None:
    with pytest.raises(ValueError, match="filepath is required"):
        build_chunks("  ", "text", Strategy("h2"))


def test_embedding_input_prefixes_the_breadcrumb() -> None:
    chunk = build_chunks("docs/auth.md", "## Login\n\nUse a token.", Strategy("h2"))[0]
    assert embedding_input(chunk) == "Context: docs/auth.md > Login\n\nContent:\nLogin\n\nUse a token."
