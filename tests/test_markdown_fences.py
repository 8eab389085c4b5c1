"""Every markdown file in the repository renders as written: no code fence left open, and no fence
line with prose after it (which does not close the block, so the prose and everything up to the next
fence render as code)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.support.paths import REPO_ROOT

_CONTAINER = re.compile(r"^[ \t>]*")  # the indentation and blockquote markers a fence line sits behind


def _tracked_markdown() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.md", "*.markdown"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode("utf-8")
    return [REPO_ROOT / name for name in listed.split("\0") if name]


def fence_problems(text: str) -> list[str]:
    """``line N: ...`` for each fence that is never closed or holds a fence line followed by prose."""
    lines = text.splitlines()
    problems: list[str] = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        marker = token.markup
        body = lines[start + 1 : end]
        closing = _CONTAINER.sub("", body[-1]).rstrip() if body else ""
        closed = bool(body) and closing.startswith(marker[0] * len(marker)) and not closing.strip(marker[0])
        if not closed:
            problems.append(f"line {start + 1}: the code fence opened here is never closed")
        for offset, line in enumerate(body[:-1] if closed else body):
            inner = _CONTAINER.sub("", line)
            if inner.startswith(marker) and inner.strip(marker[0]).strip():
                problems.append(
                    f"line {start + 2 + offset}: a fence line followed by text ({inner.strip()[:40]!r}) "
                    "does not close the block; put the text on its own line"
                )
    return problems


def test_the_checker_finds_both_mistakes() -> None:
    assert fence_problems("```bash\nrun\n```\n\ntext\n") == []
    assert fence_problems("> ```\n> quoted\n> ```\n") == []
    assert fence_problems("- item\n\n  ~~~\n  code\n  ~~~\n") == []
    assert fence_problems("````md\n```\nshown\n```\n````\n") == []
    assert fence_problems("```bash\nrun\n```\n\n```\nopen\n") == [
        "line 5: the code fence opened here is never closed"
    ]
    prose = fence_problems("```bash\nrun\n``` For hybrid search\nmore\n```\n")
    assert prose == [
        "line 3: a fence line followed by text ('``` For hybrid search') does not close the block; "
        "put the text on its own line"
    ]


@pytest.mark.parametrize("path", _tracked_markdown(), ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_code_fence_is_closed_and_alone_on_its_line(path: Path) -> None:
    assert fence_problems(path.read_text(encoding="utf-8")) == []
