"""Override patterns looked up through their literal prefixes: the same overrides as running every
pattern on every path, without running the patterns that cannot match. Each file was tried against
every override of its manifest: a manifest of 20,000 overrides (as fix writes one for each file
whose headings differ) and 2,000 files took validate 86 s, 500 files 22 s."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from docs_mcp_core.corpus import ManifestResolver, prepare_file
from docs_mcp_core.globs import Glob, PatternIndex, compile_glob, glob_match

_PIECES = [
    "a",
    "b",
    "/",
    "*",
    "**",
    "**/",
    "?",
    "[ab]",
    "[!a]",
    "{a,b}",
    "{",
    "}",
    ",",
    "[",
    "]",
    ".",
    " ",
    "./",
]
_patterns = st.lists(st.lists(st.sampled_from(_PIECES), max_size=6).map("".join), max_size=8)
_paths = st.lists(st.sampled_from(["a", "b", "/", ".", "ab", "{", "[", ","]), max_size=8).map("".join)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_patterns, _paths)
def test_the_index_finds_what_every_pattern_run_finds(patterns: list[str], path: str) -> None:
    expected = [i for i, pattern in enumerate(patterns) if glob_match(pattern, path)]
    assert PatternIndex(patterns).matching(path) == expected


def test_a_file_runs_only_the_overrides_that_can_match_it(tmp_path: Path) -> None:
    overrides = [f'{{"pattern": "topic{i}/**/*.md", "strategy": {{"chunk_by": "h3"}}}}' for i in range(2_000)]
    overrides.append('{"pattern": "**/special.md", "strategy": {"chunk_by": "file"}}')
    manifest = '{"version": "1", "strategy": {"chunk_by": "h2"}, "overrides": [' + ",".join(overrides) + "]}"
    (tmp_path / ".docs-mcp.json").write_text(manifest, encoding="utf-8")
    for i in range(0, 2_000, 40):
        (tmp_path / f"topic{i}" / "deep").mkdir(parents=True)
        (tmp_path / f"topic{i}" / "deep" / "page.md").write_text("# P\n\n### Q\n\nx\n", encoding="utf-8")
    (tmp_path / "topic7" / "deep").mkdir(parents=True)
    (tmp_path / "topic7" / "deep" / "special.md").write_text("# S\n\nx\n", encoding="utf-8")
    resolver = ManifestResolver(tmp_path)
    before = compile_glob.cache_info()
    chosen = {
        rel: prepare_file(tmp_path, rel, resolver).config.strategy.chunk_by
        for rel in [*(f"topic{i}/deep/page.md" for i in range(0, 2_000, 40)), "topic7/deep/special.md"]
    }
    after = compile_glob.cache_info()
    assert set(chosen.values()) == {"h3", "file"} and chosen["topic7/deep/special.md"] == "file"
    runs = (after.hits + after.misses) - (before.hits + before.misses)
    assert runs <= 51 * 12  # 2,001 each before: every pattern ran on every file


def test_a_pattern_without_wildcards_is_matched_without_an_automaton() -> None:
    # fix writes an override of the file's exact path for every drifting file; each such pattern
    # was compiled to an automaton of 10-20 KB, and 20,000 of them held 190 MB for the whole command
    patterns = [f"docs/models/operations/page{i}.md" for i in range(2_000)]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        globs = [Glob(pattern) for pattern in patterns]
        assert [g.match(f"docs/models/operations/page{i}.md") for i, g in enumerate(globs)] == [True] * 2_000
        held = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert held < 2_000 * 1_000
    assert not Glob("a/b.md").match("a/b.mdx") and not Glob("a/b.md").match("a/b.m")
    assert Glob("a},b].md").match("a},b].md")  # a closing brace or bracket alone is a plain character


def test_the_compiled_patterns_of_a_process_are_bounded() -> None:
    for i in range(5_000):
        glob_match(f"topic{i}/**/*.md", f"topic{i}/a/b.md")
    info = compile_glob.cache_info()
    assert info.maxsize is not None and info.currsize <= info.maxsize <= 5_000
