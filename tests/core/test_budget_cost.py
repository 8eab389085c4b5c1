"""A budgeted get_doc answer of a large section costs what the answer holds, not what the section
holds: only the blocks that may fit are tokenized, and a bounded start of the rest for the notice's
"about N more tokens"; reading the section part after part parses its markdown once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core import markdown, tokens
from docs_mcp_core.tokens import ENCODINGS, count_tokens, get_encoding
from tests.support.tiny_corpus import build_pages, opened

CODE_LINES = 60_000  # a code block of about 2.3 MB
ABOUT = re.compile(r"about ([\d,]+) more tokens follow")
CURSOR = re.compile(r'repeat this call with cursor "([^"]+)" ---$')


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    code = "\n".join(f"value_{i} = compute(alpha, beta, {i})  # step {i}" for i in range(CODE_LINES))
    page = f"# Guide\n\nIntro.\n\n## Huge\n\nBefore the code.\n\n```python\n{code}\n```\n\nAfter the code.\n"
    return build_pages(tmp_path_factory, "budget-cost", {"guide.md": page})


@pytest.fixture
def tokenized(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The length of every text the shipped encodings tokenize, in order."""
    lengths: list[int] = []
    for name in ENCODINGS:
        encoding = get_encoding(name)

        def counting(text: str, encode: Any = encoding.encode_ordinary) -> list[int]:
            lengths.append(len(text))
            return encode(text)

        monkeypatch.setattr(encoding, "encode_ordinary", counting)
    yield lengths


def test_a_small_budget_on_a_huge_section_tokenizes_a_bounded_part_of_it(
    index: Path, tokenized: list[int]
) -> None:
    with opened(index) as engine:
        whole = engine.get_doc("guide.md#guide/huge", scope="section")
        tokenized.clear()
        first = engine.get_doc("guide.md#guide/huge", scope="section", max_tokens=1000)
    assert len(whole) > 2_000_000
    assert sum(tokenized) <= 600_000  # the whole section was tokenized, four times (2.3 MB: 3.5 s at 9 MB)
    assert count_tokens(first, "o200k_base") <= 1000 and "Before the code." in first
    about = int(ABOUT.search(first).group(1).replace(",", ""))  # type: ignore[union-attr]
    rest = count_tokens(whole[whole.index("```python") :], "o200k_base")
    assert 0.9 * rest <= about <= 1.1 * rest


