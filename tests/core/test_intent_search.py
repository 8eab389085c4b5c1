"""The intent signals end to end: a tiny generated API reference, built and searched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine, SearchOptions

RESOURCE = """# PaymentLinks

## Overview

Payment links let customers pay without a checkout page of your own.

### Available Operations

* [list](#list) - List payment links
* [create](#create) - Create a payment link
* [delete](#delete) - Delete a payment link

## list

List all payment links of the account.

```{lang}
client.payment_links.list()
```

## create

Create a payment link for a product.

```{lang}
client.payment_links.create(product="p_1")
```

## delete

Delete a payment link by its id.

```{lang}
client.payment_links.delete(id="pl_1")
```
"""

MODEL = """# PaymentLink

A payment link of the account.

## Fields

| Field | Type | Description |
| --- | --- | --- |
| `id` | str | The payment link's id |
| `url` | str | Where a customer pays with the payment link |
"""

FILLER = "# {name}\n\nThe {name} object.\n\n## Fields\n\n| Field | Type |\n| --- | --- |\n| `id` | str |\n"


def _manifest(language: str) -> str:
    return json.dumps(
        {"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"language": language}, "taxonomy": {}}
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("intent-docs")
    for language, repo in (("python", "repo"), ("go", "repository")):
        base = root / language
        (base / "docs/sdks/paymentlinks").mkdir(parents=True)
        (base / "docs/models").mkdir(parents=True)
        (base / ".docs-mcp.json").write_text(_manifest(language), encoding="utf-8")
        (base / "docs/sdks/paymentlinks/README.md").write_text(
            RESOURCE.format(lang=language), encoding="utf-8"
        )
        (base / "docs/models/paymentlink.md").write_text(MODEL, encoding="utf-8")
        for n in range(22):
            name = f"Thing{n}"
            (base / f"docs/models/{name.lower()}.md").write_text(FILLER.format(name=name), encoding="utf-8")
        (base / "README.md").write_text(
            f"# SDK\n\n## Source\n\nThe {repo} of this SDK holds its code and issues.\n", encoding="utf-8"
        )
    out = tmp_path_factory.mktemp("intent-index")
    build_index(BuildOptions(docs_dir=root, out_dir=out, indexed_at="2026-01-01T00:00:00.000Z"))
    return out


@pytest.fixture(scope="module")
def engine(index: Path) -> Iterator[SearchEngine]:
    opened = SearchEngine.open(index, options=SearchOptions())
    yield opened
    opened.close()


def test_a_topic_query_finds_the_overview_of_the_page_it_names_even_as_one_compound(
    engine: SearchEngine,
) -> None:
    hits = engine.search("payment links", limit=5, filters={"language": "python"}).hits
    assert hits[0].chunk_id == "python/docs/sdks/paymentlinks/README.md#paymentlinks/overview"


def test_an_action_in_other_words_finds_the_operation_not_the_data_model(engine: SearchEngine) -> None:
    hits = engine.search("remove a payment link", limit=5, filters={"language": "go"}).hits
    assert hits[0].chunk_id == "go/docs/sdks/paymentlinks/README.md#paymentlinks/delete"


def test_a_description_without_a_verb_of_the_table_finds_an_operation_not_the_data_model(
    engine: SearchEngine,
) -> None:
    # no verb of the table, and every word is in the data model's page: only its damping as a
    # description puts the operation first
    hits = engine.search(
        "customers pay through a link of the account", limit=5, filters={"language": "python"}
    ).hits
    assert hits[0].chunk_id == "python/docs/sdks/paymentlinks/README.md#paymentlinks/list"
    assert "python/docs/models/paymentlink.md#_preamble" in [h.chunk_id for h in hits[1:]]


def test_a_short_form_under_a_filter_finds_the_long_form_instead_of_nothing(engine: SearchEngine) -> None:
    hits = engine.search("repo", limit=5, filters={"language": "go"}).hits
    assert [h.chunk_id for h in hits] == ["go/README.md#sdk/source"]


def test_the_original_ranking_expands_no_short_form(index: Path) -> None:
    original = SearchEngine.open(index, options=SearchOptions(ranking="original"))
    try:
        assert original.search("repo", limit=5, filters={"language": "go"}).hits == []
    finally:
        original.close()
