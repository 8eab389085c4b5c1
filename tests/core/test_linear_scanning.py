"""Reading a file costs time linear in its size, whatever the file holds.

The shapes below are long runs of every character markdown treats specially, deep nesting, huge
tables and front matter, among them each shape that used to cost more than linear time somewhere
between reading a file and its table rows (a list item followed by 60,000 spaces took 36 s). A
file goes through what ``validate`` and ``build`` do with it (prepare, chunk, the validation
checks, the table rows) at two sizes 8x apart, and the CPU times are compared: linear work grows
about 8x, n^1.5 about 23x, quadratic 64x. CPU time of this process (not wall time), the best of
three runs and a paused garbage collector keep the comparison steady on a busy machine. A
property-based search repeats random markdown fragments the same way.

The scanners that replaced regular expressions must give exactly what those expressions gave, so
chunk text and search results do not change: they are compared with the expressions on small
random inputs.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docs_mcp_core import markdown, markdown_text
from docs_mcp_core.corpus import ManifestResolver
from docs_mcp_core.corpus_pool import ChunkedFile, chunk_one
from docs_mcp_core.file_checks import inspect_prepared_file
from docs_mcp_core.index.table import chunks_to_arrow
from docs_mcp_core.manifest import HINT_RE, hint_comments
from tests.support.cpu_time import best_cpu_seconds

GROWTH = 8  # the large input is this many times the small one
MAX_RATIO = 14.0  # linear: about 8; n^1.5: 23; quadratic: 64


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _lines(prefix: Callable[[int], str], size: int) -> str:
    """Lines ``prefix(i) + "x"`` until ``size`` characters (nesting that deepens line by line)."""
    out: list[str] = []
    total = 0
    i = 0
    while total < size:
        line = prefix(i) + "x\n"
        out.append(line)
        total += len(line)
        i += 1
    return "".join(out)


def _increasing_backtick_runs(size: int) -> str:
    """Runs of 1, 2, 3, ... backticks: no run has a partner to close a code span."""
    out: list[str] = []
    total = 0
    k = 1
    while total < size:
        out.append("`" * k + " a ")
        total += k + 3
        k += 1
    return "".join(out) + "\n"


def _unclosed_runs_then_code_spans(size: int) -> str:
    """Runs of 2, 3, 4, ... backticks (none closed) in the first half, then one-backtick code
    spans: each unclosed run once looked for its partner among every run after it."""
    runs = _increasing_backtick_runs(size // 2)[2:-1]  # from 2 backticks on
    return (runs + _repeat("`a` ", size - len(runs))).rstrip() + "\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "list item then spaces": lambda n: "- item" + " " * n + "\n",
    "list item then tabs": lambda n: "- item" + "\t" * n + "\n",
    "nested lists": lambda n: _lines(lambda i: "  " * i + "- ", n),
    "nested ordered lists": lambda n: _lines(lambda i: "   " * i + "1. ", n),
    "nested block quotes": lambda n: _lines(lambda i: "> " * i, n),
    "block quote run": lambda n: ">" * n + " x\n",
    "list markers on one line": lambda n: _repeat("- ", n) + "x\n",
    "line of #": lambda n: "#" * n + "\n",
    "heading with closing #s": lambda n: "# a" + " #" * (n // 2) + "\n",
    "line of backticks": lambda n: "`" * n + "\n",
    "unclosed code spans": _increasing_backtick_runs,
    "unclosed runs then code spans": _unclosed_runs_then_code_spans,
    "spaces inside a fence": lambda n: "```\n" + " " * n + "\nx\n```\n",
    "backticks inside a fence": lambda n: "````\n```" + " " * n + "x\n````\n",
    "line of pipes": lambda n: "|" * n + "\n",
    "long table": lambda n: "| a | b |\n|---|---|\n" + _repeat("| c | d |\n", n),
    "wide table": lambda n: "|" + _repeat(" a |", n) + "\n|" + _repeat("---|", n) + "\n",
    "table row with spaces": lambda n: "| a | b |\n|---|---|\n| c" + " " * n + "x |\n",
    "line of <": lambda n: "<" * n + "\n",
    "open tags": lambda n: _repeat("<a ", n) + "\n",
    "unclosed comments": lambda n: _repeat("<!--", n) + "\n",
    "unclosed autolinks": lambda n: _repeat("<http:", n) + "\n",
    "line of [": lambda n: "[" * n + "\n",
    "unclosed images": lambda n: _repeat("![", n) + "\n",
    "unclosed link targets": lambda n: _repeat("[a](", n) + "\n",
    "line of *": lambda n: "*" * n + "\n",
    "line of _": lambda n: "_" * n + "\n",
    "emphasis runs": lambda n: _repeat("***a ", n) + "\n",
    "heading of [": lambda n: "# " + "[" * n + "\n",
    "footnote calls among code spans": lambda n: _repeat("`a` x[^1] ", n) + "\n\n[^1]: a note\n",
    "unclosed footnote calls": lambda n: "# T[^1\n\n" + _repeat("[^", n) + "\n\n[^1]: a note\n",
    "links by reference in a heading": lambda n: "# " + _repeat("[a][b] ", n) + "\n\n[b]: https://x.test\n",
    "a table ended by tag lines": lambda n: "| a |\n|---|\n| b |\n" + _repeat("</Tab>\n", n),
    "unclosed hints": lambda n: _repeat("<!-- mcp_chunking_hint: {", n) + "\n",
    "hints sharing a brace": lambda n: _repeat("<!-- mcp_chunking_hint: {", n) + "}          x\n",
    "directives on one line": lambda n: _repeat("<!-- mcp_x ", n) + "\n",
    "many headings": lambda n: _repeat("## a\ntext\n", n),
    "a heading of spaces and hashes": lambda n: "# T\n\n## " + _repeat(" #", n) + "x\n",
    "front matter lines": lambda n: "---\n" + _repeat("a: b\n", n) + "---\n# x\n",
    "unknown front matter keys": lambda n: (
        "---\n" + "".join(f"mcp_k{i}: 1\n" for i in range(n // 12)) + "---\n"
    ),
    "front matter blank lines": lambda n: "---\n" + "\n" * n + "a: 1\nmcp_k: 1\n---\n",
    "unclosed front matter": lambda n: "---\n" + _repeat("a: b\n", n),
    "one heading repeated": lambda n: _repeat("## a\nx\n", n),  # chunk ids a, a-2, a-3 ...
    "headings that slug to nothing": lambda n: _repeat("## !!!\nx\n", n),
    "zero-width and bidi headings": lambda n: _repeat("## \u200b\u200f\u202e a\nx\n", n),
    "link reference definitions": lambda n: "".join(f"[r{i}]: http://x/{i}\n" for i in range(n // 20)),
    "carriage returns alone": lambda n: "# a\r" + _repeat("## b\rx\r", n),
    "comment left open over lines": lambda n: "<!--\n" + _repeat("x\n", n),
    "options linked to one section": lambda n: (
        "# run\n\n" + "".join(f"| [`--o{i}`](#x) |\n" for i in range(n // 16)) + '\n### <a name="x"></a> X\n'
    ),
    "a list of aliases": lambda n: "# run\n\n### Aliases\n\n" + _repeat("`tool run`, ", n) + "\n\n### --x\n",
}


def _forget_texts() -> None:
    """Empty every cache of docs_mcp_core keyed by its arguments (texts, lines, names): a run that
    found its texts there was timed without the work (the best of three runs always did)."""
    for module in [m for name, m in sys.modules.items() if name.startswith("docs_mcp_core")]:
        for value in list(vars(module).values()):
            if hasattr(value, "cache_clear") and inspect.signature(value).parameters:
                value.cache_clear()


def _process(folder: Path, text: str) -> object:
    """What validate and build do with one file, up to its table rows."""
    _forget_texts()
    (folder / "page.md").write_text(text, encoding="utf-8")
    result = chunk_one(folder, "page.md", ManifestResolver(folder), inspect=inspect_prepared_file)
    if isinstance(result, ChunkedFile):
        chunks_to_arrow(result.chunks, [], {})
    return result


def _cpu_seconds(folder: Path, text: str) -> float:
    return best_cpu_seconds(lambda: _process(folder, text))


def _growth(folder: Path, make: Callable[[int], str], size: int) -> float:
    return _cpu_seconds(folder, make(size * GROWTH)) / _cpu_seconds(folder, make(size))


# Front matter goes through the (pure Python) YAML parser: smaller sizes keep the test quick. The
# cost of deeper nesting grew as depth^3 = size^1.5, which shows only at larger sizes.
_SIZES = {
    "front matter lines": 1_000,
    "unknown front matter keys": 1_000,
    "many headings": 2_000,
    "one heading repeated": 2_000,
    "headings that slug to nothing": 2_000,
    "zero-width and bidi headings": 2_000,
    "nested lists": 32_000,
    "options linked to one section": 64_000,  # thousands of distinct options: quadratic if compared pairwise
    "unclosed runs then code spans": 16_000,
    "nested ordered lists": 32_000,
    "unclosed code spans": 16_000,
}


@pytest.mark.integration  # timed: out of the fast loop
@pytest.mark.parametrize("shape", list(SHAPES))
def test_time_grows_linearly_with_the_input(tmp_path: Path, shape: str) -> None:
    ratio = _growth(tmp_path, SHAPES[shape], _SIZES.get(shape, 4_000))
    assert ratio < MAX_RATIO, f"{shape}: {GROWTH}x the input took {ratio:.1f}x the time"


def test_lists_nested_a_thousand_deep_are_read_whole(tmp_path: Path) -> None:
    text = "".join("  " * i + f"- level {i}\n" for i in range(1000))  # 1 MB
    result = _process(tmp_path, text)
    assert isinstance(result, ChunkedFile) and result.chunk_count == 1
    assert "level 999" in result.chunks[0].content_text


def test_a_character_reference_of_thousands_of_digits_is_text(tmp_path: Path) -> None:
    """A reference has at most 7 decimal or 6 hex digits (CommonMark); a longer one is text. Read as
    a number, ``&#`` and 5,000 digits failed the file ("cannot chunk this file: ValueError: Exceeds
    the limit (4300 digits) for integer string conversion"), so no build of its corpus could run."""
    long = "&#" + "9" * 5_000 + ";"
    text = f"# Page\n\nA {long} B &#x{'f' * 2_000}; C &#12345678; D &#65; &#x263A; &amp;\n"
    result = _process(tmp_path, text)
    assert isinstance(result, ChunkedFile), result
    plain = result.chunks[0].content_text
    assert long in plain and f"&#x{'f' * 2_000};" in plain and "&#12345678;" in plain
    assert plain.endswith("D A \u263a &")


