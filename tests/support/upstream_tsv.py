"""Reading ``../shared/spec/sdk-docs.upstream-chunks.tsv``: every chunk the original produces."""

from __future__ import annotations

from pathlib import Path

_ESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def unescape(field: str) -> str:
    """Undo the file's escapes (backslash, tab, newline and carriage return inside a field)."""
    out: list[str] = []
    i = 0
    while i < len(field):
        if field[i] == "\\" and i + 1 < len(field):
            out.append(_ESCAPES.get(field[i + 1], field[i + 1]))
            i += 2
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def read_upstream_chunks(path: Path) -> list[tuple[str, ...]]:
    """Rows (id, file, index, level, UTF-16 length, sha256[:12], breadcrumb), header dropped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [tuple(unescape(f) for f in line.split("\t")) for line in lines[1:]]
