"""A killed process's private copy of an index is removed by the next process on the host."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from docs_mcp_core.index.private_copies import HOST, PREFIX, make_private_folder, remove_dead_copies


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    return child.pid  # reaped: no process has it now (unless the kernel hands it out again at once)


@pytest.mark.integration  # starts a process (for a pid that no longer runs)
def test_the_next_process_removes_the_copies_of_dead_ones_and_only_those(tmp_path: Path) -> None:
    dead = _dead_pid()
    left = tmp_path / f"{PREFIX}{HOST}-{dead}-abc123"
    (left / ".lancedb").mkdir(parents=True)
    (left / "metadata.json").write_text("{}")
    alive = tmp_path / f"{PREFIX}{HOST}-{os.getppid()}-def456"  # our parent runs
    elsewhere = tmp_path / f"{PREFIX}otherhost-{dead}-ghi789"  # a shared /tmp: another host's
    unrelated = tmp_path / f"{PREFIX}{HOST}-notapid-x"
    for folder in (alive, elsewhere, unrelated):
        folder.mkdir()
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("data")
    link = tmp_path / f"{PREFIX}{HOST}-{dead}-link"
    link.symlink_to(precious, target_is_directory=True)

    mine = make_private_folder(tmp_path)

    assert mine.is_dir() and mine.name.startswith(f"{PREFIX}{HOST}-{os.getpid()}-")
    assert not left.exists()
    assert alive.is_dir() and elsewhere.is_dir() and unrelated.is_dir()
    assert link.is_symlink() and (precious / "keep.txt").read_text() == "data"
    assert remove_dead_copies(tmp_path) == []  # our own folder stays while we run
    assert mine.is_dir()


def test_a_missing_temporary_directory_removes_nothing(tmp_path: Path) -> None:
    assert remove_dead_copies(tmp_path / "absent") == []


@pytest.mark.parametrize("number", ["99999999999999999999", "4294967296", "\u00b2", "\u0661\u0662"])
def test_a_folder_named_with_a_number_no_process_has_is_left_alone(tmp_path: Path, number: str) -> None:
    # such a name (anyone may create folders in the temporary directory) made os.kill or int()
    # raise, and every server copying an index on the host failed to start
    odd = tmp_path / f"{PREFIX}{HOST}-{number}-abc123"
    odd.mkdir()
    mine = make_private_folder(tmp_path)
    assert mine.is_dir() and odd.is_dir()


@pytest.mark.integration  # starts a process (for a pid that no longer runs)
@pytest.mark.skipif(not os.path.exists("/proc/self/ns/pid"), reason="no pid namespaces to tell apart")
def test_a_copy_of_another_pid_namespace_with_this_host_name_is_left_alone(tmp_path: Path) -> None:
    # a container sharing the temporary directory and the host name sees none of this one's
    # processes: it took this process's live copy for a dead one's and removed it
    plain = socket.gethostname().replace(os.sep, "_").replace("-", "_") or "localhost"
    other = tmp_path / f"{PREFIX}{plain}-{_dead_pid()}-abc123"
    other.mkdir()
    make_private_folder(tmp_path)
    assert other.is_dir()
