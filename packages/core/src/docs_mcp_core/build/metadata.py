"""Assembling a build's ``metadata.json``: taxonomy, statistics, embedding, prompts, texts, titles.

The taxonomy holds every metadata value of every chunk, by key, with the configuration of the
manifests that govern at least one file (their union, in the order files first meet them: the
original's order, which also decides which manifest's ``mcpServerInstructions`` win). The result is
normalised and checked by :func:`docs_mcp_core.metadata.normalize_metadata`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docs_mcp_core.build.options import BuildOptions
from docs_mcp_core.corpus import ManifestEntry, ManifestResolver
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.embedding import EmbeddingProvider
from docs_mcp_core.embedding.local import resolve_local_model
from docs_mcp_core.index.live_files import LANCEDB_DIRNAME, TABLE_NAME
from docs_mcp_core.manifest import AutoIncludeConfig
from docs_mcp_core.prompts import PromptDefinition

__all__ = ["git_source_commit", "metadata_document"]

_SHA_RE = re.compile(r"^[0-9a-f]{40}$")


def git_source_commit(docs_dir: Path) -> str | None:
    """The commit checked out in ``docs_dir`` when it is in a git work tree (else ``None``)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(docs_dir), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip().lower()
    return sha if out.returncode == 0 and _SHA_RE.match(sha) else None


def governing_manifests(resolver: ManifestResolver, files: Sequence[ChunkedFile]) -> list[ManifestEntry]:
    """The manifests that govern at least one of ``files``, in the order the files first meet them."""
    paths = dict.fromkeys(r.manifest_path for r in files if r.manifest_path)
    return [resolver.loaded[path] for path in paths if path in resolver.loaded]


def metadata_document(
    options: BuildOptions,
    *,
    values: Mapping[str, set[str]],
    total_chunks: int,
    files: Sequence[ChunkedFile],
    manifests: Sequence[ManifestEntry],
    prompts: Sequence[PromptDefinition],
    provider: EmbeddingProvider | None,
    index_path: str = LANCEDB_DIRNAME,
) -> dict[str, Any]:
    """The metadata.json document; ``values`` holds every metadata value of every chunk, by key, and
    ``manifests`` are the :func:`governing_manifests`."""
    instructions = options.tools.server_instructions
    for entry in manifests:
        if instructions is None and entry.manifest.mcpServerInstructions:
            instructions = entry.manifest.mcpServerInstructions.strip()
    tools = options.tools
    tool_descriptions = {
        k: v for k, v in (("search_docs", tools.search_docs), ("get_doc", tools.get_doc)) if v
    }
    meta: dict[str, Any] = {
        "metadata_version": "1.1.0",
        "corpus_description": options.description,
        "taxonomy": _taxonomy(values, _taxonomy_config(manifests)),
        "stats": {
            "total_chunks": total_chunks,
            "total_files": len(files),
            "indexed_at": options.indexed_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
            "source_commit": git_source_commit(options.docs_dir),
        },
        "embedding": (
            {"provider": provider.name, "model": provider.model, "dimensions": provider.dimensions}
            if provider
            else None
        ),
    }
    if options.heading_vectors:
        model = resolve_local_model(None)
        meta["heading_vectors"] = {"provider": "local", "model": model.name, "dimensions": model.dimensions}
    if prompts:
        meta["prompts"] = [p.model_dump(exclude_none=True) for p in prompts]
    if tool_descriptions:
        meta["tool_descriptions"] = tool_descriptions
    if instructions:
        meta["mcpServerInstructions"] = instructions
    for entry in manifests:  # the first governing manifest that declares the rule
        declared = entry.manifest.auto_include
        if isinstance(declared, AutoIncludeConfig):
            meta["auto_include"] = declared.model_dump()
        elif declared is False:
            meta["auto_include"] = False
        if declared is not None:
            break
    meta["files"] = {r.relpath: {"title": r.title} for r in files if r.title}
    meta["index"] = {"engine": "lancedb", "table": TABLE_NAME, "path": index_path}
    return meta


def _taxonomy_config(manifests: Sequence[ManifestEntry]) -> dict[str, dict[str, Any]]:
    """Per taxonomy key, the union of the manifests' settings (collapse, description, resources)."""
    config: dict[str, dict[str, Any]] = {}
    for entry in manifests:
        for key, cfg in (entry.manifest.taxonomy or {}).items():
            slot = config.setdefault(key, {"vector_collapse": False, "properties": {}, "description": None})
            slot["vector_collapse"] = slot["vector_collapse"] or cfg.vector_collapse
            if cfg.description and not slot["description"]:
                slot["description"] = cfg.description
            for value, props in cfg.properties.items():
                if props.mcp_resource:
                    slot["properties"][value] = {"mcp_resource": True}
    return config


def _taxonomy(values: Mapping[str, set[str]], config: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    # a configured key no chunk carries is a validation warning, reported with the corpus's findings
    taxonomy: dict[str, Any] = {}
    for key, vals in values.items():
        slot = config.get(key, {})
        entry: dict[str, Any] = {
            "description": slot.get("description") or f"Filter results by {key}.",
            "values": sorted(vals),
        }
        if slot.get("vector_collapse"):
            entry["vector_collapse"] = True
        if slot.get("properties"):
            entry["properties"] = slot["properties"]
        taxonomy[key] = entry
    return taxonomy