_FRAGMENTS = [
    *"`~ \t\n#*_[]()!<>|-=:\\&{}\"'",
    *("<!--", "-->", "<http:", "<a ", "![", "](", "```", "- ", "1. ", "> ", "---\n", "    "),
    *("<!-- mcp_chunking_hint: {", "mcp_x", '"chunk_by": "h3"', "x", "word "),
]
_fragments = st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=12).map("".join)


@pytest.mark.integration  # timed: out of the fast loop
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(prefix=_fragments, unit=_fragments, suffix=_fragments)
def test_repeated_fragments_take_linear_time(tmp_path: Path, prefix: str, unit: str, suffix: str) -> None:
    ratio = _growth(tmp_path, lambda n: prefix + _repeat(unit, n) + suffix, 2_000)
    assert ratio < MAX_RATIO, f"{prefix!r} + {unit!r}... + {suffix!r}: {ratio:.1f}x the time"


# ── the scanners give what the regular expressions they replaced gave ─────────────────────────────

_SMALL = st.lists(
    st.sampled_from([*"`~ \t\n#x*_[]()!<>/-:|=\\&;{}\r", "<!--", "-->", "<http:", "<a ", "![", "](", "```"]),
    max_size=40,
).map("".join)
_EQUIVALENCE = settings(max_examples=300, deadline=None, derandomize=True)

