"""A digest of every file under a folder: what tests compare to prove a failed build changed nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_digests(folder: Path) -> dict[str, str]:
    """The SHA-256 of every file under ``folder``, by its path relative to it."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
