"""``docs-mcp search`` and ``docs-mcp get`` against an index built by ``docs-mcp build``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docs_mcp_cli.app import app
from docs_mcp_core.search import SearchEngine
from tests.support.programs import cli_env, docs_mcp_command, permissions_enforced, run_docs_mcp

pytestmark = pytest.mark.integration  # starts processes or listens on ports

runner = CliRunner(env={"COLUMNS": "400"})
DELIMITER = re.compile(
    r"^--- Chunk: (\S.*) \(Chunk (\d+) of (\d+)\) \((Target|Context: [+-]\d+)\) ---$", re.M
)


def usage_error(err: str) -> str:
    """The message of a usage error as typer prints it (in a box, after the usage line)."""
    lines = [line.strip().strip("│").strip() for line in err.splitlines() if line.startswith("│")]
    assert err.startswith("Usage: "), err
    return " ".join(lines)


def _invoke(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_search_prints_hits_as_a_child_process(cli_index: Path) -> None:
    done = run_docs_mcp(
        "search", "--index-dir", cli_index, "retry configuration", "--filter", "language=python"
    )
    assert done.returncode == 0, done.stderr
    ids = re.findall(r"^\s*\d+\. (\S+)$", done.stdout, re.M)
    assert len(ids) == 10
    assert "sdks/python/README.md#tidewater/retries" in ids[:3]
    assert not [i for i in ids if i.startswith(("sdks/go/", "sdks/typescript/"))]
    assert "more: --cursor " in done.stdout
    assert "score " in done.stdout and "language=python" in done.stdout


def test_json_output_is_exactly_the_search_result(cli_index: Path) -> None:
    engine = SearchEngine.open(cli_index)
    code, out, err = _invoke(
        "search", "--index-dir", cli_index, "webhook signature", "--limit", "4", "--json"
    )
    assert code == 0, err
    expected = engine.search("webhook signature", limit=4).to_dict()
    assert json.loads(out) == expected
    # the cursor it printed leads to the engine's second page
    code, out, err = _invoke(
        "search",
        "--index-dir",
        cli_index,
        "webhook signature",
        "--limit",
        "4",
        "--json",
        "--cursor",
        expected["next_cursor"],
    )
    assert code == 0, err
    assert (
        json.loads(out)
        == engine.search("webhook signature", limit=4, cursor=expected["next_cursor"]).to_dict()
    )


def test_json_of_a_zero_result_search_carries_the_hint(cli_index: Path) -> None:
    code, out, _ = _invoke(
        "search", "--index-dir", cli_index, "goroutines", "--filter", "language=python", "--json"
    )
    assert code == 0
    assert json.loads(out) == {
        "hits": [],
        "next_cursor": None,
        "hint": {
            "message": "0 results found for query 'goroutines' with filters language='python'.",
            "suggested_filters": {"language": ["go"]},
        },
    }


def test_zero_results_print_the_hint(cli_index: Path) -> None:
    code, out, _ = _invoke("search", "--index-dir", cli_index, "goroutines", "--filter", "language=python")
    assert code == 0
    assert out == (
        "0 results found for query 'goroutines' with filters language='python'.\n  try --filter language=go\n"
    )


def test_help_shows_what_a_filter_is_written_as() -> None:
    result = runner.invoke(app, ["search", "--help"])
    (line,) = [line for line in result.output.splitlines() if "--filter" in line]
    assert "KEY=VALUE" in line.split("Taxonomy")[0] and "list[str]" not in line  # was "<list[str]>"


def test_unknown_filter_key_exits_2_with_the_valid_keys(cli_index: Path) -> None:
    code, out, err = _invoke("search", "--index-dir", cli_index, "payment", "--filter", "platform=ios")
    assert (code, out) == (2, "")
    assert usage_error(err) == (
        "Invalid value for '--filter': Unknown filter 'platform'. Valid filters: scope, topic, language"
    )


def test_unknown_filter_value_exits_2_with_the_valid_values(cli_index: Path) -> None:
    code, _, err = _invoke("search", "--index-dir", cli_index, "payment", "--filter", "language=rust")
    assert code == 2
    assert usage_error(err) == (
        "Invalid value for '--filter': Invalid value 'rust' for filter 'language'. "
        "Valid values: go, python, typescript"
    )


@pytest.mark.parametrize("item", ["language", "=python", "language="])
def test_malformed_filter_exits_2(cli_index: Path, item: str) -> None:
    code, _, err = _invoke("search", "--index-dir", cli_index, "payment", "--filter", item)
    assert code == 2
    assert usage_error(err) == f"Invalid value for '--filter': expects KEY=VALUE, got '{item}'"


def test_a_filter_key_given_twice_exits_2(cli_index: Path) -> None:
    # the last value was searched alone: a search for Go and Python answered for Python only
    code, out, err = _invoke(
        "search",
        "--index-dir",
        cli_index,
        "payment",
        "--filter",
        "language=go",
        "--filter",
        " language =python",
    )
    assert (code, out) == (2, "")
    assert usage_error(err) == (
        "Invalid value for '--filter': 'language' is given twice (go, then python); a search filters each "
        "key on one value: give it once"
    )


def test_bad_cursor_exits_1(cli_index: Path) -> None:
    code, _, err = _invoke("search", "--index-dir", cli_index, "payment", "--cursor", "bad-cursor")
    assert code == 1
    assert err.startswith("error: Invalid cursor")


@pytest.mark.parametrize("limit", ["0", "51"])
def test_limit_out_of_range_exits_2(cli_index: Path, limit: str) -> None:
    code, _, _ = _invoke("search", "--index-dir", cli_index, "payment", "--limit", limit)
    assert code == 2


def test_missing_index_exits_1(tmp_path: Path) -> None:
    code, _, err = _invoke("search", "--index-dir", tmp_path / "nope", "payment")
    assert code == 1
    assert "nope" in err and err.startswith("error: ")


def test_an_index_dir_that_is_a_file_is_named_as_such(tmp_path: Path) -> None:
    # it was said not to exist (docs-mcp-server said it was not a directory)
    a_file = tmp_path / "idx"
    a_file.write_text("not an index", encoding="utf-8")
    code, _, err = _invoke("search", "--index-dir", a_file, "payment")
    assert code == 1
    assert f"index directory is not a directory: '{a_file.resolve()}'" in err


@pytest.mark.parametrize("command", ["search", "get"])
def test_an_index_dir_that_leads_round_a_loop_of_links_is_named_as_such(tmp_path: Path, command: str) -> None:
    # "search failed unexpectedly: RuntimeError: Symlink loop from ...; please report this"
    (tmp_path / "one").symlink_to(tmp_path / "two")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    code, _, err = _invoke(command, "--index-dir", tmp_path / "one", "payment")
    assert code == 1
    assert err == (
        f"error: index directory '{tmp_path / 'one'}' leads round a loop of symbolic links; point it at a folder\n"
    )


@pytest.mark.parametrize("command", ["search", "get"])
def test_an_index_dir_with_a_name_too_long_is_named_as_such(tmp_path: Path, command: str) -> None:
    # "search failed unexpectedly: OSError: [Errno 36] File name too long: ...; please report this"
    code, _, err = _invoke(command, "--index-dir", tmp_path / ("x" * 300), "payment")
    assert code == 1
    assert err.startswith(f"error: index directory '{tmp_path}/xxx") and err.count("\n") == 1
    assert err.endswith(
        "characters)': a name on its path is too long (File name too long); choose a path with shorter names\n"
    )


@pytest.mark.parametrize("command", ["search", "get"])
def test_an_index_folder_this_user_may_not_read_is_named_with_what_to_do(
    cli_index: Path, tmp_path: Path, command: str
) -> None:
    # "search failed unexpectedly: PermissionError ...; please report this"
    import shutil
    import subprocess

    index = tmp_path / "idx"
    shutil.copytree(cli_index, index)
    wrapper = permissions_enforced()
    (index / ".lancedb").chmod(0o600)  # readable, but not to be entered
    try:
        done = subprocess.run(
            [*wrapper, *docs_mcp_command(), command, "--index-dir", str(index), "payment"],
            capture_output=True, text=True, timeout=120, check=False, env=cli_env(),
        )  # fmt: skip
    finally:
        (index / ".lancedb").chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot read the index at '{index}' ('{index / '.lancedb'}")
    assert "Permission denied; let the user running docs-mcp read it" in done.stderr


def test_get_prints_the_delimiter_grammar(cli_index: Path) -> None:
    done = run_docs_mcp(
        "get", "--index-dir", cli_index, "guides/errors.md#errors/error-code-reference", "--context", "1"
    )
    assert done.returncode == 0, done.stderr
    blocks = [(m.group(1), m.group(2), m.group(3), m.group(4)) for m in DELIMITER.finditer(done.stdout)]
    assert blocks == [
        ("guides/errors.md#errors/error-model", "2", "13", "Context: -1"),
        ("guides/errors.md#errors/error-code-reference", "3", "13", "Target"),
        ("guides/errors.md#errors/error-code-reference-part-2", "4", "13", "Context: +1"),
    ]
    engine = SearchEngine.open(cli_index)
    assert done.stdout == engine.get_doc("guides/errors.md#errors/error-code-reference", 1) + "\n"


def test_get_target_only(cli_index: Path) -> None:
    code, out, _ = _invoke("get", "--index-dir", cli_index, "guides/environments.md")
    assert code == 0
    assert out.startswith("--- Chunk: guides/environments.md (Chunk 1 of 1) (Target) ---\n")


def test_get_errors(cli_index: Path) -> None:
    code, _, err = _invoke("get", "--index-dir", cli_index, "guides/nope.md")
    assert code == 1
    assert err == "error: Chunk ID 'guides/nope.md' not found. Use search_docs to discover valid chunk IDs.\n"
    code, _, err = _invoke("get", "--index-dir", cli_index, "a#b#c")
    assert code == 1
    assert "has invalid format" in err
    code, _, _ = _invoke("get", "--index-dir", cli_index, "guides/environments.md", "--context", "6")
    assert code == 2


@pytest.mark.parametrize(("command", "value"), [("search", ""), ("search", "   "), ("get", ""), ("get", " ")])
def test_an_empty_query_or_chunk_id_is_a_usage_error(cli_index: Path, command: str, value: str) -> None:
    code, out, err = _invoke(command, "--index-dir", cli_index, value)
    assert (code, out) == (2, "")
    assert "must not be empty" in usage_error(err)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("retry " * 400, "query is too long: 2,399 characters, at most 2,000"),
        ("retry " * 65, "query has too many words: 65, at most 64"),
    ],
)
def test_a_query_over_the_limits_is_a_usage_error(cli_index: Path, query: str, message: str) -> None:
    code, out, err = _invoke("search", "--index-dir", cli_index, query)
    assert (code, out) == (2, "")
    assert usage_error(err) == (
        f"Invalid value for 'QUERY': {message}; search for the names and words that matter"
    )


def test_search_within_a_token_budget_and_with_facets(cli_index: Path) -> None:
    engine = SearchEngine.open(cli_index)
    code, out, err = _invoke(
        "search", "--index-dir", cli_index, "retry configuration", "--max-tokens", "300", "--facets", "--json"
    )
    assert code == 0, err
    expected = engine.search("retry configuration", max_tokens=300, facets=True)
    assert out == expected.text() + "\n"
    data = json.loads(out)
    assert "cut" in data and "language" in data["facets"]
    code, out, err = _invoke("search", "--index-dir", cli_index, "retry configuration", "--facets")
    assert code == 0, err
    assert re.search(r"^language: \w+ \d+", out, re.M)


def test_facets_leave_out_a_key_no_candidate_has(cli_index: Path) -> None:
    """``topic`` is set only on a global guide: filtered to the SDK pages, no candidate has it, and
    neither output shows an empty ``topic``."""
    args = ("search", "--index-dir", cli_index, "retry", "--facets", "--filter", "scope=sdk-specific")
    code, out, err = _invoke(*args, "--json")
    assert code == 0, err
    facets = json.loads(out)["facets"]
    assert "topic" not in facets and facets["language"]
    assert all(facets.values())
    code, out, err = _invoke(*args)
    assert code == 0, err
    assert re.search(r"^language: \w+ \d+", out, re.M)
    assert not re.search(r"^\w+: *$", out, re.M), out


@pytest.mark.parametrize(("command", "name"), [("search", "QUERY"), ("get", "CHUNK_ID")])
def test_the_usage_line_names_the_argument_as_errors_do(cli_index: Path, command: str, name: str) -> None:
    code, _, err = _invoke(command, "--index-dir", cli_index, "")
    assert code == 2
    assert err.splitlines()[0] == f"Usage: docs-mcp {command} [OPTIONS] {name}"
    assert usage_error(err).startswith(f"Invalid value for '{name}': ")


def test_get_a_whole_section_in_budgeted_parts(cli_index: Path) -> None:
    engine = SearchEngine.open(cli_index)
    chunk_id = "guides/errors.md#errors/error-code-reference-part-2"
    whole = engine.get_doc(chunk_id, scope="section")
    code, out, err = _invoke("get", "--index-dir", cli_index, chunk_id, "--scope", "section")
    assert code == 0, err
    assert out == whole + "\n"
    assert out.startswith("--- Section: guides/errors.md#errors/error-code-reference ")
    code, out, err = _invoke(
        "get", "--index-dir", cli_index, chunk_id, "--scope", "section", "--max-tokens", "200"
    )
    assert code == 0, err
    assert out == engine.get_doc(chunk_id, scope="section", max_tokens=200) + "\n"
    cursor = re.search(r'cursor "([^"]+)"', out)
    assert cursor is not None, out
    code, rest, err = _invoke(
        "get", "--index-dir", cli_index, chunk_id, "--scope", "section", "--max-tokens", "200",
        "--cursor", cursor.group(1),
    )  # fmt: skip
    assert code == 0, err
    assert rest == engine.get_doc(chunk_id, scope="section", max_tokens=200, cursor=cursor.group(1)) + "\n"


def test_get_scope_usage_errors(cli_index: Path) -> None:
    code, _, err = _invoke("get", "--index-dir", cli_index, "guides/environments.md", "--scope", "page")
    assert code == 2
    assert "'page' is not one of 'chunk', 'section', 'parent'" in usage_error(err)
    assert "Value error" not in err  # typer's own check words it as a validation library
    code, _, err = _invoke(
        "get", "--index-dir", cli_index, "guides/environments.md", "--scope", "section", "--context", "1"
    )
    assert code == 2
    assert "--context applies only to --scope chunk" in usage_error(err)
    code, _, _ = _invoke("get", "--index-dir", cli_index, "guides/environments.md", "--max-tokens", "10")
    assert code == 2
