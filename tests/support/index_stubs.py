"""Index folders with a ``metadata.json`` and no searchable table, for tests that need no search."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def metadata_document(**overrides: Any) -> dict[str, Any]:
    """A small valid metadata.json document (original layout) for tests that need no search."""
    doc: dict[str, Any] = {
        "metadata_version": "1.1.0",
        "corpus_description": "Tidewater SDK docs",
        "taxonomy": {
            "language": {"values": ["typescript", "go", "python"]},
            "scope": {
                "description": "Documentation scope.",
                "values": ["sdk-specific", "global-guide"],
                "properties": {"global-guide": {"mcp_resource": True}},
            },
        },
        "stats": {"total_chunks": 2, "total_files": 2, "indexed_at": "2026-02-22T00:00:00Z"},
        "embedding": None,
    }
    doc.update(overrides)
    return doc


def write_index_stub(
    folder: Path, document: dict[str, Any] | str | None = None, *, table: bool = True
) -> Path:
    """An index folder with ``metadata.json`` and (optionally) an empty ``.lancedb/chunks.lance`` dir."""
    folder.mkdir(parents=True, exist_ok=True)
    body = document if isinstance(document, str) else json.dumps(document or metadata_document())
    (folder / "metadata.json").write_text(body, encoding="utf-8")
    if table:
        (folder / ".lancedb" / "chunks.lance").mkdir(parents=True, exist_ok=True)
    return folder
