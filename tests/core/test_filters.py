"""Taxonomy filters: the WHERE clause, the language/scope auto-include rule, and quoting.

The SQL side is checked against a real LanceDB ``chunks`` table: for every filter set, the rows the
WHERE clause selects must be exactly the rows :func:`matches_filters` accepts, and hostile values
must never widen the selection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.chunking import Chunk
from docs_mcp_core.index.live_files import TABLE_NAME
from docs_mcp_core.index.table import chunks_to_arrow, write_table
from docs_mcp_core.metadata import AutoInclude
from docs_mcp_core.search.filters import matches_filters, where_clause

KEYS = ["scope", "language", "service"]
AUTO = (
    "((`scope` = 'sdk-specific' AND `language` = 'python') OR `scope` = 'global-guide' OR "
    "(`scope` <> 'sdk-specific' AND `scope` <> 'global-guide' AND (`language` = '' OR `language` = 'python')))"
)

# chunk name -> metadata
ROWS: dict[str, dict[str, str]] = {
    "ts": {"scope": "sdk-specific", "language": "typescript", "service": "dub"},
    "py": {"scope": "sdk-specific", "language": "python", "service": "dub"},
    "py-mistral": {"scope": "sdk-specific", "language": "python", "service": "mistral"},
    "go": {"scope": "sdk-specific", "language": "go", "service": "dub"},
    "sdk-no-language": {"scope": "sdk-specific"},
    "guide": {"scope": "global-guide"},
    "guide-mistral": {"scope": "global-guide", "service": "mistral"},
    "guide-ts": {"scope": "global-guide", "language": "typescript"},
    "legacy": {"scope": "legacy"},
    "legacy-py": {"scope": "legacy", "language": "python"},
    "legacy-ts": {"scope": "legacy", "language": "typescript"},
    "unscoped": {},
    "unscoped-py": {"language": "python"},
    "unscoped-go": {"language": "go"},
    "quote": {"scope": "sdk-specific", "language": "it's"},
    "backslash": {"scope": "sdk-specific", "language": "a\\b"},
}


def test_no_filters_no_where() -> None:
    assert where_clause({}, KEYS) is None
    assert where_clause({}) is None


def test_language_without_scope_uses_the_auto_include_clause() -> None:
    assert where_clause({"language": "python"}, KEYS) == AUTO
    assert where_clause({"language": "python"}) == AUTO  # unknown taxonomy: both keys assumed


def test_other_keys_are_anded_after_the_language_rule() -> None:
    assert where_clause({"language": "python", "service": "dub"}, KEYS) == f"{AUTO} AND `service` = 'dub'"


def test_explicit_scope_disables_auto_include() -> None:
    assert where_clause({"language": "python", "scope": "sdk-specific"}, KEYS) == (
        "`language` = 'python' AND `scope` = 'sdk-specific'"
    )
    assert where_clause({"scope": "legacy"}, KEYS) == "`scope` = 'legacy'"


def test_taxonomy_without_scope_filters_language_plainly() -> None:
    assert where_clause({"language": "go"}, ["language"]) == "`language` = 'go'"
    assert matches_filters({"language": ""}, {"language": "go"}, ["language"]) is False


def test_quoting_of_values_and_keys() -> None:
    assert where_clause({"service": "it's"}, KEYS) == "`service` = 'it''s'"
    # LanceDB SQL has no backslash escapes: a backslash stays a plain character
    assert where_clause({"service": "a\\b"}, KEYS) == "`service` = 'a\\b'"
    assert where_clause({"service": "nu\0l"}, KEYS) == "`service` = 'nul'"
    assert where_clause({"we`ird": "x"}, KEYS) == "`we``ird` = 'x'"


@pytest.mark.parametrize(
    ("name", "included"),
    [
        ("py", True),
        ("ts", False),
        ("sdk-no-language", False),
        ("guide", True),
        ("guide-ts", True),  # every global guide, whatever its language
        ("legacy", True),  # language-neutral chunks of other scopes
        ("legacy-py", True),
        ("legacy-ts", False),  # never another language's chunks
        ("unscoped", True),
        ("unscoped-py", True),
        ("unscoped-go", False),
    ],
)
def test_auto_include_rule_in_memory(name: str, included: bool) -> None:
    assert matches_filters(ROWS[name], {"language": "python"}, KEYS) is included


# ── against a real LanceDB table ───────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    import lancedb

    chunks = [
        Chunk(
            chunk_id=f"{name}.md",
            filepath=f"{name}.md",
            heading="",
            heading_level=0,
            content=f"payments {name}",
            content_text=f"payments {name}",
            breadcrumb=f"{name}.md",
            chunk_index=0,
            metadata=meta,
        )
        for name, meta in ROWS.items()
    ]
    db = Path(tmp_path_factory.mktemp("filters")) / ".lancedb"
    rows = write_table(
        db, [chunks_to_arrow(chunks, KEYS, {}, None, None)], metadata_keys=KEYS, vector_dimensions=None
    )
    assert rows == len(ROWS)
    return lancedb.connect(str(db)).open_table(TABLE_NAME)


def _selected(table: Any, filters: dict[str, str], keys: list[str] | None = KEYS) -> set[str]:
    builder = table.search()
    where = where_clause(filters, keys)
    if where:
        builder = builder.where(where)
    ids = builder.select(["chunk_id"]).limit(1000).to_arrow().column("chunk_id").to_pylist()
    return {i.removesuffix(".md") for i in ids}


def _expected(filters: dict[str, str], keys: list[str] | None = KEYS) -> set[str]:
    return {name for name, meta in ROWS.items() if matches_filters(meta, filters, keys)}


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"language": "python"},
        {"language": "typescript"},
        {"language": "ruby"},
        {"scope": "legacy"},
        {"scope": "global-guide"},
        {"language": "python", "scope": "sdk-specific"},
        {"language": "python", "scope": "legacy"},
        {"service": "dub"},
        {"service": "mistral", "language": "python"},
        {"language": "it's"},
        {"language": "a\\b"},
    ],
)
def test_sql_and_python_agree(table: Any, filters: dict[str, str]) -> None:
    got = _selected(table, filters)
    assert got == _expected(filters)
    if filters:
        assert got != set(ROWS)


def test_auto_include_on_the_table(table: Any) -> None:
    assert _selected(table, {"language": "python"}) == {
        "py",
        "py-mistral",
        "guide",
        "guide-mistral",
        "guide-ts",
        "legacy",
        "legacy-py",
        "unscoped",
        "unscoped-py",
    }


def test_quoted_values_match_exactly_their_rows(table: Any) -> None:
    assert _selected(table, {"language": "it's", "scope": "sdk-specific"}) == {"quote"}
    assert _selected(table, {"language": "a\\b", "scope": "sdk-specific"}) == {"backslash"}


@pytest.mark.parametrize(
    "value",
    [
        "x' OR '1'='1",
        "python' OR 'a'='a",
        "x' OR 1=1 --",
        "x\\' OR 1=1 --",
        "x'; DROP TABLE chunks; --",
        "') OR ('1'='1",
        "%",
        "`",
    ],
)
def test_injection_attempts_never_widen_the_selection(table: Any, value: str) -> None:
    # a plain key: nothing has that value
    assert _selected(table, {"service": value}) == set()
    assert _selected(table, {"scope": value}) == set()
    # language: exactly what an unknown language gets (the auto-included neutral chunks)
    assert _selected(table, {"language": value}) == _selected(table, {"language": "ruby"})
    assert _selected(table, {"language": value, "scope": "sdk-specific"}) == set()
    assert table.count_rows() == len(ROWS)  # and nothing was dropped


@pytest.mark.parametrize(
    "filters",
    [
        {"language": "python"},
        {"language": "ruby"},
        {"scope": "legacy"},
        {"language": "python", "scope": "sdk-specific"},
        {"service": "mistral", "language": "python"},
        {"service": "nobody"},
        {"language": "it's"},
    ],
)
def test_vectorised_mask_agrees_with_the_python_rule(table: Any, filters: dict[str, str]) -> None:
    from docs_mcp_core.search.filters import filter_mask
    from docs_mcp_core.search.row_catalog import RowCatalog

    catalog = RowCatalog.load(table, KEYS, "search_prior", "search_dedup", display_columns=["chunk_id"])
    assert catalog.display is not None
    ids = [i.removesuffix(".md") for i in catalog.display.column("chunk_id").to_pylist()]
    mask = filter_mask(filters, KEYS, catalog.equals)
    assert mask is not None
    assert {name for name, keep in zip(ids, mask.tolist(), strict=True) if keep} == _expected(filters)


def test_no_filter_no_mask() -> None:
    from docs_mcp_core.search.filters import filter_mask

    def equals(key: str, value: str) -> Any:
        raise AssertionError("not consulted")

    assert filter_mask({}, KEYS, equals) is None


# ── a declared auto-include rule (a manifest's ``auto_include``) ─────────────────────────────────

# the same rule over other keys and values: 'service' filtered, 'scope' says how
SERVICE_RULE = AutoInclude(key="service", scope_key="scope", specific="sdk-specific", shared="global-guide")


@pytest.mark.parametrize(
    ("rule", "filters", "selected"),
    [
        # service filtered: sdk-specific chunks of that service, every guide, other scopes without a service
        (
            SERVICE_RULE,
            {"service": "mistral"},
            {"py-mistral", "guide", "guide-mistral", "guide-ts", "legacy", "legacy-py", "legacy-ts"}
            | {"unscoped", "unscoped-py", "unscoped-go"},
        ),
        # language is now a plain key
        (SERVICE_RULE, {"language": "python"}, {"py", "py-mistral", "legacy-py", "unscoped-py"}),
        # no rule: every filter is plain equality
        (None, {"language": "python"}, {"py", "py-mistral", "legacy-py", "unscoped-py"}),
        (None, {"language": "python", "service": "mistral"}, {"py-mistral"}),
    ],
)
def test_a_declared_rule_in_sql_in_memory_and_as_a_mask(
    table: Any, rule: AutoInclude | None, filters: dict[str, str], selected: set[str]
) -> None:
    from docs_mcp_core.search.filters import filter_mask
    from docs_mcp_core.search.row_catalog import RowCatalog

    where = where_clause(filters, KEYS, rule)
    assert where is not None
    ids = table.search().where(where).select(["chunk_id"]).limit(1000).to_arrow().column("chunk_id")
    assert {i.removesuffix(".md") for i in ids.to_pylist()} == selected
    assert {name for name, meta in ROWS.items() if matches_filters(meta, filters, KEYS, rule)} == selected
    catalog = RowCatalog.load(table, KEYS, "search_prior", "search_dedup", display_columns=["chunk_id"])
    assert catalog.display is not None
    names = [i.removesuffix(".md") for i in catalog.display.column("chunk_id").to_pylist()]
    mask = filter_mask(filters, KEYS, catalog.equals, rule)
    assert mask is not None
    assert {name for name, keep in zip(names, mask.tolist(), strict=True) if keep} == selected


def _corpus(root: Path, manifest: dict[str, Any]) -> Path:
    docs = root / "docs"
    overrides = []
    for rel, meta in [
        ("sdks/python.md", {"scope": "sdk-specific", "service": "billing"}),
        ("sdks/go.md", {"scope": "sdk-specific", "service": "ledger"}),
        ("guides/intro.md", {"scope": "global-guide"}),
        ("notes/billing.md", {"scope": "notes", "service": "billing"}),
        ("notes/ledger.md", {"scope": "notes", "service": "ledger"}),
    ]:
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n\nRefunds are processed nightly.\n", encoding="utf-8")
        overrides.append({"pattern": rel, "metadata": meta})
    text = json.dumps({"version": "1", "overrides": overrides, **manifest})
    (docs / ".docs-mcp.json").write_text(text, encoding="utf-8")
    return docs


@pytest.mark.parametrize(
    ("manifest", "written", "found"),
    [
        # the original's rule is about 'language', which this taxonomy does not have
        ({}, None, {"sdks/python.md", "notes/billing.md"}),
        (
            {"auto_include": {"key": "service"}},
            {"key": "service", "scope_key": "scope", "specific": "sdk-specific", "shared": "global-guide"},
            {"sdks/python.md", "guides/intro.md", "notes/billing.md"},
        ),
        ({"auto_include": False}, False, {"sdks/python.md", "notes/billing.md"}),
    ],
)
def test_a_manifest_declares_the_rule_and_the_index_applies_it(
    tmp_path: Path, manifest: dict[str, Any], written: Any, found: set[str]
) -> None:
    from docs_mcp_core.build import BuildOptions, build_index
    from docs_mcp_core.search import SearchEngine

    out = tmp_path / "idx"
    build_index(
        BuildOptions(docs_dir=_corpus(tmp_path, manifest), out_dir=out, indexed_at="2026-01-01T00:00:00.000Z")
    )
    document = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert document.get("auto_include") == written
    engine = SearchEngine.open(out)
    try:
        hits = engine.search("refunds processed", limit=20, filters={"service": "billing"}).hits
        assert {h.filepath for h in hits} == found
    finally:
        engine.close()
