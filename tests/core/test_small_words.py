"""Small words in names: ``csv to json`` finds the section named that way round and ``sign in`` the
one named ``Signing in``, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.small_words import name_words, readings, small_word_factors
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
    "account.md": (
        "# Account\n\n## Signing up\n\nCreate an account with your email address and a password. You "
        "receive an email with a link that activates the account.\n\n## Signing in\n\nUse your email "
        "address and password to start a session. The session lasts for 30 days.\n\n## Signing out\n\n"
        "End the session on this device. Other devices keep their sessions.\n\n## Logging in to a registry"
        "\n\nStore the registry's credentials with `conv login URL`, kept in the system keyring.\n\n"
        "## Logging out of a registry\n\nRemove the registry's credentials with `conv logout URL`; the "
        "keyring entry is deleted.\n"
    ),
    "formats.md": (
        "# Data formats\n\nconv reads JSON, CSV and YAML. JSON files must be UTF-8. CSV files may use "
        "any delimiter with `--delimiter`. Converting CSV or JSON keeps the order of records.\n"
    ),
}
CSV_TO_JSON = "converting.md#converting-files/csv-to-json"
JSON_TO_CSV = "converting.md#converting-files/json-to-csv"
SIGN_IN, SIGN_UP, SIGN_OUT = (f"account.md#account/signing-{p}" for p in ("in", "up", "out"))
LOG_IN = "account.md#account/logging-in-to-a-registry"
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
        ("sign in", SIGN_IN),
        ("how do I sign up", SIGN_UP),
        ("sign out of every session", SIGN_OUT),
        ("log in to a registry", LOG_IN),
    ],
)
def test_the_section_named_with_the_querys_small_words_ranks_first(
    engine: SearchEngine, query: str, wanted: str
) -> None:
    assert _first(engine, query) == wanted


def test_without_the_signal_the_words_alone_rank_the_other_direction_first(engine: SearchEngine) -> None:
    with ranking_weights(engine, small_words=0.0):
        assert _first(engine, "csv to json") == JSON_TO_CSV
        assert _first(engine, "sign in") != SIGN_IN


def _shape(query: str) -> list[tuple[list[str], list[str], list[str]]]:
    return [(sorted(r.first), sorted(r.joiners), sorted(r.last or r.others)) for r in readings(query.split())]


def test_readings_of_direction_words_and_particles() -> None:
    assert _shape("csv to json") == [(["csv"], ["into", "to"], ["json"])]
    # determiners are skipped, words are stemmed, two words before may be the source
    assert _shape("turn a CSV files into the JSON") == [(["csv", "file"], ["into", "to"], ["json"])]
    assert _shape("from v1 to v2") == [(["v1"], ["into", "to"], ["v2"])]
    assert _shape("to json") == [] and _shape("csv to") == [] and _shape("list links") == []
    # a particle: the word before it, written with that particle and not another
    assert _shape("signing in") == [(["sign"], ["in"], ["back", "down", "off", "on", "out", "up"])]
    assert _shape("in python") == []  # nothing before the particle


def test_name_words_are_the_stemmed_file_name_and_anchors() -> None:
    assert name_words("guides/data/convert.md#signing-in/csv-files-to-json") == (
        "convert",
        "sign",
        "in",
        "csv",
        "file",
        "to",
        "json",
    )


def test_rows_change_only_where_some_name_says_it_the_other_way() -> None:
    found = readings(["csv", "to", "json"])
    ids = [JSON_TO_CSV, CSV_TO_JSON, "formats.md#_preamble"]
    assert small_word_factors(ids, found, 0.25).tolist() == [0.8, 1.25, 1.0]
    # only the query's way is named: nothing to choose between, nothing moves
    assert small_word_factors([CSV_TO_JSON, "formats.md#_preamble"], found, 0.25).tolist() == [1.0, 1.0]
    # a name that writes both ways keeps its score
    both = "convert.md#csv-to-json-and-json-to-csv"
    assert small_word_factors([both, JSON_TO_CSV], found, 0.25).tolist() == [1.0, 0.8]
    signing = readings(["sign", "in"])
    assert small_word_factors([SIGN_UP, SIGN_IN, SIGN_OUT], signing, 0.25).tolist() == [0.8, 1.25, 0.8]
