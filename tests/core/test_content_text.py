"""``content_text`` is the original's (mdast-util-to-string of each top-level node, joined by a blank
line); our plain text, which the default ranking reads, keeps words apart and drops markup.

The expected values are what remark-parse 11 + remark-gfm 4 + mdast-util-to-string 4 (the
original's parser) give for the same markdown, as upstream-behaviour.md §3.1 describes them.
"""

from __future__ import annotations

import pytest

from docs_mcp_core.chunking import Strategy, build_chunks, embedding_input, plain_text_of

CLI_DL = (
    '<dl class="cli-reference"><dt id="uv-sync--frozen"><a href="#uv-sync--frozen"><code>--frozen</code></a>'
    "</dt><dd><p>Sync without updating the <code>uv.lock</code> file.</p>\n<p>May also be set with the "
    "<code>UV_FROZEN</code> environment variable.</p></dd></dl>"
)

CASES = {
    # list items and table cells run together
    "## Data\n\n- alpha\n- beta\n\n| a | b |\n|---|---|\n| 1 | 2 |\n": "Data\n\nalphabeta\n\nab12",
    # raw HTML stays as written: element ids, anchors and link targets included
    f'## uv sync\n\n<h3 class="cli-reference">Options</h3>\n\n{CLI_DL}\n': (
        f'uv sync\n\n<h3 class="cli-reference">Options</h3>\n\n{CLI_DL}'
    ),
    # markdown link targets go, reference definitions and hard breaks give nothing, entities decode
    (
        "## Links\n\nSee [the guide](guides/a.md#setup) and <https://x.test/b>, or [ref][r] and "
        "![alt *text*](i.png).\n\n[r]: https://x.test/r\n[s]: https://x.test/s\n\n"
        "After &amp; before\\* and a hard  \nbreak.\n"
    ): (
        "Links\n\nSee the guide and https://x.test/b, or ref and alt text.\n\n\n\n\n\n"
        "After & before* and a hardbreak."
    ),
    # a key heading keeps its attribute text; thematic break empty; comments kept; task markers
    # dropped; a code span keeps its line ending; code blocks give their code
    (
        "## Configuration\n\n### [`cache-dir`](#cache-dir) {: #cache-dir }\n\nPath to the cache directory."
        "\n\n---\n\n<!-- a note -->\n\n- [x] done item\n- [ ] open `multi\nline` span\n\n"
        '```toml title="uv.toml"\ncache-dir = "./.uv_cache"\n```\n'
    ): (
        "Configuration\n\ncache-dir {: #cache-dir }\n\nPath to the cache directory.\n\n\n\n"
        '<!-- a note -->\n\ndone itemopen multi\nline span\n\ncache-dir = "./.uv_cache"'
    ),
    # a table inside a list item (the chunker's parse records only a table's extent), nested
    # quotes and lists, cells with code spans and escaped pipes
    "- item\n\n  | a | b |\n  |---|---|\n  | 1 | `2` |\n- next *em* [l](u)\n": "itemab12next em l",
    "> quote\n> > deeper `code`\n\n1. one\n   - two\n     - three\n": "quotedeeper code\n\nonetwothree",
    "| a \\| b | `c` |\n| --- | --- |\n| snake_case | x_ |\n": "a | bcsnake_casex_",
}


def test_lists_nested_deeper_than_the_parser_follows_keep_every_item() -> None:
    markdown = "".join("  " * i + f"- level {i}\n" for i in range(40))
    (chunk,) = build_chunks("d.md", markdown, Strategy("h2"))
    assert chunk.content_text == "".join(f"level {i}" for i in range(40))


@pytest.mark.parametrize(("markdown", "expected"), list(CASES.items()))
def test_content_text_is_the_originals(markdown: str, expected: str) -> None:
    (chunk,) = build_chunks("d.md", markdown, Strategy("h2"))
    assert chunk.content_text == expected


def test_plain_text_keeps_words_apart_and_drops_markup() -> None:
    markdown = f"## Data\n\n- alpha\n- beta\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n{CLI_DL}\n"
    (chunk,) = build_chunks("t.md", markdown, Strategy("h2"))
    words = chunk.plain_text.split()
    assert {"alpha", "beta", "a", "b", "1", "2", "--frozen", "UV_FROZEN"} <= set(words)
    assert "alphabeta" not in chunk.plain_text and "<dt" not in chunk.plain_text
    assert embedding_input(chunk).endswith(chunk.plain_text)


def test_plain_text_is_rendered_from_content_when_a_chunk_lacks_it() -> None:
    (chunk,) = build_chunks("t.md", "## Data\n\n- alpha\n- beta\n", Strategy("h2"))
    bare = type(chunk)(**{**chunk.to_dict(), "plain_text": ""})
    assert plain_text_of(bare) == chunk.plain_text == "Data\n\nalpha\nbeta"
    assert "plain_text" not in chunk.to_dict()


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        # icon fonts write private-use characters; the plain text's code-span placeholders were
        # U+E000 digits U+E001, so these failed the whole file (IndexError, or ValueError past
        # 4,300 digits) or took a code span's text in their place
        ("`code` x \ue0009\ue001 y", "code x \ue0009\ue001 y"),
        ("`code` x \ue000" + "9" * 5_000 + "\ue001 y", "code x \ue000" + "9" * 5_000 + "\ue001 y"),
        ("`code` x \ue0000\ue001 y", "code x \ue0000\ue001 y"),
        ("`a` \ufdd00\ufdd1 `b` \ufdd0", "a \ufdd00\ufdd1 b \ufdd0"),
        ("`code` &#xE000;0&#xE001; &#xFDD0;0&#xFDD1;", "code \ue0000\ue001 0"),
    ],
)
def test_private_use_characters_beside_code_spans_stay_as_written(markdown: str, plain: str) -> None:
    from docs_mcp_core.markdown_text import markdown_plain_text

    assert markdown_plain_text(markdown) == plain
