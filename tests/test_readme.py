"""The README as a new user follows it: its Python example works as written, it leaves the index the
shell commands built alone, and what the examples write into a checkout is ignored by git."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(README) if lang == language]


def _python_example() -> str:
    (example,) = [block for block in _blocks("python") if "build_index(" in block]
    return example


def _shell_outputs() -> set[str]:
    """The folders and files the README's shell commands write (``--out``, ``--work-dir``)."""
    text = "\n".join(_blocks("bash"))
    return {m.group(2) for m in re.finditer(r"--(out|work-dir) (\S+)", text)}


def _python_outputs() -> set[str]:
    return set(re.findall(r'out_dir=Path\("([^"]+)"\)', _python_example()))


def _normal(path: str) -> str:
    return path.removeprefix("./").rstrip("/")


def test_the_python_example_builds_into_a_folder_of_its_own() -> None:
    shell = {_normal(p) for p in _shell_outputs()}
    python = {_normal(p) for p in _python_outputs()}
    assert "idx" in shell and python
    assert not python & shell, "the Python example would rebuild an index the shell commands built"


def test_the_python_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").symlink_to(REPO_ROOT / "examples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_python_example(), "README.md", "exec"), {"__name__": "readme"})
    lines = printed.getvalue().splitlines()
    score, chunk_id = lines[0].split()
    assert float(score) > 0 and "retr" in chunk_id  # retries, or retry configuration
    assert "--- Chunk: sdks/python/README.md#tidewater/retries (Chunk " in printed.getvalue()
    assert [p.name for p in tmp_path.iterdir() if p.name != "examples"] == [
        _normal(p) for p in _python_outputs()
    ]


def test_what_the_examples_write_into_the_checkout_is_ignored_by_git() -> None:
    written = (_normal(p) for p in _shell_outputs() | _python_outputs() if not p.startswith(("/", "$")))
    relative = sorted(p if p.endswith(".json") else f"{p}/" for p in written)  # files, else folders
    assert {"idx/", "run.json"} <= set(relative)
    try:
        ignored = subprocess.run(
            ["git", "check-ignore", "--no-index", *relative],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except FileNotFoundError:
        pytest.skip("git is not installed")
    if ignored.returncode == 128:
        pytest.skip(f"not a git checkout: {ignored.stderr.strip()}")
    assert sorted(ignored.stdout.split()) == relative
