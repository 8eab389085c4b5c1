"""Inverse operations: undoing a state the docs name with ``un`` (snooze and unsnooze)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from docs_mcp_core.index.derived_files import Part
from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.compounds import Join
from docs_mcp_core.search.intent import (
    UNDO_GROUP,
    VERB_GROUPS,
    IntentIndex,
    heading_verbs,
    query_verbs,
)
from docs_mcp_core.search.inverses import inverse_joins
from docs_mcp_core.search.lexical_index import LexicalIndex
from tests.support.tiny_corpus import build_pages, language_manifest, opened


def bit(word: str) -> int:
    return next(1 << i for i, group in enumerate(VERB_GROUPS) if word in group)


def test_an_operation_named_un_plus_a_verb_undoes_it() -> None:
    for name in ("unsnooze", "unarchiveWorkflow", "unschedule_workflow", "unsubscribe"):
        assert heading_verbs(name) == UNDO_GROUP, name
    for name in ("snooze", "archiveWorkflow", "unique", "unknownField", "until", "un", "Unsnooze a message"):
        assert not heading_verbs(name) & UNDO_GROUP, name


def test_undo_words_name_the_undo_group() -> None:
    assert query_verbs(["bring", "a", "snoozed", "item", "back"]) == UNDO_GROUP
    assert query_verbs(["restore", "an", "archived", "model"]) == UNDO_GROUP
    assert query_verbs(["archive", "a", "model"]) == 0


def test_removing_a_state_an_operation_undoes_wants_the_undo_group_too() -> None:
    intent = _intent(["snooze", "unsnooze", "delete", "Overview"])
    assert intent.undone == frozenset({"snooz"})
    remove = query_verbs(["remove", "the", "snooze"])
    assert intent.wanted(remove, ["remove", "the", "snooze"]) == bit("delete") | UNDO_GROUP
    # a state no operation undoes: the delete group alone
    assert intent.wanted(remove, ["remove", "the", "message"]) == bit("delete")


def test_the_words_undone_are_stored_with_the_intent_attributes() -> None:
    intent = _intent(["snooze", "unsnooze", "unarchive"])
    stored = intent.to_part()
    assert IntentIndex.current(stored)
    assert IntentIndex.from_part(stored).undone == intent.undone == frozenset({"snooz", "archiv"})
    # a part written before operations that undo were derived is derived again
    assert not IntentIndex.current(Part(stored.arrays, {}))


def _intent(headings: list[str]) -> IntentIndex:
    size = len(headings)
    return IntentIndex.build(
        headings,
        [f"ops.md > {h}" for h in headings],
        ["ops.md"] * size,
        np.zeros(size, dtype=np.int32),
        np.zeros(size, dtype=bool),
    )


TEXTS = ["unsnooze", "snooze", "unarchive", "archive", "a message"]


def test_an_undoing_query_also_searches_the_un_form_of_its_words() -> None:
    fields = LexicalIndex.build({"search_heading": pa.array(TEXTS)}).fields
    joins = inverse_joins(["bring", "a", "snoozed", "message", "back"], fields, None)
    assert joins == [Join("unsnooz", ("snooz",))]
    # the stemmer cuts "unarchive" shorter than "un" + "archived": the stem's own un form is found
    assert [j.term for j in inverse_joins(["restore", "archived"], fields, None)] == ["unarch"]


def test_no_un_form_without_an_undoing_action_or_an_admitted_row() -> None:
    fields = LexicalIndex.build({"search_heading": pa.array(TEXTS)}).fields
    assert inverse_joins(["show", "snoozed", "messages"], fields, None) == []
    only_snooze = np.array([False, True, False, False, True])
    assert inverse_joins(["bring", "snoozed", "back"], fields, only_snooze) == []


# ── end to end: a tiny corpus built with the real builder ─────────────────────────────────────

NOTIFICATIONS = """# Notifications

## snooze

Hide a notification until a given time.

## unsnooze

Show a notification in the inbox at once.

## delete

Delete a notification.
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = {}
    for language in ("python", "go"):
        pages[f"{language}/.docs-mcp.json"] = language_manifest(language)
        pages[f"{language}/notifications.md"] = NOTIFICATIONS
    return build_pages(tmp_path_factory, "inverse", pages)


@pytest.fixture(scope="module")
def engine(index: Path) -> Iterator[SearchEngine]:
    with opened(index) as engine:
        yield engine


def first(engine: SearchEngine, query: str) -> str:
    return engine.search(query, limit=3, filters={"language": "go"}).hits[0].chunk_id


def test_bringing_a_state_back_finds_the_operation_that_undoes_it(engine: SearchEngine) -> None:
    assert first(engine, "bring a snoozed notification back") == "go/notifications.md#notifications/unsnooze"
    assert (
        first(engine, "remove the snooze of a notification") == "go/notifications.md#notifications/unsnooze"
    )


def test_setting_the_state_or_deleting_still_finds_its_own_operation(engine: SearchEngine) -> None:
    assert first(engine, "snooze a notification") == "go/notifications.md#notifications/snooze"
    assert first(engine, "delete a notification") == "go/notifications.md#notifications/delete"