FENCE_CLOSE_RE = re.compile(r"\n?[ \t]*(`{3,}|~{3,})[ \t]*$")
COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
AUTOLINK_RE = re.compile(r"<((?:https?|mailto|ftp):[^>\s]+)>")
IMAGE_RE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
LINK_RE = re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
HEADING_MARK_RE = re.compile(r"^[ \t]*#{1,6}(?:[ \t]+|$)|[ \t]+#+[ \t]*$", re.MULTILINE)
TABLE_DELIM_RE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$", re.MULTILINE)


@_EQUIVALENCE
@given(_SMALL)
def test_closing_fences_comments_autolinks_and_links_as_the_expressions(text: str) -> None:
    assert markdown_text._strip_fence_close(text) == FENCE_CLOSE_RE.sub("", text, count=1)
    assert markdown_text._strip_comments(text) == COMMENT_RE.sub(" ", text)
    assert markdown_text._unwrap_autolinks(text) == AUTOLINK_RE.sub(r"\1", text)
    assert markdown_text._unwrap_links(text, image=True) == IMAGE_RE.sub(r"\1", text)
    assert markdown_text._unwrap_links(text, image=False) == LINK_RE.sub(r"\1", text)


@_EQUIVALENCE
@given(_SMALL)
def test_code_spans_as_the_expression(text: str) -> None:
    expected: list[str] = []

    def hold(m: re.Match[str]) -> str:
        expected.append(m.group(2))
        return f"\ufdd0{len(expected) - 1}\ufdd1"

    spans: list[str] = []
    assert markdown_text._hold_code_spans(text, spans) == CODE_SPAN_RE.sub(hold, text)
    assert spans == expected


