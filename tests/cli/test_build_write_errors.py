"""``docs-mcp build`` into an ``--out`` it cannot write: one ``error:`` line naming the path, what
is wrong and what to do, exit 1, never the "failed unexpectedly ... please report" of a bug, and
the previous index untouched."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.programs import cli_env, docs_mcp_command, run_docs_mcp, run_in_private_mount

pytestmark = pytest.mark.integration  # starts processes

_PAGE = "# A\n\n## Lighthouse\n\nThe keeper trims the wick.\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / ".docs-mcp.json").write_text('{"version": "1"}', encoding="utf-8")
    (folder / "a.md").write_text(_PAGE, encoding="utf-8")
    return folder


def test_an_out_below_a_file_is_a_clear_error(tmp_path: Path, docs: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    out = tmp_path / "notes.txt" / "index"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (
        f"error: cannot write {out}: a folder on its path is a file (Not a directory); "
        "choose an --out whose parent folders are folders (the previous index, if any, is untouched)"
    )
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.parametrize("shape", ["symlink loop", "tab", "newline", "long name", "not UTF-8"])
def test_an_out_that_cannot_be_a_folder_is_a_clear_error(tmp_path: Path, docs: Path, shape: str) -> None:
    # each ended with "build failed unexpectedly: RuntimeError / ValueError / OSError ... report this"
    if shape == "symlink loop":
        (tmp_path / "one").symlink_to(tmp_path / "two")
        (tmp_path / "two").symlink_to(tmp_path / "one")
        out, expected = tmp_path / "one", "leads round a loop of symbolic links; point it at a folder"
    elif shape == "long name":
        out, expected = tmp_path / ("x" * 300), "a name on its path is too long"
    elif shape == "not UTF-8":  # argv bytes such as \xff
        out, expected = (
            tmp_path / "o\udcff",
            "is not valid UTF-8, and LanceDB opens tables by UTF-8 paths only",
        )
    else:
        out = tmp_path / ("a\tb" if shape == "tab" else "a\nb")
        expected = "holds a control character (a newline, a tab), in which LanceDB cannot open a table"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr and "unexpectedly" not in done.stderr
    assert not os.path.exists(out)  # nothing created (False for the loop, too)


@pytest.mark.parametrize("shape", ["symlink loop", "long name"])
def test_a_cache_dir_that_cannot_be_a_folder_is_a_clear_error(tmp_path: Path, docs: Path, shape: str) -> None:
    # "build failed unexpectedly: RuntimeError: Symlink loop from ...; please report this"
    (tmp_path / "one").symlink_to(tmp_path / "two")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    if shape == "symlink loop":
        cache = tmp_path / "one" / "cache"
        expected = f"--cache-dir '{cache}' leads round a loop of symbolic links; point it at a folder"
    else:
        cache = tmp_path / ("x" * 300)
        expected = f"--cache-dir '{str(cache)[:200]}... ({len(str(cache))} characters)': a name on its path is too long"
    out = tmp_path / "out"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out, "--cache-dir", cache)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error: {expected}") and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.endswith(" (the previous index, if any, is untouched)\n")
    assert not out.exists()


_READ_ONLY_DISK = r"""
set -u
mount -t tmpfs -o size=4m tmpfs "$1" || exit 77
"$2" build --docs-dir "$3" --out "$1/out" >/dev/null 2>&1 || { echo "first build failed"; exit 1; }
before=$(cd "$1/out" && find . -type f | sort | xargs sha256sum)
mount -o remount,ro "$1" || exit 77
echo "## More" >> "$3/a.md"
"$2" build --docs-dir "$3" --out "$1/out" >/dev/null 2>"$1/../stderr-old"
echo "rc=$?"
"$2" build --docs-dir "$3" --out "$1/new" >/dev/null 2>"$1/../stderr-new"
echo "rc=$?"
after=$(cd "$1/out" && find . -type f | sort | xargs sha256sum)
[ "$before" = "$after" ] && echo "old index unchanged"
ls -A "$1"
"""


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a private tmpfs")
@pytest.mark.skipif(len(docs_mcp_command()) != 1, reason="needs the installed docs-mcp script")
def test_a_read_only_disk_is_a_clear_error_and_keeps_the_old_index(tmp_path: Path, docs: Path) -> None:
    """A real read-only disk: a tmpfs in a private user and mount namespace, remounted read-only
    after a first build; a rebuild into it and a new build on it are refused with advice."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = [_READ_ONLY_DISK, "sh", str(disk), docs_mcp_command()[0], str(docs)]
    done = run_in_private_mount(script)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["rc=1", "rc=1", "old index unchanged", "out"]
    advice = "the disk is mounted read-only (Read-only file system); build into a folder on a writable disk (--out)"
    rebuild = (tmp_path / "stderr-old").read_text(encoding="utf-8")
    assert f"error: cannot write {disk / 'out'}" in rebuild and advice in rebuild, rebuild
    new = (tmp_path / "stderr-new").read_text(encoding="utf-8")
    assert f"error: cannot write {disk / 'new'}: {advice}" in new, new
    for stderr in (rebuild, new):
        assert "unexpectedly" not in stderr and "Traceback" not in stderr


@pytest.mark.skipif(shutil.which("sh") is None, reason="closes a descriptor with a POSIX shell")
@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_a_build_started_without_stdout_or_stderr_writes_its_index(
    tmp_path: Path, docs: Path, closed: str
) -> None:
    # no stderr left sys.stderr None: the progress reporter failed and nothing was built (status 1);
    # no stdout: the index was written, then the exit's flush raised (a traceback, status 1)
    out = tmp_path / "out"
    script = f'exec "$@" {closed}'
    command = [*docs_mcp_command(), "build", "--docs-dir", str(docs), "--out", str(out)]
    done = subprocess.run(
        ["sh", "-c", script, "sh", *command], capture_output=True, timeout=180, env=cli_env()
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    assert (out / "metadata.json").is_file()


@pytest.mark.parametrize(
    "flag",
    ["--description", "--tool-description-search", "--tool-description-get-doc", "--mcp-server-instructions"],
)
def test_a_text_flag_that_is_not_utf8_is_a_usage_error(tmp_path: Path, docs: Path, flag: str) -> None:
    # argv bytes that are not UTF-8 reached metadata.json: "build failed unexpectedly: UnicodeEncodeError"
    out = tmp_path / "out"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out, flag, "x\udcff")
    assert done.returncode == 2, done.stderr
    said = " ".join(re.sub(r"[│╭╮╰╯─]", " ", done.stderr).split())
    assert f"Invalid value for '{flag}': the text is not valid UTF-8; give it as UTF-8" in said
    assert not out.exists()


def test_server_instructions_longer_than_every_client_should_receive_are_a_usage_error(
    tmp_path: Path, docs: Path
) -> None:
    # 100 KB of --mcp-server-instructions went into every client's initialize answer
    out = tmp_path / "out"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out, "--mcp-server-instructions", "x" * 100_000)
    assert done.returncode == 2, done.stderr
    said = " ".join(re.sub(r"[│╭╮╰╯─]", " ", done.stderr).split())
    assert (
        "Invalid value for '--mcp-server-instructions': the text is 100,000 characters long; at most 32,768"
        in said
    )
    assert not out.exists()
