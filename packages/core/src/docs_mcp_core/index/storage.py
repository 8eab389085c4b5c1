"""The small file interface of an index location (:class:`IndexStorage`) and its local-folder back end.

``metadata.json``, ``chunks.json`` and the build lock go through it; the LanceDB table is read and
written by LanceDB's own storage layer. :mod:`docs_mcp_core.index.s3` is the object-store back end,
and :func:`docs_mcp_core.index.location.open_storage` picks one for a location.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["IndexStorage", "LocalStorage", "ObjectInfo"]


@dataclass(frozen=True)
class ObjectInfo:
    """One file of a location: its path (relative to what was listed), size and version tag."""

    path: str
    size: int
    etag: str | None = None
    modified: datetime | None = None


class IndexStorage:
    """The files of one index location (a folder, or an object-store prefix)."""

    location: str
    remote: bool = False

    @property
    def lance_options(self) -> dict[str, str]:
        """``storage_options`` for ``lancedb.connect`` (empty for a local folder)."""
        return {}

    def uri(self, name: str) -> str:
        """Path or URI of ``name`` inside this location (what ``lancedb.connect`` takes)."""
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes:
        """The object's content; raises :class:`FileNotFoundError` when it does not exist."""
        raise NotImplementedError

    def read_if_changed(self, name: str, etag: str | None) -> tuple[bytes, str | None] | None:
        """``(content, version tag)`` of ``name``, or None when its tag is still ``etag``.

        Raises :class:`FileNotFoundError` when it does not exist.
        """
        data = self.read_bytes(name)
        tag = hashlib.sha256(data).hexdigest()
        return None if tag == etag else (data, tag)

    def write_bytes(self, name: str, data: bytes) -> None:
        raise NotImplementedError

    def upload(self, local: Path, name: str) -> None:
        """Copy the local file ``local`` to ``name`` (streamed)."""
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        """Whether ``name`` exists, as an object/file or as a non-empty prefix/folder."""
        raise NotImplementedError

    def list_names(self) -> list[str]:
        """Names of the entries directly inside this location (objects and prefixes)."""
        raise NotImplementedError

    def list_files(self, name: str) -> list[ObjectInfo]:
        """Every file below ``name`` (paths relative to ``name``), in path order."""
        raise NotImplementedError

    def remove_tree(self, name: str) -> None:
        """Delete ``name`` and everything below it (no error if absent)."""
        raise NotImplementedError

    def size(self, name: str) -> int:
        """Total bytes of ``name`` and everything below it (0 when absent)."""
        return sum(info.size for info in self.list_files(name))

    def bucket_exists(self) -> bool:
        """Whether the location's bucket (an object store) or parent folder (local) exists."""
        raise NotImplementedError


class LocalStorage(IndexStorage):
    """An index folder on the local file system."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)

    def uri(self, name: str) -> str:
        return str(self.root / name)

    def read_bytes(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def write_bytes(self, name: str, data: bytes) -> None:
        (self.root / name).write_bytes(data)

    def upload(self, local: Path, name: str) -> None:
        shutil.copyfile(local, self.root / name)

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def list_names(self) -> list[str]:
        try:
            return sorted(p.name for p in self.root.iterdir())
        except OSError:
            return []

    def list_files(self, name: str) -> list[ObjectInfo]:
        top = self.root / name
        if top.is_file():
            return [ObjectInfo("", top.stat().st_size)]
        found: list[ObjectInfo] = []
        for dirpath, _dirs, files in os.walk(top):
            for file in files:
                path = os.path.join(dirpath, file)
                try:
                    size = os.path.getsize(path)
                except OSError:
                    continue
                found.append(ObjectInfo(os.path.relpath(path, top).replace(os.sep, "/"), size))
        return sorted(found, key=lambda info: info.path)

    def remove_tree(self, name: str) -> None:
        path = self.root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

    def bucket_exists(self) -> bool:
        return self.root.parent.exists()
