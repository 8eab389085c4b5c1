"""The six assertion kinds, soft assertions and the pass rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_eval.agent.assertions import (
    Assertion,
    AssertionResult,
    compile_pattern,
    evaluate_assertions,
    scenario_passed,
)

pytestmark = pytest.mark.anyio


async def check(assertion: Assertion, workspace: Path, answer: str = "", **kw: object) -> AssertionResult:
    (result,) = await evaluate_assertions(answer, [assertion], workspace, **kw)  # type: ignore[arg-type]
    return result


async def test_answer_assertions(tmp_path: Path) -> None:
    answer = "Send the Tidewater-Signature header.\nRetry after 500 ms."
    assert (await check(Assertion(type="contains", value="Tidewater-Signature"), tmp_path, answer)).passed
    failed = await check(Assertion(type="contains", value="tidewater-signature"), tmp_path, answer)
    assert not failed.passed and failed.message == "Output does not contain 'tidewater-signature'"
    assert (await check(Assertion(type="not_contains", value="I don't know"), tmp_path, answer)).passed
    leak = await check(Assertion(type="not_contains", value="500 ms"), tmp_path, answer)
    assert not leak.passed and "unexpectedly contains" in leak.message
    assert (await check(Assertion(type="matches", pattern=r"^retry", flags="im"), tmp_path, answer)).passed
    assert not (await check(Assertion(type="matches", pattern=r"^retry", flags="i"), tmp_path, answer)).passed
    assert not (await check(Assertion(type="matches", pattern=r"RETRY"), tmp_path, answer)).passed


async def test_file_assertions(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "solution.py").write_text("import hmac\nhmac.new(key, msg, 'sha256')\n")
    contains = Assertion(type="file_contains", path="src/solution.py", value="hmac.new")
    assert (await check(contains, tmp_path)).passed
    matches = Assertion(type="file_matches", path="src/solution.py", pattern="SHA256", flags="i")
    result = await check(matches, tmp_path)
    assert result.passed and result.message == "File 'src/solution.py' matches /SHA256/i"
    missing = await check(Assertion(type="file_contains", path="nope.py", value="x"), tmp_path)
    assert not missing.passed and missing.message == "File 'nope.py' not found in the workspace"
    folder = await check(Assertion(type="file_matches", path="src", pattern="x"), tmp_path)
    assert not folder.passed and "unreadable" in folder.message


@pytest.mark.integration
async def test_script_assertions_run_in_the_workspace_with_a_time_limit(tmp_path: Path) -> None:
    (tmp_path / "solution.py").write_text("print('ok')\n")
    ok = await check(Assertion(type="script", name="runs", command="python3 solution.py"), tmp_path)
    assert ok.passed and ok.message == "Script 'runs' passed: ok"
    bad = await check(Assertion(type="script", name="grep", command="echo nope >&2; exit 3"), tmp_path)
    assert not bad.passed and bad.message == "Script 'grep' failed: nope"
    slow = Assertion(type="script", name="slow", command="sleep 30")
    timed = await check(slow, tmp_path, script_timeout_s=0.3)
    assert not timed.passed and timed.message == "Script 'slow' failed: timed out after 0.3 s"
    guarded = Assertion(type="script", name="live", command="exit 1", when_env="LIVE_KEY")
    skipped = await check(guarded, tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert skipped.passed and skipped.message == "Script 'live' skipped (LIVE_KEY not set)"
    ran = await check(guarded, tmp_path, env={"PATH": "/usr/bin:/bin", "LIVE_KEY": "k"})
    assert not ran.passed


def test_pass_rule_needs_one_hard_assertion_and_all_hard_ones() -> None:
    hard = Assertion(type="contains", value="a")
    soft = Assertion(type="contains", value="b", soft=True)
    assert not scenario_passed([])
    assert not scenario_passed([AssertionResult(soft, True, "")])
    assert scenario_passed([AssertionResult(hard, True, ""), AssertionResult(soft, False, "")])
    assert not scenario_passed([AssertionResult(hard, True, ""), AssertionResult(hard, False, "")])


def test_javascript_flags() -> None:
    assert compile_pattern("a.b", "s").search("a\nb")
    assert not compile_pattern("a.b").search("a\nb")
    assert compile_pattern("x", "gu").search("x")
    with pytest.raises(ValueError, match="unknown regular-expression flag 'z'"):
        compile_pattern("x", "z")