@_EQUIVALENCE
@given(_SMALL)
def test_heading_marks_and_table_delimiters_as_the_expressions(text: str) -> None:
    assert markdown_text._HEADING_MARK_RE.sub("", text) == HEADING_MARK_RE.sub("", text)
    for line in text.splitlines():
        assert bool(markdown_text._TABLE_DELIM_RE.match(line)) == bool(TABLE_DELIM_RE.match(line))


_HINTS = st.lists(
    st.sampled_from(
        ["<!--", "-->", " ", "\n", "{", "}", "x", "<!-- mcp_chunking_hint: {", '"chunk_by": "h3"']
    ),
    max_size=20,
).map("".join)


@_EQUIVALENCE
@given(_HINTS)
def test_hint_comments_are_where_the_expression_matches(text: str) -> None:
    expected = {i: m.group(1) for i in range(len(text)) if (m := HINT_RE.match(text, i)) is not None}
    assert hint_comments(text) == expected


def test_plain_text_keeps_its_exact_shape() -> None:
    """A few hand-picked cases of the scanners, as the chunk text shows them."""

    def plain(text: str) -> str:
        return markdown_text.node_plain_text(markdown.parse_markdown(text).nodes[0], text)

    text = "See `a <b>` and ``c ` d``, <https://x.io>, ![alt](i.png) [t](u) [r][ref] <!-- c --> end"
    assert plain(text) == "See a <b> and c ` d, https://x.io, alt t r   end"
    assert plain("```python\nprint(1)\n```") == "print(1)"
    assert plain("- # Heading ##\n- item  \t\n") == "Heading\nitem"
