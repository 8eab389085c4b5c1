"""Reading both case formats and rejecting malformed ones with the case index and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_eval.cases import DEFAULT_LIMIT, DEFAULT_MAX_ROUNDS, EvalCase, load_cases, parse_cases
from docs_mcp_eval.errors import CaseFileError
from tests.support.hostile_json import HUGE_NUMBER, TOO_DEEP

HERE = Path(__file__).parent


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_runner_format_with_all_fields() -> None:
    [case] = parse_cases(
        [
            {
                "name": "n",
                "category": "c",
                "query": "q",
                "expectedChunkId": "a.md#b",
                "filters": {"language": "python"},
                "limit": 7,
                "maxRounds": 4,
            }
        ]
    )
    assert case == EvalCase(
        query="q",
        expected_chunk_id="a.md#b",
        filters={"language": "python"},
        limit=7,
        max_rounds=4,
        name="n",
        category="c",
    )


def test_snake_case_suite_format_is_read() -> None:
    [case] = parse_cases(
        [
            {
                "name": "s",
                "query": "q",
                "filters": {},
                "expected_chunk_id": "guides/x.md#y",
                "max_rounds_allowed": 1,
            }
        ]
    )
    assert (case.expected_chunk_id, case.max_rounds, case.limit) == ("guides/x.md#y", 1, DEFAULT_LIMIT)


def test_defaults_and_labels() -> None:
    first, second = parse_cases(
        [{"query": "q", "expectedChunkId": "a"}, {"query": "r", "expectedChunkId": "b", "name": "named"}]
    )
    assert (first.filters, first.limit, first.max_rounds, first.name, first.category) == (
        {},
        DEFAULT_LIMIT,
        DEFAULT_MAX_ROUNDS,
        None,
        None,
    )
    assert first.label(0) == "case-0"
    assert second.label(1) == "named"


def test_fixture_files_load() -> None:
    cases = load_cases(HERE / "cases" / "fake-cases.json")
    assert [c.expected_chunk_id for c in cases][-1] == "guides/retries.md#backoff-strategy"
    assert cases[-1].max_rounds == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"query": "q"}, "expected a JSON array of cases, got an object"),
        ([], "contains no cases"),
        ([{"query": "q", "expectedChunkId": "a"}, "oops"], "case 1: expected an object, got a string"),
        ([{"expectedChunkId": "a"}], "case 0: field 'query' must be a non-empty string (got nothing)"),
        ([{"query": "  ", "expectedChunkId": "a"}], "case 0: field 'query' must be a non-empty string"),
        (
            [{"query": "ok", "expectedChunkId": "a"}, {"name": "second", "query": "q"}],
            "case 1 ('second'): field 'expectedChunkId' must be a non-empty string",
        ),
        (
            [{"query": "q", "expected_chunk_id": 42}],
            "case 0: field 'expected_chunk_id' must be a non-empty string naming the expected chunk id (got 42)",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "expected_chunk_id": "b"}],
            "fields 'expectedChunkId' and 'expected_chunk_id' disagree",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "limit": 0}],
            "field 'limit' must be a positive integer (got 0)",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "limit": "5"}],
            "field 'limit' must be a positive integer (got \"5\")",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "maxRounds": True}],
            "field 'maxRounds' must be a positive integer (got true)",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "max_rounds_allowed": 1.5}],
            "field 'max_rounds_allowed' must be a positive integer",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "filters": ["python"]}],
            "field 'filters' must be an object",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "filters": {"language": 3}}],
            "field 'filters.language' must be a non-empty string (got 3)",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "category": 1}],
            "field 'category' must be a string (got 1)",
        ),
        # a \\ud800 escape (half of a UTF-16 pair): the run ended in a traceback when the query was sent
        (
            [{"query": "q \ud800", "expectedChunkId": "a"}],
            "case 0: field 'query' holds '\\ud800', half of a UTF-16 surrogate pair, which is not a character",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "filters": {"language": "py\udfff"}}],
            "case 0: field 'filters.language' holds '\\udfff', half of",
        ),
        (
            [{"query": "q", "expectedChunkId": "a", "filters": {"l\udc00": "py"}}],
            "case 0: field 'filters' holds",
        ),
        ([{"query": "q", "expectedChunkId": "a\udbff"}], "case 0: field 'expectedChunkId' holds '\\udbff'"),
        ([{"query": "q", "expectedChunkId": "a", "category": "\ud800"}], "case 0: field 'category' holds"),
        ([{"query": "q", "expectedChunkId": "a", "name": "\ud800"}], "field 'name' holds '\\ud800'"),
    ],
)
def test_malformed_cases_name_index_and_field(tmp_path: Path, data: Any, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(CaseFileError) as info:
        load_cases(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text('[\n  {"query": "q",,}\n]', encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"not valid JSON \(line 2, column 17: Expecting property name"):
        load_cases(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaseFileError, match="case file not found"):
        load_cases(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (TOO_DEEP, "it nests arrays or objects too deeply to read"),
        ('[{"query": "q", "maxRounds": ' + HUGE_NUMBER + "}]", "it holds a number too long to read"),
    ],
)
def test_a_case_file_too_deep_or_with_a_huge_number_is_a_case_file_error(
    tmp_path: Path, text: str, reason: str
) -> None:
    # json.loads raised RecursionError / ValueError: docs-mcp-eval ended with a bare traceback
    path = tmp_path / "cases.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseFileError, match=f"^{path}: cannot be read: {reason}"):
        load_cases(path)


def test_a_case_file_too_large_or_not_utf8_is_one_error_naming_it(tmp_path: Path) -> None:
    # --cases /dev/zero was read until memory ran out; bytes that are not UTF-8 were reported as
    # "'utf-8' codec can't decode byte 0xff in position 40", with no line and nothing to do
    huge = tmp_path / "dump.json"
    with huge.open("wb") as handle:
        handle.truncate((64 << 20) + 1)  # sparse: one byte over, as refused as /dev/zero
    with pytest.raises(
        CaseFileError, match=r"^case file .*dump\.json is larger than 64 MiB; is it the right file\?$"
    ):
        load_cases(huge)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[\n  {"query": "caf\xe9", "expectedChunkId": "a.md#b"}\n]\n')
    with pytest.raises(CaseFileError, match=r"is not UTF-8 \(byte 0xe9 on line 2\); re-save it as UTF-8$"):
        load_cases(latin)
