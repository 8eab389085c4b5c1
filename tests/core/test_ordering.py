"""The project's string order is the original's: JavaScript's ``localeCompare`` (ICU's root
collation), not code points. The expected lists are Node's order of the same strings
(``tests/compat/test_ordering_node.py`` compares with Node itself on random strings)."""

from __future__ import annotations

import random

from docs_mcp_core.ordering import sort_key, sorted_strings

# Node 20 (ICU 78): [...].sort((a, b) => a.localeCompare(b))
NODE_ORDER = [
    "commandline/container_ls.md#_preamble",
    "commandline/container-ls.md#_preamble",
    "commandline/container.MD",
    "commandline/Container.md",
    "commandline/container.md#_preamble",
    "commandline/container/ls.md",
    "commandline/container#ls",
    "commandline/container1.md",
    "eclair",
    "Eclair",
    "éclair",
    "guide/a b.md",
    "guide/a,b.md",
    "guide/a(b).md",
    "guide/a@b.md",
    "guide/a+b.md",
    "guide/a~b.md",
    "guide/a$b.md",
    "zeta",
    "Zeta",
]


def test_paths_and_chunk_ids_sort_as_the_original_sorts_them() -> None:
    shuffled = NODE_ORDER[:]
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert sorted_strings(shuffled) == NODE_ORDER


def test_an_underscore_sorts_before_a_dot_and_a_hyphen_unlike_code_points() -> None:
    """``container_ls.md`` and ``container.md``: the pair that code-point order puts the other way."""
    assert sort_key("container_ls.md") < sort_key("container-ls.md") < sort_key("container.md")
    assert sorted(["container.md", "container_ls.md"]) == ["container.md", "container_ls.md"]


def test_strings_equal_but_for_case_or_accents_still_have_one_order() -> None:
    values = ["Eclair", "éclair", "eclair", "ECLAIR", "Éclair"]
    assert sorted_strings(values) == sorted_strings(reversed(values))
    assert sorted_strings(values)[0] == "eclair"
