"""Private hard-linked snapshots of a local index, so that a rebuild never pulls files from under a call.

``docs-mcp build --out OUT`` swaps a new index into the folder being served by renames and then
deletes the previous table (see ``docs/builds.md``). LanceDB reads a table's data files by path,
when a query needs them, so an engine opened on ``OUT/.lancedb`` before the swap would afterwards
find the new table's files there (or none at all) and fail.

The server therefore opens every generation of a local index from a snapshot:
``OUT/.docs-mcp-serving/<host>-<pid>-<n>/`` holds hard links to that generation's ``metadata.json``
and to every file of the table it names. Hard links cost no space while the build keeps the files,
keep them readable after the build has deleted its copies, and never change (LanceDB writes new
files rather than rewriting old ones). The snapshot is removed once no call uses its generation;
snapshots left by a server that was killed are removed by the next server started on the same
host. Where hard links cannot be made (a read-only folder, files owned by another user, a platform
without ``os.fwalk``) the index is opened in place, as before.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from docs_mcp_core.index.private_copies import host_name, parse_pid, process_exists

SNAPSHOT_DIRNAME = ".docs-mcp-serving"
METADATA_FILENAME = "metadata.json"
DEFAULT_TABLE_PATH = ".lancedb"
_ATTEMPTS = 3  # a build swapping meanwhile makes files vanish mid-walk: try again on what is there now
_HOST = host_name()  # with the pid namespace: a container sharing the folder and the host name

_numbers = itertools.count(1)


class _Vanished(Exception):
    """A file disappeared while it was being linked (a build is swapping the index)."""


@dataclass(frozen=True)
class Snapshot:
    """A folder of hard links to one generation of an index (open it like the index itself)."""

    path: Path

    def stamp(self) -> tuple[int, int, int]:
        """Identity of the snapshot's ``metadata.json``: the same as the served file's when linked."""
        st = os.stat(self.path / METADATA_FILENAME)
        return (st.st_mtime_ns, st.st_ino, st.st_size)

    def remove(self) -> None:
        remove_snapshot(self.path)


def remove_snapshot(path: Path) -> None:
    """Delete a snapshot folder, and the snapshots folder with it when that is left empty."""
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        path.parent.rmdir()


def take_snapshot(index_dir: Path) -> Snapshot | None:
    """Hard-link the generation of the index now in ``index_dir`` into a new snapshot.

    None when links cannot be made here (the caller then opens the index in place).
    """
    if not hasattr(os, "fwalk"):
        return None
    root = index_dir / SNAPSHOT_DIRNAME
    for _ in range(_ATTEMPTS):
        target = root / f"{_HOST}-{os.getpid()}-{next(_numbers)}"
        try:
            root.mkdir(exist_ok=True)
            target.mkdir()
        except OSError:
            return None
        try:
            _link_generation(index_dir, target)
        except _Vanished:
            remove_snapshot(target)
            continue
        except OSError:
            remove_snapshot(target)
            return None
        return Snapshot(target)
    return None


def take_view(index_dir: Path) -> Snapshot | None:
    """For a folder a build was stopped in mid-swap, where links cannot be made: a private folder
    outside it (in the temporary directory) holding a copy of the complete index's
    ``metadata.json`` and a symbolic link to its table folder, for the index to be opened from
    there, read-only, under the usual names. None for a folder that is not mid-swap."""
    from docs_mcp_core.index.live_files import live_files
    from docs_mcp_core.index.private_copies import make_private_folder

    files = live_files(index_dir)
    if not files.mid_swap:
        return None
    data = (index_dir / files.metadata).read_bytes()
    if _table_path(data) != DEFAULT_TABLE_PATH:
        return None
    folder = make_private_folder() / "index"
    try:
        folder.mkdir()
        (folder / METADATA_FILENAME).write_bytes(data)
        (folder / DEFAULT_TABLE_PATH).symlink_to(
            (index_dir / files.table).resolve(), target_is_directory=True
        )
    except OSError:
        remove_snapshot(folder)
        raise
    return Snapshot(folder)


def remove_stale_snapshots(index_dir: Path) -> None:
    """Remove snapshots that servers on this host left behind when they were killed."""
    root = index_dir / SNAPSHOT_DIRNAME
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        host, _, rest = entry.name.rpartition("-")
        host, _, pid_text = host.rpartition("-")
        pid = parse_pid(pid_text)
        if host != _HOST or pid is None or not (rest.isascii() and rest.isdigit()):
            continue  # another host's (a shared folder) or not ours at all
        if pid != os.getpid() and not process_exists(pid):
            shutil.rmtree(entry.path, ignore_errors=True)
    with contextlib.suppress(OSError):
        root.rmdir()


def _link_generation(index_dir: Path, target: Path) -> None:
    """Link ``metadata.json``, then the table folder it names (so the pair belongs together).

    In a folder a build was stopped in mid-swap, the files that form the complete index
    (:func:`docs_mcp_core.index.live_files.live_files`) are linked under the usual names: the
    snapshot is then an ordinary index, and the folder itself is left as it is for the next build."""
    from docs_mcp_core.index.live_files import live_files

    files = live_files(index_dir)
    try:
        os.link(index_dir / files.metadata, target / METADATA_FILENAME)
    except FileNotFoundError as exc:
        if files.mid_swap or (index_dir / files.metadata).exists():
            raise _Vanished from exc
        raise
    table_path = _table_path((target / METADATA_FILENAME).read_bytes())
    if table_path is None:
        raise OSError("metadata.json does not name a table folder inside the index folder")
    source = index_dir / (files.table if table_path == DEFAULT_TABLE_PATH else table_path)
    if not _inside(source, index_dir) or _inside(source, index_dir / SNAPSHOT_DIRNAME):
        raise OSError(f"the table folder {table_path!r} is not inside the index folder")
    _link_tree(source, target / table_path)
    if files.mid_swap and live_files(index_dir) != files:
        raise _Vanished  # a build moved the files meanwhile: link what is there now


def _table_path(metadata: bytes) -> str | None:
    """``index.path`` of a metadata.json document (``.lancedb`` when absent), None when unreadable.

    Parsed as the engine parses it: the same bytes were read at start-up and are not parsed again.
    """
    from docs_mcp_core.errors import MetadataError
    from docs_mcp_core.metadata import parse_metadata_bytes

    try:
        path = parse_metadata_bytes(metadata, METADATA_FILENAME).index.path
    except (MetadataError, RecursionError):
        return None
    return path.strip() or DEFAULT_TABLE_PATH


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link every file under ``source`` into ``target``, through directory descriptors, so
    that a folder renamed meanwhile is still read as one and the same folder."""
    target.mkdir(parents=True, exist_ok=True)
    walked = False
    try:
        for dirpath, _dirnames, filenames, dirfd in os.fwalk(source):
            walked = True
            relative = os.path.relpath(dirpath, source)
            folder = target if relative == "." else target / relative
            folder.mkdir(parents=True, exist_ok=True)
            for name in filenames:
                os.link(name, folder / name, src_dir_fd=dirfd)
    except FileNotFoundError as exc:
        raise _Vanished from exc
    if not walked:  # os.fwalk is silent about a missing top folder
        raise _Vanished if not source.exists() else OSError(f"cannot read {source}")
