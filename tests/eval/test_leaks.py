"""The filter-leak check and its auto-include rule."""

from __future__ import annotations

import pytest

from docs_mcp_eval.leaks import hit_violates_filters

TS_SDK = {"language": "typescript", "scope": "sdk-specific"}
PY_SDK = {"language": "python", "scope": "sdk-specific"}
GUIDE = {"language": "", "scope": "global-guide"}
GUIDE_PY = {"language": "python", "scope": "global-guide"}
LEGACY = {"language": "", "scope": ""}
LEGACY_PY = {"language": "python", "scope": ""}
LEGACY_TS = {"language": "typescript", "scope": "other"}


@pytest.mark.parametrize(
    ("metadata", "leaks"),
    [
        (TS_SDK, False),
        (PY_SDK, True),
        (GUIDE, False),
        (GUIDE_PY, False),  # global guides are always included
        (LEGACY, False),  # neither scope, no language
        (LEGACY_TS, False),  # neither scope, same language
        (LEGACY_PY, True),  # neither scope, other language
        ({}, False),  # missing keys count as ""
    ],
)
def test_language_filter_auto_includes(metadata: dict[str, str], leaks: bool) -> None:
    assert hit_violates_filters(metadata, {"language": "typescript"}) is leaks


def test_explicit_scope_turns_auto_include_off() -> None:
    filters = {"language": "typescript", "scope": "sdk-specific"}
    assert not hit_violates_filters(TS_SDK, filters)
    assert hit_violates_filters(GUIDE, filters)
    assert hit_violates_filters(LEGACY, filters)
    assert hit_violates_filters({"language": "typescript", "scope": "global-guide"}, filters)


def test_other_keys_match_exactly() -> None:
    filters = {"service": "dub"}
    assert not hit_violates_filters({"service": "dub"}, filters)
    assert hit_violates_filters({"service": "mistral"}, filters)
    assert hit_violates_filters({}, filters)
    assert hit_violates_filters(None, filters)
    assert not hit_violates_filters({"service": "x"}, {})


def test_scope_only_filter() -> None:
    assert not hit_violates_filters(GUIDE, {"scope": "global-guide"})
    assert hit_violates_filters(TS_SDK, {"scope": "global-guide"})


def test_language_with_other_key() -> None:
    filters = {"language": "python", "service": "dub"}
    assert not hit_violates_filters({**PY_SDK, "service": "dub"}, filters)
    assert not hit_violates_filters({**GUIDE, "service": "dub"}, filters)
    assert hit_violates_filters({**GUIDE, "service": "mistral"}, filters)
