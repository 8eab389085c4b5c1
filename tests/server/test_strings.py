"""Resource titles: change-case style sentence casing, acronym restoration, clean root titles."""

from __future__ import annotations

import pytest

from docs_mcp_server.strings import file_title, proper_case, sentence_case, split_words


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("rate-limiting", ["rate", "limiting"]),
        ("camelCaseWord", ["camel", "Case", "Word"]),
        ("XMLHttpRequest", ["XML", "Http", "Request"]),
        ("v2Api", ["v2", "Api"]),
        ("__init__", ["init"]),
        (".", []),
        ("", []),
        ("éclair-über", ["éclair", "über"]),
    ],
)
def test_split_words_follows_change_case(value: str, words: list[str]) -> None:
    assert split_words(value) == words


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("rate-limiting", "Rate limiting"),
        ("getting_started", "Getting started"),
        ("TypeScript", "Type script"),
        ("README", "Readme"),
        (".", ""),
    ],
)
def test_sentence_case(value: str, expected: str) -> None:
    assert sentence_case(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("typescript", "TypeScript"),
        ("Api", "API"),
        ("Typescript guide", "TypeScript guide"),
        ("Json-rpc over http", "JSON-rpc over HTTP"),
        ("Openapi", "OpenAPI"),
        ("Plain words", "Plain words"),
        ("single", "single"),
    ],
)
def test_proper_case_restores_known_spellings(value: str, expected: str) -> None:
    assert proper_case(value) == expected


def test_file_title_joins_directories_and_file_title() -> None:
    assert file_title("guides/ts.md", "TypeScript Guide") == "Guides / TypeScript Guide"
    assert file_title("guides/rate-limiting.md") == "Guides / Rate limiting"
    assert file_title("sdks/typescript/docs/sdks/api-keys/README.md") == (
        "Sdks / TypeScript / Docs / Sdks / API keys / Readme"
    )


def test_root_file_title_has_no_leading_separator() -> None:
    # The original produced " / Errors" for a root-level file; we drop the empty directory part.
    assert file_title("errors.md") == "Errors"
    assert file_title("errors.md", "  Error handling  ") == "Error handling"
