"""The GitHub workflows are valid and every command they run exists, as do its subcommands and flags.

A renamed flag, a subcommand that does not exist or a test folder that moved fails here, not on the
first push (how the commands are checked: :mod:`tests.support.workflows`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.workflows import (
    REPO_ROOT,
    WORKFLOWS,
    WORKFLOWS_DIR,
    CommandChecker,
    RunStep,
    load_workflow,
    pytest_paths,
    run_steps,
    shell_commands,
    triggers,
)

# --- tests ------------------------------------------------------------------------------------------


def test_the_three_workflows_exist() -> None:
    assert {path.name for path in WORKFLOWS} == {"ci.yml", "docs-index.yml", "release.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_well_formed(path: Path) -> None:
    document = load_workflow(path)
    assert document.get("name"), f"{path.name} has no name"
    assert triggers(document), f"{path.name} has no `on:` triggers"
    jobs = document.get("jobs")
    assert isinstance(jobs, dict) and jobs, f"{path.name} has no jobs"
    for job_id, job in jobs.items():
        assert job.get("runs-on"), f"{path.name}: job {job_id} has no runs-on"
        assert isinstance(job.get("timeout-minutes"), int), f"{path.name}: job {job_id} has no timeout"
        steps = job.get("steps")
        assert isinstance(steps, list) and steps, f"{path.name}: job {job_id} has no steps"
        for step in steps:
            assert ("uses" in step) != ("run" in step), f"{path.name}: job {job_id}: step needs uses xor run"
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w./-]+@v\d+", step["uses"]), step["uses"]
    assert document.get("permissions", {}).get("contents") == "read", "least privilege by default"


@pytest.mark.slow
@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
@pytest.mark.integration
def test_every_command_in_a_workflow_exists(path: Path) -> None:
    checker = CommandChecker()
    for step in run_steps(path):
        for command in shell_commands(step.script):
            checker.check(command, step.where)
    assert checker.problems == []
    assert checker.checked, f"{path.name} runs no docs-mcp or uv command"


@pytest.mark.slow
@pytest.mark.integration
def test_every_command_in_the_local_ci_script_exists() -> None:
    """``.ci/run`` (what CI runs on these machines) lints the Dockerfile exactly like the workflow."""
    checker = CommandChecker()
    for command in shell_commands((REPO_ROOT / ".ci" / "run").read_text("utf-8")):
        checker.check(command, ".ci/run")
    assert checker.problems == []
    hadolint = [c for c in checker.checked if c[:4] == ["uv", "run", "--frozen", "hadolint"]]
    assert len(hadolint) == 1
    assert " ".join(hadolint[0]) in _scripts(WORKFLOWS_DIR / "ci.yml", "docker")


def test_ci_runs_on_the_oldest_and_newest_python() -> None:
    document = load_workflow(WORKFLOWS_DIR / "ci.yml")
    versions = document["jobs"]["test"]["strategy"]["matrix"]["python-version"]
    requires = {
        tomllib.loads((REPO_ROOT / "packages" / name / "pyproject.toml").read_text("utf-8"))["project"][
            "requires-python"
        ]
        for name in ("core", "cli", "server", "eval")
    }
    assert requires == {">=3.11"}
    assert versions == ["3.11", "3.13"]


def test_ci_runs_every_test_file() -> None:
    """Each test folder and each top-level test module is handed to pytest by some CI step."""
    given = pytest_paths(WORKFLOWS_DIR / "ci.yml")
    expected = {
        str(p.relative_to(REPO_ROOT))
        for p in (REPO_ROOT / "tests").iterdir()
        if (p.is_dir() and any(p.glob("test_*.py"))) or (p.is_file() and re.fullmatch(r"test_.*\.py", p.name))
    }
    assert expected - given == set()


def _steps(path: Path, job: str) -> list[dict[str, Any]]:
    return load_workflow(path)["jobs"][job]["steps"]


def _scripts(path: Path, job: str) -> str:
    return "\n".join(str(step.get("run", "")) for step in _steps(path, job))


def test_ci_checks_lock_lint_types_and_builds() -> None:
    scripts = _scripts(WORKFLOWS_DIR / "ci.yml", "test")
    for needed in ("uv lock --check", "uv sync --frozen", "ruff check", "pyright", "uv build --all-packages"):
        assert needed in scripts, needed
    docker = _scripts(WORKFLOWS_DIR / "ci.yml", "docker")
    assert "hadolint" in docker and "docker compose up --build" in docker and "mcp_smoke.py" in docker


def test_docs_index_restores_by_prefix_saves_and_uploads() -> None:
    steps = _steps(WORKFLOWS_DIR / "docs-index.yml", "index")
    uses = {step["uses"].split("@")[0]: step for step in steps if "uses" in step}
    restore, save = uses["actions/cache/restore"], uses["actions/cache/save"]
    assert restore["with"]["restore-keys"] == "docs-mcp-"
    assert restore["with"]["key"] == save["with"]["key"]
    assert restore["with"]["key"].startswith("docs-mcp-${{ github.run_id }}")
    assert restore["with"]["path"] == save["with"]["path"]
    upload = uses["actions/upload-artifact"]
    assert upload["with"]["include-hidden-files"] is True  # the index lives in .lancedb/
    names = [step.get("uses", "").split("@")[0] or step.get("run", "") for step in steps]
    order = [
        next(i for i, n in enumerate(names) if marker in n)
        for marker in ("actions/cache/restore", "docs-mcp validate", "docs-mcp build", "actions/cache/save")
    ]
    assert order == sorted(order), "restore, validate, build, save"


def test_release_publishes_with_trusted_publishing_on_tags() -> None:
    document = load_workflow(WORKFLOWS_DIR / "release.yml")
    assert triggers(document) == {"push": {"tags": ["v*"]}}
    publish = document["jobs"]["publish"]
    assert publish["permissions"]["id-token"] == "write"
    assert publish["needs"] == "build"
    assert "uv publish --trusted-publishing always" in _scripts(WORKFLOWS_DIR / "release.yml", "publish")
    build = _scripts(WORKFLOWS_DIR / "release.yml", "build")
    assert "uv build --all-packages" in build
    assert 'bump_version.py --check "${GITHUB_REF_NAME#v}"' in build
    # Only the publish job can mint an OIDC token.
    assert "id-token" not in (document["jobs"]["build"].get("permissions") or {})


# --- the checker itself -----------------------------------------------------------------------------


def test_shell_commands_split_like_a_shell() -> None:
    script = (
        'provider=none\nif [ -n "${OPENAI_API_KEY:-}" ]; then provider=openai; fi\n'
        'uv run --frozen docs-mcp build \\\n  --docs-dir "$DOCS_DIR" --out ${{ env.X }} # comment\n'
        'a && b | c; FOO=1 d --flag ${MODEL:+--model "${MODEL}"}'
    )
    assert shell_commands(script) == [
        ["uv", "run", "--frozen", "docs-mcp", "build", "--docs-dir", "$DOCS_DIR", "--out", "GH_EXPRESSION"],
        ["a"],
        ["b"],
        ["c"],
        ["d", "--flag", "--model", "${MODEL}"],
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ("uv run --frozen docs-mcp biuld --docs-dir d --out o", "no subcommand 'biuld'"),
        (
            "uv run docs-mcp build --docs-dir d --out o --embeding-provider none",
            "no option --embeding-provider",
        ),
        ("docs-mcp build --docs-dir d", "misses required --out"),
        ("docs-mcp search --index-dir i retry again", "takes 1 positional"),
        ("docs-mcp-server --index-dir i --transprot http", "no option --transprot"),
        ("docs-mcp-eval runn --cases c", "no subcommand 'runn'"),
        ("uv sync --frozzen", "`uv sync` has no option --frozzen"),
        ("uv biuld --all-packages", "not a uv command"),
        ("uv run --frozen pytest tests/nowhere", "does not collect"),
        ("uv run --frozen ruff chek .", "neither a path nor a subcommand"),
        ("uv run --frozen python -m compileal -q packages", "does not run in the project environment"),
        ("uv run --frozen python -m compileall --quiet packages", "has no option --quiet"),
        ("uv run --frozen scripts/missing.py", "no such file"),
        ("uv run --frozen scripts/bump_version.py --chek", "no option --chek"),
    ],
)
@pytest.mark.integration
def test_the_checker_catches_mistakes(script: str, problem: str) -> None:
    checker = CommandChecker()
    for command in shell_commands(script):
        checker.check(command, "here")
    assert any(problem in text for text in checker.problems), checker.problems


@pytest.mark.slow
@pytest.mark.integration
def test_the_checker_accepts_valid_commands() -> None:
    checker = CommandChecker()
    script = (
        "uv run --frozen docs-mcp build --docs-dir d --out o --embedding-provider none\n"
        "docs-mcp search --index-dir i --limit 3 retry\n"
        "docs-mcp-server --index-dir /index --transport http --host 0.0.0.0 --port 20310\n"
        "docs-mcp-eval run --help\n"
        "uv run --frozen ruff check .\nuv run --frozen hadolint --failure-threshold style Dockerfile\n"
        "uv pip install --python p --no-deps w.whl\nuv build --package docs-mcp-core --out-dir d"
    )
    for command in shell_commands(script):
        checker.check(command, "here")
    assert checker.problems == []
    assert len(checker.checked) == 8


def iter_workflow_commands() -> Iterator[tuple[RunStep, list[str]]]:
    for path in WORKFLOWS:
        for step in run_steps(path):
            for command in shell_commands(step.script):
                yield step, command
