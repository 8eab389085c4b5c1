"""Temporary folders a process copies an index into, named after the process that made them.

A server that reads its index from object storage without a cache folder of its own, and
``docs-mcp`` commands given an index URI, copy the published generation into a private temporary
folder and remove it when they exit. A process that is killed (``kill -9``, the OOM killer, a
container runtime's grace period running out) cannot, and its copy (the whole index) would stay in
the temporary directory for ever. So each folder is named ``docs-mcp-index-<host>-<pid>-<random>``
and :func:`make_private_folder` first removes the folders of processes of this host that no longer
run: the next process started cleans up after the one that was killed. ``<host>`` names the pid
namespace too (:func:`host_name`): containers that share a host name and a temporary directory
but not their process ids (two containers of one pod) must not take each other's processes for dead.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path

__all__ = [
    "HOST",
    "PREFIX",
    "host_name",
    "make_private_folder",
    "parse_pid",
    "process_exists",
    "remove_dead_copies",
]


def host_name() -> str:
    """This host's name and, where the system shows one, its pid namespace (``vm_ns4026531836``):
    the processes whose ids :func:`process_exists` can see."""
    name = socket.gethostname().replace(os.sep, "_") or "localhost"
    try:
        return f"{name}_ns{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:  # no /proc (macOS, Windows): one namespace per host
        return name


PREFIX = "docs-mcp-index-"
HOST = host_name().replace("-", "_")
_UID = os.getuid() if hasattr(os, "getuid") else 0
_PID_LIMIT = 2**31  # process ids are C ints; a larger number is no process's


def make_private_folder(root: Path | None = None) -> Path:
    """A new empty folder for this process's copy (in ``root``, default the temporary directory),
    after removing the copies that dead processes of this host left there."""
    parent = Path(root) if root is not None else Path(tempfile.gettempdir())
    remove_dead_copies(parent)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{HOST}-{os.getpid()}-", dir=parent))


def remove_dead_copies(root: Path) -> list[Path]:
    """Remove the folders in ``root`` that this module made for processes of this host that no
    longer run; the folders removed. Other hosts' folders (a shared temporary directory), other
    users', symbolic links and anything not named as this module names its folders are left alone."""
    removed: list[Path] = []
    own = f"{PREFIX}{HOST}-"
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(own):
            continue
        pid_text, _, rest = entry.name[len(own) :].partition("-")
        pid = parse_pid(pid_text)
        if pid is None or not rest or pid == os.getpid():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != _UID or process_exists(pid):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        if not os.path.lexists(entry.path):
            removed.append(Path(entry.path))
    return removed


def parse_pid(text: str) -> int | None:
    """The process id a folder name gives (ASCII digits, below 2**31), else None: "²" and "١٢" are
    digits to ``str.isdigit``, and a larger number would make :func:`process_exists` raise."""
    if not (text.isascii() and text.isdigit()):
        return None
    pid = int(text)
    return pid if pid < _PID_LIMIT else None


def process_exists(pid: int) -> bool:
    """Whether a process ``pid`` runs on this host (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but belongs to someone else
        return True
    return True
