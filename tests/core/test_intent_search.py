"""The intent signals end to end: a tiny generated API reference, built and searched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_core.search import SearchEngine
from tests.support.tiny_corpus import build_pages, language_manifest, opened

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

ONE_OPERATION = """# QRCodes

## Overview

### Available Operations

* [get](#get) - Retrieve a QR code

## get

Retrieve a QR code for a short link.

```{lang}
client.qr_codes.get(url="https://example.com")
```
"""

GUIDE = """# Webhooks

Webhooks tell your server when a payment link is paid; see [signing](#signing) first.

## Signing

Every webhook carries a signature header.
"""

FILLER = "# {name}\n\nThe {name} object.\n\n## Fields\n\n| Field | Type |\n| --- | --- |\n| `id` | str |\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages: dict[str, str] = {}
    for language, repo in (("python", "repo"), ("go", "repository")):
        pages[f"{language}/.docs-mcp.json"] = language_manifest(language)
        pages[f"{language}/docs/sdks/paymentlinks/README.md"] = RESOURCE.format(lang=language)
        pages[f"{language}/docs/models/paymentlink.md"] = MODEL
        pages[f"{language}/docs/sdks/qrcodes/README.md"] = ONE_OPERATION.format(lang=language)
        pages[f"{language}/docs/guides/webhooks.md"] = GUIDE
        for n in range(22):
            name = f"Thing{n}"
            pages[f"{language}/docs/models/{name.lower()}.md"] = FILLER.format(name=name)
        pages[f"{language}/README.md"] = (
            f"# SDK\n\n## Source\n\nThe {repo} of this SDK holds its code and issues.\n"
        )
    # a guide of no language about the same topic as the references' resource pages
    pages["docs/guides/concepts/selling/paymentlinks.md"] = (
        "# Paying\n\nHow customers pay, in any language.\n"
    )
    return build_pages(tmp_path_factory, "intent", pages)


@pytest.fixture(scope="module")
def engine(index: Path) -> Iterator[SearchEngine]:
    with opened(index) as engine:
        yield engine


def test_a_topic_query_finds_the_overview_of_the_page_it_names_even_as_one_compound(
    engine: SearchEngine,
) -> None:
    hits = engine.search("payment links", limit=5, filters={"language": "python"}).hits
    assert hits[0].chunk_id == "python/docs/sdks/paymentlinks/README.md#paymentlinks/overview"


@pytest.mark.parametrize(
    "query",
    [
        "Python: payment links",
        "payment links in Python",
        "py payment links",
        "payment links in the Python SDK",
    ],
)
def test_a_topic_query_that_names_its_filter_is_still_a_topic(engine: SearchEngine, query: str) -> None:
    # a filtered key gives no cue, so its value (or an alias of it) read as a word of the topic;
    # "SDK" qualifies the language, it names no page
    hits = engine.search(query, limit=5, filters={"language": "python"}).hits
    assert hits[0].chunk_id == "python/docs/sdks/paymentlinks/README.md#paymentlinks/overview"


@pytest.mark.parametrize(
    "query",
    ["payment links docs", "about payment links", "the payment links page", "how do payment links work"],
)
def test_a_topic_asked_for_its_page_in_other_words_is_still_that_topic(
    engine: SearchEngine, query: str
) -> None:
    # "docs", "about", "page" say what kind of answer is wanted, not which page
    hits = engine.search(query, limit=5, filters={"language": "python"}).hits
    assert hits[0].chunk_id == "python/docs/sdks/paymentlinks/README.md#paymentlinks/overview"


def test_a_topic_without_a_language_finds_the_page_of_no_language(engine: SearchEngine) -> None:
    hits = engine.search("payment links", limit=5).hits
    assert hits[0].chunk_id == "docs/guides/concepts/selling/paymentlinks.md#_preamble"


def test_a_topic_whose_overview_lists_one_operation_finds_that_operation(engine: SearchEngine) -> None:
    hits = engine.search("QR codes", limit=5, filters={"language": "go"}).hits
    assert hits[0].chunk_id == "go/docs/sdks/qrcodes/README.md#qrcodes/get"


def test_a_link_in_a_guides_opening_sentence_leaves_the_opening_its_introduction(
    engine: SearchEngine,
) -> None:
    hits = engine.search("webhooks", limit=5, filters={"language": "go"}).hits
    assert hits[0].chunk_id == "go/docs/guides/webhooks.md#_preamble"


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
    with opened(index, ranking="original") as original:
        assert original.search("repo", limit=5, filters={"language": "go"}).hits == []
