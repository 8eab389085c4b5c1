"""Reusing the previous index for files that did not change.

A rebuild reads the chunks of the index it replaces, grouped by file with each file's fingerprint
(strategy, metadata and source; :func:`~docs_mcp_core.corpus.file_fingerprint`). A file whose
fingerprint is unchanged keeps its chunks and title without being parsed again
(:func:`reuse_unchanged_file`), and its chunks keep their derived search columns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from docs_mcp_core.chunking import MAX_HEADING_LENGTH, Chunk
from docs_mcp_core.corpus import BOM, ManifestResolver, file_fingerprint, read_markdown
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.errors import FindingError, YamlExpansionError
from docs_mcp_core.metadata import METADATA_FILENAME
from docs_mcp_core.yaml_load import load_yaml

__all__ = ["previous_titles", "reuse_unchanged_file", "scan_front_matter"]


def scan_front_matter(markdown: str) -> dict[str, Any] | None:
    """The YAML mapping between a leading ``---`` line and the next ``---`` line (``{}`` when
    empty), or ``None`` when the file does not look that simple."""
    lines = markdown.split("\n")
    if lines[0].rstrip("\r") != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            try:
                data = load_yaml("\n".join(lines[1:i]))
            except (yaml.YAMLError, YamlExpansionError):
                return None
            if data is None:
                return {}
            return {str(k): v for k, v in data.items()} if isinstance(data, dict) else None
    return None


def reuse_unchanged_file(
    docs_dir: Path, rel: str, resolver: ManifestResolver, entry: tuple[str, list[Chunk]], title: str | None
) -> ChunkedFile | None:
    """The previous build's result for an unchanged file, without parsing it.

    Front matter is read with a light scan instead of the markdown parser. Whatever that scan
    gets wrong can only change the configuration, hence the fingerprint, so such a file is parsed
    as usual (and its errors reported there).
    """
    try:
        markdown = read_markdown(docs_dir, rel)  # a regular file still (not a pipe it would wait on)
    except FindingError:
        return None  # parsed as usual, which reports it
    if markdown.startswith(BOM):
        return None  # parsed again, so validate's warning about the mark is reported again
    front_matter: dict[str, Any] | None = None
    if markdown.startswith("---"):
        front_matter = scan_front_matter(markdown)
        if front_matter is None:
            return None
    try:
        manifest, config = resolver.configure(rel, markdown, front_matter=front_matter or None, first_h1=None)
    except Exception:  # noqa: BLE001 - the parser path reports it with file and line
        return None
    fingerprint = file_fingerprint(config.strategy, config.metadata, markdown)
    if fingerprint != entry[0]:
        return None
    chunks = entry[1]
    if any(len(chunk.heading) >= MAX_HEADING_LENGTH for chunk in chunks):
        return None  # parsed again: its warning is reported again, an earlier build's uncut ids are not kept
    return ChunkedFile(
        relpath=rel,
        chunks=chunks,
        chunk_count=len(chunks),
        strategy=config.strategy,
        metadata=config.metadata,
        title=title,
        fingerprint=fingerprint,
        manifest_path=manifest.path if manifest else None,
        size_bytes=len(markdown.encode("utf-8")),
    )


def previous_titles(out_dir: Path) -> dict[str, str]:
    try:
        data = json.loads((out_dir / METADATA_FILENAME).read_text(encoding="utf-8"))
        files = data.get("files") or {}
        return {
            k: v["title"] for k, v in files.items() if isinstance(v, dict) and isinstance(v.get("title"), str)
        }
    except (OSError, ValueError, AttributeError, RecursionError):
        return {}
