"""A query that says ``csv to json`` finds the section named that way round, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.direction import direction_factors, direction_pairs, name_words
from tests.support.tiny_corpus import build_pages, opened, ranking_weights

# Each direction documented once, under sections whose words are the same.
PAGES = {
    "converting.md": (
        "# Converting files\n\nThe `conv` tool converts between data formats.\n\n"
        "## JSON to CSV\n\nTurn a JSON array of objects into a CSV file. Each key becomes a column, "
        "and nested objects are flattened with dots.\n\n```bash\nconv json-csv input.json > output.csv\n```\n\n"
        "## CSV to JSON\n\nTurn a CSV file into a JSON array of objects. The header row gives the keys, "
        "and every other row becomes an object.\n\n```bash\nconv csv-json input.csv > output.json\n```\n\n"
        "## YAML to JSON\n\nTurn YAML documents into JSON.\n"
    ),
    "migrate.md": (
        "# Migrating between versions\n\n## Upgrading from v1 to v2\n\nVersion 2 renames the `--out` "
        "flag to `--output` and drops Python 3.8. Run `conv migrate` to rewrite your config file for "
        "the new version.\n\n## Downgrading from v2 to v1\n\nIf you must go back, restore the config "
        "file from the backup that `conv migrate` wrote and reinstall version 1. The `--output` flag "
        "becomes `--out` again.\n"
    ),
    "formats.md": (
        "# Data formats\n\nconv reads JSON, CSV and YAML. JSON files must be UTF-8. CSV files may use "
        "any delimiter with `--delimiter`. Converting CSV or JSON keeps the order of records.\n"
    ),
}
CSV_TO_JSON = "converting.md#converting-files/csv-to-json"
JSON_TO_CSV = "converting.md#converting-files/json-to-csv"
UPGRADE = "migrate.md#migrating-between-versions/upgrading-from-v1-to-v2"
DOWNGRADE = "migrate.md#migrating-between-versions/downgrading-from-v2-to-v1"


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "direction", PAGES)) as engine:
        yield engine


def _first(engine: SearchEngine, query: str) -> str:
    return engine.search(query, limit=3).hits[0].chunk_id


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("csv to json", CSV_TO_JSON),
        ("json to csv", JSON_TO_CSV),
        ("turn a csv file into json", CSV_TO_JSON),
        ("convert my json files to csv", JSON_TO_CSV),
        ("upgrade from v1 to v2", UPGRADE),
        ("go from v2 to v1", DOWNGRADE),
    ],
)
def test_the_section_named_in_the_querys_direction_ranks_first(
    engine: SearchEngine, query: str, wanted: str
) -> None:
    assert _first(engine, query) == wanted


def test_without_the_signal_the_words_alone_rank_the_other_direction_first(engine: SearchEngine) -> None:
    with ranking_weights(engine, direction=0.0):
        assert _first(engine, "csv to json") == JSON_TO_CSV


def test_direction_pairs_read_the_words_around_to_and_into() -> None:
    assert direction_pairs(["csv", "to", "json"]) == [(frozenset({"csv"}), "json")]
    # determiners are skipped, plurals are one word, two words before may be the source
    assert direction_pairs(["turn", "a", "CSV", "files", "into", "the", "JSON"]) == [
        (frozenset({"csv", "file"}), "json")
    ]
    assert direction_pairs(["from", "v1", "to", "v2"]) == [(frozenset({"v1"}), "v2")]
    assert direction_pairs(["to", "json"]) == []  # no source
    assert direction_pairs(["csv", "to"]) == []  # no target
    assert direction_pairs(["list", "links"]) == []


def test_name_words_are_the_file_name_and_anchors() -> None:
    assert name_words("guides/data/convert.md#files/csv-to-json") == ["convert", "file", "csv", "to", "json"]


def test_rows_change_only_where_some_name_states_the_opposite_direction() -> None:
    pairs = direction_pairs(["csv", "to", "json"])
    ids = [JSON_TO_CSV, CSV_TO_JSON, "formats.md#_preamble"]
    assert direction_factors(ids, pairs, 0.25).tolist() == [0.8, 1.25, 1.0]
    # only the query's direction is named: nothing to choose between, nothing moves
    assert direction_factors([CSV_TO_JSON, "formats.md#_preamble"], pairs, 0.25).tolist() == [1.0, 1.0]
    # a name that writes both directions keeps its score
    both = "convert.md#csv-to-json-and-json-to-csv"
    assert direction_factors([both, JSON_TO_CSV], pairs, 0.25).tolist() == [1.0, 0.8]
