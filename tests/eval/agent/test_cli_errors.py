"""``agent-eval`` refuses bad options with the original's messages (one ``error:`` line, exit 2) before
starting anything; configuration mistakes exit 1."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.support.eval_cli import CliResult, SuiteWriter

Cli = Callable[[Sequence[str]], CliResult]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "error: one of --suite, --scenarios, or --prompt is required"),
        (
            ["--suite", "a", "--prompt", "p"],
            "error: --suite, --scenarios, and --prompt are mutually exclusive",
        ),
        (["--prompt", "p"], "error: --prompt requires --docs-dir"),
        (
            ["--suite", "examples-docs", "--compare", "--no-mcp"],
            "error: --compare and --no-mcp are mutually exclusive",
        ),
        (
            ["--suite", "examples-docs", "--include", "nope, none"],
            'error: no scenarios matched --include "nope, none"',
        ),
    ],
)
def test_original_option_errors(eval_cli: Cli, args: list[str], message: str) -> None:
    result = eval_cli(["agent-eval", *args])
    assert result.code == 2
    assert result.err.strip() == message
    assert result.out == ""


def test_an_out_that_is_the_scenario_file_is_refused(eval_cli: Cli, write_suite: SuiteWriter) -> None:
    # the result JSON replaced the scenarios at the end of a paid run
    suite = write_suite({"s": {"prompt": "p", "docsDir": "missing-docs", "assertions": []}})
    before = suite.read_bytes()
    result = eval_cli(["agent-eval", "--scenarios", str(suite), "--out", str(suite)])
    assert result.code == 2
    assert (
        result.err.strip()
        == f"error: --out {suite} is the --scenarios file: the result would replace it; write it elsewhere"
    )
    assert suite.read_bytes() == before


def test_an_out_with_a_name_too_long_is_refused(
    eval_cli: Cli, write_suite: SuiteWriter, tmp_path: Path
) -> None:
    # Path.exists raised ENAMETOOLONG: a traceback
    suite = write_suite({"s": {"prompt": "p", "docsDir": "missing-docs", "assertions": []}})
    out = tmp_path / ("x" * 300)
    result = eval_cli(["agent-eval", "--scenarios", str(suite), "--out", str(out)])
    assert result.code == 2
    assert (
        result.err
        == f"error: --out {str(out)[:200]} cannot be written (File name too long); name another file\n"
    )


def test_a_server_folder_that_does_not_exist_is_named(
    eval_cli: Cli, write_suite: SuiteWriter, tmp_path: Path
) -> None:
    suite = write_suite({"s": {"prompt": "p", "docsDir": "missing-docs", "assertions": []}})
    result = eval_cli(["agent-eval", "--scenarios", str(suite), "--server-cwd", str(tmp_path / "missing")])
    assert result.code == 2
    assert "Invalid value for '--server-cwd'" in result.err and "does not exist" in result.err


def test_configuration_errors_name_what_to_fix(
    eval_cli: Cli, write_suite: SuiteWriter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_suite({"s": {"prompt": "p", "docsDir": "missing-docs", "assertions": []}})
    no_key = eval_cli(["agent-eval", "--scenarios", str(suite)])
    assert no_key.code == 1
    assert no_key.err.startswith("error: no model API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY")

    openai = eval_cli(["agent-eval", "--scenarios", str(suite), "--provider", "openai"])
    assert (
        openai.err.strip()
        == "error: OPENAI_API_KEY is not set (a server given with --base-url may need no key)"
    )

    bogus = eval_cli(["agent-eval", "--scenarios", str(suite), "--provider", "bogus"])
    assert bogus.code == 2 and "'bogus' is not one of" in bogus.err and "--provider" in bogus.err
    assert "Value error" not in bogus.err

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    docs = eval_cli(["agent-eval", "--scenarios", str(suite), "--cache-dir", str(tmp_path / "cache")])
    assert docs.code == 1
    assert f"scenario 's': the docs folder {tmp_path / 'missing-docs'} does not exist" in docs.err
    assert not (tmp_path / "cache").exists()  # nothing was built

    unknown = eval_cli(["agent-eval", "--suite", "no-such-suite"])
    assert unknown.code == 1 and "no suite named 'no-such-suite'" in unknown.err
    assert "examples-docs" in unknown.err

    broken = tmp_path / "broken.yaml"
    broken.write_text("s:\n  assertions: []\n")
    bad_file = eval_cli(["agent-eval", "--scenarios", str(broken)])
    assert bad_file.code == 1
    assert bad_file.err.strip() == f"error: {broken.resolve()}:1: scenario 's': 'prompt' is required"

    env = eval_cli(["agent-eval", "--scenarios", str(suite), "--server-env", "NOEQUALS"])
    assert env.code == 2 and "expected key=value format" in env.err
    price = eval_cli(["agent-eval", "--scenarios", str(suite), "--price-per-mtok", "cheap"])
    assert price.code == 2 and "INPUT,OUTPUT" in price.err
    assert "Traceback" not in "".join(
        r.err for r in (no_key, openai, bogus, docs, unknown, bad_file, env, price)
    )
