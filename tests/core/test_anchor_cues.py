"""Command-line and configuration references: element ids, key headings and page names as cues.

A small book in the shape generated references take: one page per command whose option groups
repeat nearly verbatim (only the element ids name the command), a configuration reference with one
section per key, and a guide that mentions the same names in passing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine

OPTIONS = """## Common options

<dl>
<dt id="option-tool-{cmd}---frozen"><a href="#option-tool-{cmd}---frozen"><code>--frozen</code></a></dt>
<dd><p>Run without updating the lock file.</p></dd>
<dt id="option-tool-{cmd}---offline"><a href="#option-tool-{cmd}---offline"><code>--offline</code></a></dt>
<dd><p>Disable network access.</p></dd>
</dl>
"""

CONFIG = """# Configuration

## `[cache]`

### dir {{: #cache-dir }}

Where the cache lives.

## `[build]`

### dir {{: #build-dir }}

Where build output goes.
"""

GUIDE = """# Working offline

## Frozen and offline runs

Use `--frozen` with `tool sync` and `tool lock` to keep the lock file: `tool sync --frozen`, then
`tool lock --frozen`, or `--offline`. The cache dir (see `[cache] dir`) holds what a frozen,
offline run needs; frozen runs read the cache dir only; the cache dir is never frozen.
"""


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("cli-book")
    (docs / "commands").mkdir()
    for cmd in ("sync", "lock", "run"):
        page = f"# tool {cmd}\n\nThe {cmd} command.\n\n" + OPTIONS.format(cmd=cmd)
        (docs / "commands" / f"tool-{cmd}.md").write_text(page, encoding="utf-8")
    (docs / "config.md").write_text(CONFIG.format(), encoding="utf-8")
    (docs / "offline.md").write_text(GUIDE, encoding="utf-8")
    out = tmp_path_factory.mktemp("cli-index")
    build_index(BuildOptions(docs_dir=docs, out_dir=out))
    return out


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # repeated option groups, told apart by the ids that name the command
        ("tool lock --frozen", "commands/tool-lock.md#tool-lock/common-options"),
        ("tool run --offline", "commands/tool-run.md#tool-run/common-options"),
        # a bracketed or dotted key: the section whose id is the table and the key
        ("[cache] dir", "config.md#configuration/cache"),
        ("build.dir", "config.md#configuration/build"),
    ],
)
def test_a_name_finds_the_block_that_defines_it(book: Path, query: str, expected: str) -> None:
    engine = SearchEngine.open(book)
    assert engine.search(query, limit=5).hits[0].chunk_id == expected


def test_repeated_option_groups_are_not_collapsed_into_one(book: Path) -> None:
    engine = SearchEngine.open(book)
    ids = {h.chunk_id for h in engine.search("--frozen", limit=10).hits}
    assert {f"commands/tool-{cmd}.md#tool-{cmd}/common-options" for cmd in ("sync", "lock", "run")} <= ids
