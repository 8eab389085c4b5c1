"""Checks on what an agent produced: its final answer and the files in its workspace.

Six kinds, as in the original's scenario files:

* ``contains`` / ``not_contains``: a case-sensitive substring of the final answer;
* ``matches``: a regular expression (``pattern`` plus JavaScript-style ``flags``) searched in the answer;
* ``file_contains`` / ``file_matches``: the same on a file of the workspace (a missing file fails);
* ``script``: ``sh -c command`` run in the workspace, passing on exit code 0, killed after 30 s; with
  ``when_env`` it only runs when that environment variable is set, and passes (as skipped) otherwise.

Any assertion may be ``soft``: it is checked and reported but does not decide the outcome. A scenario
passes when it has at least one hard assertion and every hard assertion passes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docs_mcp_eval.agent.shell import run_shell

AssertionType = Literal["contains", "not_contains", "matches", "file_contains", "file_matches", "script"]
ASSERTION_TYPES: tuple[AssertionType, ...] = (
    "contains",
    "not_contains",
    "matches",
    "file_contains",
    "file_matches",
    "script",
)
SCRIPT_TIMEOUT_S = 30.0
_OUTPUT_IN_MESSAGE = 200

_JS_FLAGS: Mapping[str, re.RegexFlag] = {
    "i": re.IGNORECASE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    # g (global), y (sticky), u (unicode), d (indices), v: no effect on "does it match anywhere"
    "g": re.NOFLAG,
    "y": re.NOFLAG,
    "u": re.NOFLAG,
    "d": re.NOFLAG,
    "v": re.NOFLAG,
}


def compile_pattern(pattern: str, flags: str = "") -> re.Pattern[str]:
    """A JavaScript-style ``pattern`` + ``flags`` as a Python regex; raises ``ValueError`` when invalid."""
    combined = re.NOFLAG
    for flag in flags:
        if flag not in _JS_FLAGS:
            raise ValueError(f"unknown regular-expression flag {flag!r} (use i, m, s, g, u or y)")
        combined |= _JS_FLAGS[flag]
    try:
        return re.compile(pattern, combined)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


@dataclass(frozen=True, kw_only=True)
class Assertion:
    """One check of a scenario. Which fields are set depends on ``type`` (see the module docstring)."""

    type: AssertionType
    soft: bool = False
    value: str | None = None
    pattern: str | None = None
    flags: str = ""
    path: str | None = None
    command: str | None = None
    name: str | None = None
    when_env: str | None = None

    def key(self) -> str:
        """A stable identity for matching the same assertion across two runs."""
        match self.type:
            case "contains" | "not_contains":
                return f"{self.type}:{self.value}"
            case "matches":
                return f"matches:{self.pattern}"
            case "file_contains":
                return f"file_contains:{self.path}:{self.value}"
            case "file_matches":
                return f"file_matches:{self.path}:{self.pattern}"
            case "script":
                return f"script:{self.name}"

    def to_json(self) -> dict[str, Any]:
        """The assertion as written in a scenario file (only the fields its type uses)."""
        data: dict[str, Any] = {"type": self.type}
        for key in ("value", "pattern", "path", "command", "name", "when_env"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        if self.flags:
            data["flags"] = self.flags
        if self.soft:
            data["soft"] = True
        return data


@dataclass(frozen=True)
class AssertionResult:
    assertion: Assertion
    passed: bool
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"assertion": self.assertion.to_json(), "passed": self.passed, "message": self.message}


def scenario_passed(results: Sequence[AssertionResult]) -> bool:
    """At least one hard assertion, and every hard assertion passed."""
    hard = [r for r in results if not r.assertion.soft]
    return bool(hard) and all(r.passed for r in hard)


async def evaluate_assertions(
    answer: str,
    assertions: Sequence[Assertion],
    workspace: Path,
    *,
    env: Mapping[str, str] | None = None,
    script_timeout_s: float = SCRIPT_TIMEOUT_S,
) -> list[AssertionResult]:
    """Check every assertion, in order, against the final ``answer`` and the ``workspace`` folder."""
    environment = dict(os.environ if env is None else env)
    results: list[AssertionResult] = []
    for assertion in assertions:
        if assertion.type == "script":
            results.append(await _script(assertion, workspace, environment, script_timeout_s))
        else:
            results.append(_static(assertion, answer, workspace))
    return results


def _static(assertion: Assertion, answer: str, workspace: Path) -> AssertionResult:
    value = assertion.value or ""
    match assertion.type:
        case "contains":
            passed = value in answer
            verb = "contains" if passed else "does not contain"
            return AssertionResult(assertion, passed, f"Output {verb} {value!r}")
        case "not_contains":
            passed = value not in answer
            verb = "does not contain" if passed else "unexpectedly contains"
            return AssertionResult(assertion, passed, f"Output {verb} {value!r}")
        case "matches":
            shown = f"/{assertion.pattern}/{assertion.flags}"
            passed = _search(assertion, answer)
            verb = "matches" if passed else "does not match"
            return AssertionResult(assertion, passed, f"Output {verb} {shown}")
        case _:
            return _file(assertion, workspace)


def _file(assertion: Assertion, workspace: Path) -> AssertionResult:
    relative = assertion.path or ""
    try:
        text = (workspace / relative).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return AssertionResult(assertion, False, f"File {relative!r} not found in the workspace")
    except OSError as exc:
        return AssertionResult(assertion, False, f"File {relative!r} unreadable: {exc.strerror or exc}")
    if assertion.type == "file_contains":
        value = assertion.value or ""
        passed = value in text
        verb = "contains" if passed else "does not contain"
        return AssertionResult(assertion, passed, f"File {relative!r} {verb} {value!r}")
    shown = f"/{assertion.pattern}/{assertion.flags}"
    passed = _search(assertion, text)
    verb = "matches" if passed else "does not match"
    return AssertionResult(assertion, passed, f"File {relative!r} {verb} {shown}")


def _search(assertion: Assertion, text: str) -> bool:
    return compile_pattern(assertion.pattern or "", assertion.flags).search(text) is not None


async def _script(
    assertion: Assertion, workspace: Path, env: Mapping[str, str], timeout_s: float
) -> AssertionResult:
    label = assertion.name or "script"
    if assertion.when_env and not env.get(assertion.when_env):
        return AssertionResult(assertion, True, f"Script {label!r} skipped ({assertion.when_env} not set)")
    outcome = await run_shell(assertion.command or "", cwd=workspace, env=env, timeout_s=timeout_s)
    output = outcome.output.strip()
    if outcome.timed_out:
        return AssertionResult(assertion, False, f"Script {label!r} failed: timed out after {timeout_s:g} s")
    if outcome.exit_code == 0:
        detail = f": {output[:_OUTPUT_IN_MESSAGE]}" if output else ""
        return AssertionResult(assertion, True, f"Script {label!r} passed{detail}")
    detail = output[: _OUTPUT_IN_MESSAGE * 2] or f"exit code {outcome.exit_code}"
    return AssertionResult(assertion, False, f"Script {label!r} failed: {detail}")
