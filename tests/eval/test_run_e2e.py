"""``docs-mcp-eval run`` end to end against a real MCP server over stdio (tests/eval/fake_docs_server.py).

Expected values for tests/eval/cases/fake-cases.json, worked out by hand from the fake's rankings:

| case | filtered ranking seen | found | rank | rounds | hits returned |
| --- | --- | --- | ---: | ---: | ---: |
| acme python (language=python) | py-acme, retries, user | yes | 1 | 1 | 3 |
| get token | ts-gettoken, py-get_token, ... (5) | yes | 2 | 1 | 5 |
| retry paging (limit 2) | page 1: retries, ratelimit; page 2: ts-gettoken, py-get_token | yes | 3 | 2 | 4 |
| user model miss (max_rounds_allowed 2) | user, pagination, no next page | no | - | 3 | 2 |

MRR@5 = (1 + 1/2 + 1/3 + 0) / 4 = 11/24; NDCG@5 = (1 + 1/log2(3) + 1/log2(4) + 0) / 4;
facet precision 3/4; avg rounds (1 + 1 + 2 + 3) / 4 = 1.75; 5 searches, 3 get_doc calls, 14 hits.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_eval.formatting import round_metric
from docs_mcp_eval.metrics import percentile
from tests.support.eval_cli import FAKE_CASES, CliRunner, fake_build_command, fake_server_command

pytestmark = pytest.mark.integration  # starts processes or listens on ports

PY_ACME = "sdks/python/auth.md#acmeauthclientv2"
TS_ACME = "sdks/typescript/auth.md#acmeauthclientv2"
GO_ACME = "sdks/go/auth.md#acmeauthclientv2"
RETRIES = "guides/retries.md#backoff-strategy"
USER = "models/user.md#_preamble"


def run_args(*extra: str, server: str | None = None) -> list[str]:
    return ["run", "--cases", str(FAKE_CASES), "--server-command", server or fake_server_command(), *extra]


@pytest.fixture(scope="module")
def json_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path, str]:
    """One JSON run shared by several tests (spawning the server costs ~0.6 s)."""
    out = tmp_path_factory.mktemp("run") / "result.json"
    completed = subprocess.run(
        [sys.executable, "-m", "docs_mcp_eval", *run_args("--format", "json", "--out", str(out))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout), out, completed.stderr


def test_metrics_match_hand_computation(json_run: tuple[dict[str, Any], Path, str]) -> None:
    data, _, _ = json_run
    summary = data["summary"]
    assert summary["mrrAt5"] == round_metric(11 / 24) == 0.458333
    assert summary["ndcgAt5"] == round_metric((1 + 1 / math.log2(3) + 0.5) / 4) == 0.532732
    assert summary["facetPrecision"] == 0.75
    assert summary["avgRoundsToRightDoc"] == 1.75
    assert summary["filterLeakRate"] == 0.0
    assert summary["buildTimeMs"] == 0


def test_cases_walk_rounds_with_cursors(json_run: tuple[dict[str, Any], Path, str]) -> None:
    data, _, _ = json_run
    cases = {case["name"]: case for case in data["rankedCases"]}
    assert cases["acme python"]["rankedChunkIds"] == [PY_ACME, RETRIES, USER]
    assert cases["acme python"]["filters"] == {"language": "python"}
    assert cases["retry paging"]["rankedChunkIds"] == [
        RETRIES,
        "sdks/python/errors.md#ratelimiterror",
        "sdks/typescript/auth.md#gettoken",
        "sdks/python/auth.md#get_token",
    ]
    assert [case["roundsToRightDoc"] for case in data["rankedCases"]] == [1, 1, 2, 3]
    assert [case["returnedHits"] for case in data["rankedCases"]] == [3, 5, 4, 2]
    assert data["misses"] == [
        {
            "name": "user model miss",
            "category": None,
            "query": "user model",
            "expectedChunkId": RETRIES,
            "rank": None,
            "topChunkIds": [USER, "guides/pagination.md#cursor-pagination"],
        }
    ]
    assert [(row["category"], row["caseCount"]) for row in data["categoryBreakdown"]] == [
        ("exact-name", 2),
        ("uncategorized", 1),
        ("workflow", 1),
    ]


def test_stats_latencies_and_memory(json_run: tuple[dict[str, Any], Path, str]) -> None:
    data, _, _ = json_run
    stats, summary = data["stats"], data["summary"]
    assert len(stats["searchLatenciesMs"]) == 5
    assert len(stats["getDocLatenciesMs"]) == 3
    assert all(0 < value < 60_000 for value in stats["searchLatenciesMs"] + stats["getDocLatenciesMs"])
    assert summary["searchP50Ms"] == round_metric(percentile(stats["searchLatenciesMs"], 0.5))
    assert summary["searchP95Ms"] == round_metric(max(stats["searchLatenciesMs"]))
    assert summary["getDocP50Ms"] == round_metric(percentile(stats["getDocLatenciesMs"], 0.5))
    # A Python process with the MCP SDK imported is well above 10 MB resident.
    assert 10 < summary["peakRssMb"] == stats["peakRssMb"] < 2000
    assert (stats["returnedHits"], stats["leakedHits"]) == (14, 0)
    assert 0 < summary["startupMs"] == round_metric(stats["startupMs"]) < 60_000
    assert summary["startupMs"] < summary["firstSearchMs"] == round_metric(stats["firstSearchMs"]) < 60_000
    assert data["metadata"]["serverName"] == "fake-docs-server"
    assert data["metadata"]["deterministic"] is True


def test_tokens_read_per_case_and_in_total(json_run: tuple[dict[str, Any], Path, str]) -> None:
    data, _, _ = json_run
    cases, summary = data["rankedCases"], data["summary"]
    assert all(case["tokensRead"] > 0 for case in cases)
    found = sorted(case["tokensRead"] for case in cases if case["expectedChunkId"] in case["rankedChunkIds"])
    assert len(found) == 3
    assert summary["tokensToRightDocP50"] == found[1]
    assert summary["tokensReadTotal"] == sum(case["tokensRead"] for case in cases)
    # the case that walked two pages read more than the same pages' first one would hold
    assert cases[2]["tokensRead"] > cases[0]["tokensRead"]
    assert [case.get("docCut") for case in cases] == [False, False, False, None]
    assert "sectionWhole" not in cases[0] and "sectionWholeRate" not in summary
    assert data["metadata"]["maxTokens"] is None and data["metadata"]["scope"] == "chunk"


def test_budget_and_scope_are_not_sent_to_a_server_whose_schemas_lack_them(
    json_run: tuple[dict[str, Any], Path, str],
) -> None:
    # the fake answers "Unexpected field" to any argument its schema does not declare
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "docs_mcp_eval",
            *run_args("--format", "json", "--max-tokens", "300", "--scope", "section"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    data, plain = json.loads(completed.stdout), json_run[0]
    assert data["rankedCases"] == plain["rankedCases"]  # the same calls, the same answers, the same tokens
    assert data["summary"]["mrrAt5"] == plain["summary"]["mrrAt5"]
    meta = data["metadata"]
    assert (meta["maxTokens"], meta["scope"]) == (300, "section")
    assert (meta["maxTokensSupported"], meta["scopeSupported"]) == (False, False)


def test_an_unknown_scope_is_a_usage_error(run_cli: CliRunner) -> None:
    result = run_cli(run_args("--scope", "page"))
    assert result.code == 2
    assert "'page' is not one of" in result.err and "'parent'" in result.err


def test_an_unknown_format_is_a_usage_error_in_plain_words(run_cli: CliRunner) -> None:
    result = run_cli(run_args("--format", "XML"))
    assert result.code == 2
    assert "'XML' is not one of 'markdown', 'json'" in result.err and "Value error" not in result.err


def test_out_file_matches_stdout(json_run: tuple[dict[str, Any], Path, str]) -> None:
    data, out, err = json_run
    assert json.loads(out.read_text(encoding="utf-8")) == data
    assert f"wrote eval result to {out}" in err
    assert "deltaMarkdown" not in data


def test_the_first_search_after_the_spawn_is_timed(run_cli: CliRunner) -> None:
    # a server whose index loads on the first search: the wait shows after the handshake
    result = run_cli(run_args("--format", "json", server=fake_server_command("--first-search-ms", "400")))
    assert result.code == 0, result.err
    summary = json.loads(result.out)["summary"]
    assert summary["firstSearchMs"] - summary["startupMs"] >= 400
    report = run_cli(run_args(server=fake_server_command()))
    assert "| Spawn to Handshake (ms) |" in report.out and "| Spawn to First Search (ms) |" in report.out


def test_markdown_report_with_leaks_and_memory_ballast(run_cli: CliRunner) -> None:
    server = fake_server_command("--ignore-filters", "--ballast-mb", "96")
    result = run_cli(run_args(server=server))
    assert result.code == 0, result.err
    # Unfiltered, case 1 sees ts, py, go, retries, user: 2 leaks of 16 hits, and its chunk drops to rank 2.
    assert "| Filter Leak Rate | 0.1250 (2 of 16 hits) |" in result.out
    assert "| MRR@5 | 0.3333 |" in result.out
    assert f"| acme python | language=python | `{TS_ACME}`<br>`{GO_ACME}` |" in result.out
    assert f"| user model miss | - | user model | `{RETRIES}` | N/F |" in result.out
    rss = float(result.out.split("| Peak RSS (MB) | ")[1].split(" |")[0])
    assert rss > 96


def test_build_command_runs_and_is_timed_before_the_server(run_cli: CliRunner, tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n", encoding="utf-8")
    build = fake_build_command(
        "build", "--docs-dir", str(docs), "--out", str(index), "--embedding-provider", "none"
    )
    out = tmp_path / "result.json"
    result = run_cli(
        run_args(
            "--build-command", build, "--out", str(out), server=fake_server_command("--index-dir", str(index))
        )
    )
    assert result.code == 0, result.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["summary"]["buildTimeMs"] > 0
    assert data["summary"]["mrrAt5"] == 0.458333
    # The build's stdout is sent to stderr so stdout holds only the report.
    assert "fake build wrote" in result.err
    assert "fake build wrote" not in result.out


def test_failing_build_stops_the_run(run_cli: CliRunner, tmp_path: Path) -> None:
    build = fake_build_command(
        "build",
        "--docs-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / "i"),
        "--embedding-provider",
        "x",
        "--fail-for",
        "x",
    )
    result = run_cli(run_args("--build-command", build))
    assert result.code == 1
    assert "error: Build command failed with exit code 2" in result.err


def test_original_baseline_gives_regressions_and_improvements(run_cli: CliRunner, tmp_path: Path) -> None:
    baseline = {
        "summary": {
            "mrrAt5": 0.5,
            "ndcgAt5": 0.5,
            "avgRoundsToRightDoc": 2,
            "facetPrecision": 0.75,
            "searchP50Ms": 10,
            "searchP95Ms": 20,
            "getDocP50Ms": 5,
            "buildTimeMs": 0,
            "peakRssMb": 100,
        },
        "metadata": {"deterministic": True, "provider": None, "model": None},
        "rankedCases": [
            {
                "expectedChunkId": PY_ACME,
                "rankedChunkIds": [PY_ACME],
                "roundsToRightDoc": 1,
                "name": "acme python",
            },
            {"expectedChunkId": "x", "rankedChunkIds": [], "roundsToRightDoc": 2, "name": "get token"},
            {
                "expectedChunkId": RETRIES,
                "rankedChunkIds": [USER, RETRIES],
                "roundsToRightDoc": 1,
                "name": "user model miss",
            },
        ],
        "stats": {"searchLatenciesMs": [], "getDocLatenciesMs": [], "buildTimeMs": 0, "peakRssMb": 100},
    }
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(baseline), encoding="utf-8")
    result = run_cli(run_args("--baseline", str(path)))
    assert result.code == 0, result.err
    delta = result.out.split("## Delta vs Baseline\n\n", 1)[1]
    assert delta.startswith("| Metric | Baseline | Current | Delta |\n| --- | ---: | ---: | ---: |\n")
    assert "| MRR@5 | 0.500000 | 0.458333 | -0.041667 |" in delta
    assert "| Avg Rounds to Right Doc | 2.000000 | 1.750000 | -0.250000 |" in delta
    assert "### Regressions\n\n- **user model miss**: was rank 2, now rank N/F" in delta
    assert "### Improvements\n\n- **get token**: now found at rank 2" in delta


def test_own_result_is_a_valid_baseline(
    run_cli: CliRunner, json_run: tuple[dict[str, Any], Path, str]
) -> None:
    _, out, _ = json_run
    result = run_cli(run_args("--baseline", str(out), "--format", "json"))
    assert result.code == 0, result.err
    data = json.loads(result.out)
    delta = data["deltaMarkdown"]
    assert "| MRR@5 | 0.458333 | 0.458333 | +0.000000 |" in delta
    assert "| Facet Precision | 0.750000 | 0.750000 | +0.000000 |" in delta
    assert "###" not in delta
    assert delta in result.err  # like the original, the delta also goes to stderr in JSON mode


def test_tool_prefix(run_cli: CliRunner) -> None:
    ok = run_cli(run_args("--tool-prefix", "acme", server=fake_server_command("--tool-prefix", "acme")))
    assert ok.code == 0, ok.err
    assert "| MRR@5 | 0.4583 |" in ok.out
    missing = run_cli(run_args(server=fake_server_command("--tool-prefix", "acme")))
    assert missing.code == 1
    assert (
        "error: the MCP server does not offer the tool(s) search_docs, get_doc; it offers acme_get_doc,"
        " acme_search_docs. Its tools look prefixed: pass --tool-prefix acme"
    ) in missing.err


def test_server_without_get_doc_is_rejected(run_cli: CliRunner) -> None:
    result = run_cli(run_args(server=fake_server_command("--omit-tool", "get_doc")))
    assert result.code == 1
    assert "error: the MCP server does not offer the tool(s) get_doc; it offers search_docs" in result.err
    assert "Traceback" not in result.err


def test_search_error_aborts_the_run(run_cli: CliRunner) -> None:
    result = run_cli(run_args(server=fake_server_command("--search-error", "Invalid cursor: forged")))
    assert result.code == 1
    assert (
        "error: search_docs returned an error for case 0 ('acme python'): Invalid cursor: forged; stopping the run"
        in result.err
    )
    assert result.out == ""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("deep", "it nests arrays or objects too deeply to read"),
        ("long-number", "it holds a number too long to read (over 4,300 digits)"),
    ],
)
def test_a_search_answer_json_cannot_read_stops_the_run_in_one_line(
    run_cli: CliRunner, text: str, reason: str
) -> None:
    # json.loads raised RecursionError or ValueError: the run ended in a bare traceback
    result = run_cli(run_args("--warmup-queries", "0", server=fake_server_command("--search-text", text)))
    assert result.code == 1
    assert "Traceback" not in result.err
    assert (
        result.err
        == f"error: search_docs result for case 0 ('acme python') cannot be read: {reason}; stopping the run\n"
    )


def test_server_that_will_not_start_shows_its_stderr(run_cli: CliRunner) -> None:
    result = run_cli(
        run_args(server=fake_server_command("--fail-on-start", "metadata.json not found in /idx"))
    )
    assert result.code == 1
    assert "error: the MCP server failed to start" in result.err
    assert "Last lines of the server's stderr:\n  metadata.json not found in /idx" in result.err
    assert "Traceback" not in result.err


def test_a_server_that_floods_its_stderr_is_reported_in_a_few_lines(run_cli: CliRunner) -> None:
    # the whole of its stderr was read back and its last lines printed: 30 MB in the error message
    server = fake_server_command("--stderr-mb", "30", "--fail-on-start", "metadata.json not found in /idx")
    result = run_cli(run_args(server=server))
    assert result.code == 1
    assert result.err.endswith("\n  metadata.json not found in /idx\n")
    assert len(result.err) < 5_000


def test_server_dying_mid_run_is_reported_with_its_stderr(run_cli: CliRunner) -> None:
    result = run_cli(run_args("--warmup-queries", "0", server=fake_server_command("--crash-after", "2")))
    assert result.code == 1
    assert "error: search_docs failed for case 2 ('retry paging')" in result.err
    assert "fake-docs-server: segmentation fault (simulated)" in result.err
    assert "Traceback" not in result.err


def test_a_cursor_the_server_gives_again_ends_the_case_s_walk(run_cli: CliRunner, tmp_path: Path) -> None:
    """A server whose every page hands back the cursor it was sent would be asked the same page
    until the round budget ran out (a budget of a billion: for ever); the walk ends at the repeat."""
    cases = tmp_path / "cases.json"
    case = {"query": "q", "expectedChunkId": "a.md#x"}
    cases.write_text(json.dumps([{**case, "maxRounds": 2}, {**case, "maxRounds": 200}]), encoding="utf-8")
    stuck = json.dumps({"hits": [{"chunk_id": "b.md#y", "metadata": {}}], "next_cursor": "again"})
    server = fake_server_command("--search-text", stuck)
    result = run_cli(
        [
            "run",
            "--cases",
            str(cases),
            "--server-command",
            server,
            "--warmup-queries",
            "0",
            "--format",
            "json",
        ]
    )
    assert result.code == 0, result.err
    first, second = json.loads(result.out)["rankedCases"]
    assert first["tokensRead"] == second["tokensRead"]  # two pages each


def test_three_untimed_searches_warm_the_server_up_unless_told_otherwise(
    run_cli: CliRunner, json_run: tuple[dict[str, Any], Path, str]
) -> None:
    # a server that answers three searches dies on the first case's: the three went to warming up
    warmed = run_cli(run_args(server=fake_server_command("--crash-after", "3")))
    assert warmed.code == 1
    assert "error: search_docs failed for case 0 ('acme python')" in warmed.err
    assert json_run[0]["metadata"]["warmupQueries"] == 3
    assert len(json_run[0]["stats"]["searchLatenciesMs"]) == 5  # the cases' searches only
    cold = run_cli(run_args("--warmup-queries", "0", server=fake_server_command("--crash-after", "3")))
    assert "error: search_docs failed for case 2 ('retry paging')" in cold.err  # its second page


def test_unknown_server_command(run_cli: CliRunner) -> None:
    result = run_cli(run_args(server="no-such-docs-server-xyz --index-dir idx"))
    assert result.code == 1
    assert "error: cannot start the MCP server: command not found: 'no-such-docs-server-xyz'" in result.err


def test_a_server_installed_beside_python_but_not_on_path_is_named_with_its_path(
    run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an environment used without being activated: "command not found" alone did not say where it is
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin"]))
    result = run_cli(run_args(server="docs-mcp-server --index-dir idx"))
    assert result.code == 1
    beside = Path(sys.executable).parent / "docs-mcp-server"
    assert "command not found: 'docs-mcp-server'" in result.err and str(beside) in result.err, result.err


def test_server_env_and_parent_env_reach_the_server(
    run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = fake_server_command("--require-env", "EVAL_TEST_TOKEN", "--require-env", "EVAL_PARENT_VAR")
    monkeypatch.delenv("EVAL_PARENT_VAR", raising=False)
    denied = run_cli(run_args("--server-env", "EVAL_TEST_TOKEN=1", server=server))
    assert denied.code == 1
    assert "environment variable EVAL_PARENT_VAR is not set" in denied.err
    monkeypatch.setenv("EVAL_PARENT_VAR", "from-parent")
    allowed = run_cli(run_args("--server-env", "EVAL_TEST_TOKEN=1", server=server))
    assert allowed.code == 0, allowed.err


def test_bad_server_env_pair(run_cli: CliRunner) -> None:
    result = run_cli(run_args("--server-env", "NOEQUALS"))
    assert result.code == 2
    assert "expected KEY=VALUE, got 'NOEQUALS'" in result.err


def test_malformed_case_file_is_reported_before_starting_anything(run_cli: CliRunner, tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(
        json.dumps(
            [{"query": "q", "expectedChunkId": "a"}, {"query": "q", "limit": 0, "expectedChunkId": "b"}]
        )
    )
    result = run_cli(["run", "--cases", str(cases), "--server-command", "no-such-docs-server-xyz"])
    assert result.code == 1
    assert f"error: {cases}: case 1: field 'limit' must be a positive integer (got 0)" in result.err


def test_an_out_that_is_the_case_file_is_refused_before_starting_anything(
    run_cli: CliRunner, tmp_path: Path
) -> None:
    # the run's result replaced the hand-written cases, without a word
    cases = tmp_path / "cases.json"
    cases.write_bytes(FAKE_CASES.read_bytes())
    link = tmp_path / "same.json"
    link.symlink_to(cases)
    for out in (cases, link):
        result = run_cli(
            ["run", "--cases", str(cases), "--server-command", "no-such-docs-server-xyz", "--out", str(out)]
        )
        assert result.code == 2
        assert result.err == (
            f"error: --out {out} is the case file given to --cases: the result would replace the cases; "
            "write it to another file\n"
        )
    assert cases.read_bytes() == FAKE_CASES.read_bytes()


@pytest.mark.parametrize("option", ["--server-cwd", "--build-cwd"])
def test_a_working_folder_that_does_not_exist_is_named(
    run_cli: CliRunner, tmp_path: Path, option: str
) -> None:
    # said 'command not found' of a server or build command that was there
    missing = tmp_path / "missing"
    result = run_cli(run_args("--build-command", fake_build_command(), option, str(missing)))
    assert result.code == 2
    assert "Invalid value for '" + option in result.err and "does not exist" in result.err
    assert "command not found" not in result.err


def test_an_out_that_is_a_folder_is_refused_before_the_run(run_cli: CliRunner, tmp_path: Path) -> None:
    # said only once every case had run
    result = run_cli(
        [
            "run",
            "--cases",
            str(FAKE_CASES),
            "--server-command",
            "no-such-docs-server-xyz",
            "--out",
            str(tmp_path),
        ]
    )
    assert result.code == 2
    assert result.err == f"error: --out {tmp_path} is a folder; name the file to write the result to\n"


@pytest.mark.parametrize("shape", ["long name", "symlink loop", "file on its path"])
def test_an_out_no_file_can_be_written_at_is_refused_before_the_run(
    run_cli: CliRunner, tmp_path: Path, shape: str
) -> None:
    # a name too long ended the command in a traceback (Path.is_dir raised ENAMETOOLONG); the
    # others were said only once every case had run
    (tmp_path / "one").symlink_to(tmp_path / "two")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    out, reason = {
        "long name": (tmp_path / ("x" * 300), "File name too long"),
        "symlink loop": (tmp_path / "one", "Too many levels of symbolic links"),
        "file on its path": (tmp_path / "notes.txt" / "result.json", "Not a directory"),
    }[shape]
    result = run_cli(["run", "--cases", str(FAKE_CASES), "--server-command", "no-such-docs-server-xyz",
                      "--out", str(out)])  # fmt: skip
    assert result.code == 2, result.err
    assert result.err == f"error: --out {str(out)[:200]} cannot be written ({reason}); name another file\n"


def test_console_script_defaults_to_run_and_never_prints_tracebacks(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("docs-mcp-eval")
    assert script.is_file(), "the docs-mcp-eval console script is installed in the environment"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    completed = subprocess.run(
        [
            str(script),
            "--cases",
            str(FAKE_CASES),
            "--server-command",
            fake_server_command("--fail-on-start", "boom 42"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr.startswith("error: the MCP server failed to start")
    assert "boom 42" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_an_out_the_result_cannot_be_written_to_keeps_the_file_that_was_there(tmp_path: Path) -> None:
    """A real write error (the file-size limit, as a full disk): ``--out`` was written in place, so
    the earlier result kept there as a baseline was cut and half the new one left in its stead."""
    import resource

    out = tmp_path / "baseline.json"
    kept = '{"summary": {"mrrAt5": 0.5}}\n'
    out.write_text(kept, encoding="utf-8")
    script = Path(sys.executable).with_name("docs-mcp-eval")

    def small_files() -> None:  # Python ignores SIGXFSZ: a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    completed = subprocess.run(
        [
            str(script),
            "run",
            "--cases",
            str(FAKE_CASES),
            "--server-command",
            fake_server_command(),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=small_files,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert out.read_text(encoding="utf-8") == kept
    assert completed.stderr.splitlines()[-1] == (
        f"error: cannot write {out}: File too large (a file there is left as it was)"
    ), completed.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json"]  # no partial file left