@pytest.fixture(scope="module")
def list_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    items = "\n".join(
        f"- item {i}: the retry policy waits {i} ms before the next attempt" for i in range(5_000)
    )
    page = f"# Guide\n\nIntro.\n\n## Steps\n\n{items}\n"
    return build_pages(tmp_path_factory, "budget-list", {"guide.md": page})


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every source the markdown is cut from, in order."""
    lengths: list[int] = []
    cut_points = markdown.cut_points

    def counting(source: str) -> list[markdown.CutPoint]:
        lengths.append(len(source))
        return cut_points(source)

    monkeypatch.setattr(markdown, "cut_points", counting)
    return lengths


def read_part_by_part(engine: Any, chunk_id: str, scope: str) -> list[str]:
    """Every part of a get_doc answer at 2,000 tokens, following its cursors to the last."""
    parts: list[str] = []
    cursor = None
    for _ in range(500):
        parts.append(engine.get_doc(chunk_id, scope=scope, max_tokens=2000, cursor=cursor))
        found = CURSOR.search(parts[-1])
        if found is None:
            return parts
        cursor = found.group(1)
    raise AssertionError(f"{chunk_id}: still more parts after 500")


@pytest.mark.parametrize(
    ("chunk_id", "scope"), [("guide.md#guide/steps", "section"), ("guide.md#guide/steps-part-2", "chunk")]
)
def test_reading_a_long_section_part_by_part_parses_it_once(
    list_index: Path, parsed: list[int], chunk_id: str, scope: str
) -> None:
    with opened(list_index) as engine:
        whole = engine.get_doc(chunk_id, scope=scope)
        parts = read_part_by_part(engine, chunk_id, scope)
    assert len(parts) > 20
    assert all(count_tokens(p, "o200k_base") <= 2000 for p in parts)
    assert [line for p in parts for line in p.splitlines() if line.startswith("- item")] == [
        line for line in whole.splitlines() if line.startswith("- item")
    ]
    assert sum(parsed) <= 1.1 * len(whole)  # was parsed whole again for each of the ~40 parts


@pytest.fixture(scope="module")
def many_sections(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sections = "".join(f"## Step {i}\n\nWait {i} ms, then retry the request.\n\n" for i in range(1_500))
    return build_pages(tmp_path_factory, "budget-many", {"guide.md": f"# Guide\n\nIntro.\n\n{sections}"})


def test_reading_a_parent_of_many_chunks_part_by_part_cuts_it_once(
    many_sections: Path, parsed: list[int]
) -> None:
    with opened(many_sections) as engine:
        parts = read_part_by_part(engine, "guide.md#guide/step-7", "parent")
    steps = [line for p in parts for line in p.splitlines() if line.startswith("## Step ")]
    assert len(parts) > 10 and steps == [f"## Step {i}" for i in range(1_500)]
    assert len(parsed) <= 1_600  # each of its 1,500 chunks was cut again for each of the ~15 parts


@pytest.fixture(scope="module")
def huge_block(tmp_path_factory: pytest.TempPathFactory) -> Path:
    code = "a b c d e f g h i j\n" * 220_000  # 4.4 MB, 2.2 million tokens
    page = f"# Guide\n\nIntro.\n\n## Huge\n\nBefore.\n\n```text\n{code}```\n\nAfter.\n"
    return build_pages(tmp_path_factory, "budget-huge-block", {"guide.md": page})


def test_a_block_no_budget_can_hold_is_named_so_without_counting_it_all(
    huge_block: Path, tokenized: list[int]
) -> None:
    with opened(huge_block) as engine:
        first = engine.get_doc("guide.md#guide/huge", scope="section", max_tokens=1000)
        cursor = CURSOR.search(first).group(1)  # type: ignore[union-attr]
        tokenized.clear()
        second = engine.get_doc("guide.md#guide/huge", scope="section", max_tokens=1000, cursor=cursor)
        assert second.endswith(
            "--- The next code block needs more tokens than max_tokens can be (1,000,000). To read it, "
            f'repeat this call without max_tokens and with cursor "{cursor}" ---'
        )  # was: 'repeat this call with max_tokens 1,100,150 or more', which max_tokens refuses
        rest = engine.get_doc("guide.md#guide/huge", scope="section", cursor=cursor)
    assert sum(tokenized) < 6_000_000  # was the whole block once per encoding: 14 s for a 40 MB one
    assert rest.startswith("--- Section: guide.md#guide/huge") and rest.rstrip().endswith("After.")
    assert rest.count("a b c d e f g h i j") == 220_000


def test_a_large_budget_on_a_larger_section_tokenizes_it_only_past_the_budget(
    index: Path, tokenized: list[int]
) -> None:
    with opened(index) as engine:
        whole = engine.get_doc("guide.md#guide/huge", scope="section")
        tokenized.clear()
        part = engine.get_doc("guide.md#guide/huge", scope="section", max_tokens=200_000)
    spent = sum(tokenized)
    assert count_tokens(whole, "o200k_base") > 1_000_000 and count_tokens(part, "o200k_base") <= 200_000
    assert part.startswith(whole[: whole.index("```python")])  # the code block comes next, too large
    assert spent <= 5_000_000  # the 3.3 MB section, twice per encoding: 13.4 MB


def test_a_budgeted_answer_that_fits_by_its_bytes_builds_no_encoding(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # building the shipped encodings takes a good part of a second and about 100 MB: an agent's
    # first budgeted call on a short chunk or a short result page must not wait for them
    built: dict[str, object] = {}
    monkeypatch.setattr(tokens, "_encodings", built)
    with opened(index) as engine:
        doc = engine.get_doc("guide.md#_preamble", max_tokens=1000)
        page = engine.search("intro", max_tokens=4000)
        assert "Intro." in doc and page.hits
        assert built == {}
        cut = engine.get_doc("guide.md#guide/huge", scope="section", max_tokens=1000)
    assert "more tokens follow" in cut
    assert sorted(built) == sorted(ENCODINGS)  # counted with every shipped encoding once needed
