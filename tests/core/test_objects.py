"""The object of a query's action names the resource whose operation is wanted, end to end."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.objects import object_factors, object_names
from tests.support.tiny_corpus import build_pages, opened, ranking_weights

# Two resources with an operation of the same name; the second's page (a folder named after the
# question's other noun, a title holding the first's name) says every word too, and wins on words.
PAGES = {
    "sdks/libraries/README.md": "# Beta.Libraries\n\n## delete\n\nDelete a library and its documents.\n",
    "sdks/documents/README.md": (
        "# Beta.Libraries.Documents\n\n## delete\n\nDelete a document from a library.\n\n"
        "## Usage\n\nThe documents of a library.\n"
    ),
    "sdks/translationsmaster/README.md": "# Translations.Master\n\n## retrieve\n\nGet the master file.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "objects", PAGES)) as engine:
        yield engine


def test_the_resource_the_action_acts_on_outranks_the_one_the_question_also_names(
    engine: SearchEngine,
) -> None:
    query = "delete an entire library together with all of its documents"
    assert engine.search(query, limit=2).hits[0].chunk_id == "sdks/libraries/README.md#betalibraries/delete"
    with ranking_weights(engine, object=0.0):  # without the signal the page that says every word wins
        first = engine.search(query, limit=2).hits[0].chunk_id
    assert first == "sdks/documents/README.md#betalibrariesdocuments/delete"


@pytest.mark.parametrize(
    ("query", "names"),
    [
        # determiners and quantifiers skipped, the phrase ends at a preposition or a conjunction
        ("delete an entire library together with all of its documents", [["librari"]]),
        ("bulk delete links by their ids", [["link"]]),  # the verb words after the first are skipped
        # the runs that end at the head noun first, then every run
        (
            "create a brand new short link (a plain create)",
            [["link", "shortlink"], ["brand", "link", "short", "shortlink"]],
        ),
        (
            "get rid of a link collection but keep the links",
            [["collect", "linkcollect"], ["collect", "link", "linkcollect"]],
        ),
        ("see every file I've uploaded", [["file"]]),
        ("get all entries of a conversation", [["convers"], ["convers", "entri"]]),  # ``of`` continues it
        ("stop logging each incoming request", []),  # a gerund is an action, not a thing
        ("pay less when many requests repeat a prompt", []),  # a quantifier is not the action
        ("why is my hook never called", []),  # no action
    ],
)
def test_the_object_is_the_noun_phrase_after_the_first_action(query: str, names: list[list[str]]) -> None:
    assert object_names(query) == names


def object_factors_of(engine: SearchEngine, chunks: Sequence[str]) -> Callable[[str], list[float]]:
    """The object signal's factors (weight 0.3) of the rows of ``chunks``, for a query."""
    reader = engine._rows  # pyright: ignore[reportPrivateUsage]
    every = np.arange(len(engine._catalog.row_ids))  # pyright: ignore[reportPrivateUsage]
    (ids,) = engine._loop.run(reader.values(every, ("chunk_id",)))  # pyright: ignore[reportPrivateUsage]
    rows = np.array([ids.index(c) for c in chunks])

    def factors(query: str) -> list[float]:
        found = engine._loop.run(object_factors(reader, rows, object_names(query), 0.3))  # pyright: ignore[reportPrivateUsage]
        return [round(f, 3) for f in found]

    return factors


def test_operations_of_pages_the_object_names_are_raised_and_prose_is_not(engine: SearchEngine) -> None:
    factors = object_factors_of(
        engine,
        (
            "sdks/libraries/README.md#betalibraries/delete",
            "sdks/documents/README.md#betalibrariesdocuments/delete",
            "sdks/documents/README.md#betalibrariesdocuments/usage",
            "sdks/translationsmaster/README.md#translationsmaster/retrieve",
        ),
    )
    assert factors("delete a library") == [1.3, 1.0, 1.0, 1.0]
    # a prose section (``Usage``) is no operation, whatever its page
    assert factors("delete the documents") == [1.0, 1.3, 1.0, 1.0]
    # a compound page name starts with the object (``translations`` → ``translationsmaster``)
    assert factors("get the translations of one locale") == [1.0, 1.0, 1.0, 1.3]
    assert factors("library") == [1.0, 1.0, 1.0, 1.0]  # no action, no object
    # the head noun's page first (``library documents`` are documents), the other words' when it names none
    assert factors("delete the library documents") == [1.0, 1.3, 1.0, 1.0]
    assert factors("delete the library quickly") == [1.3, 1.0, 1.0, 1.0]


# Generated references name a resource by a compound whose last word is the reader's
COMPOUND_PAGES = {
    "sdks/timeshift/README.md": "# Timeshift\n\n## createHrisTimeshift\n\nCreate a timeshift.\n",
    "sdks/employee/README.md": "# Employee\n\n## createHrisEmployee\n\nCreate an employee and a shift.\n",
    "sdks/payslip/README.md": "# Payslip\n\n## createHrisPayslip\n\nCreate a payslip.\n",
}


def test_a_compound_page_name_that_ends_with_the_object_names_its_page(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with opened(build_pages(tmp_path_factory, "compound-objects", COMPOUND_PAGES)) as engine:
        factors = object_factors_of(
            engine,
            (
                "sdks/timeshift/README.md#timeshift/createhristimeshift",
                "sdks/employee/README.md#employee/createhrisemployee",
                "sdks/payslip/README.md#payslip/createhrispayslip",
            ),
        )
        assert factors("create a shift for an employee") == [1.3, 1.0, 1.0]  # ``time`` + ``shift``
        assert factors("create an employee shift") == [1.3, 1.0, 1.0]  # the head noun first
        assert factors("create an employee") == [1.0, 1.3, 1.0]  # a page named by it comes first
        assert factors("create a slip") == [1.0, 1.0, 1.0]  # ``pay`` + ``slip``: parts of under four letters
