"""The parts of an index's ``metadata.json`` the server uses, in one read-only object.

:func:`docs_mcp_core.metadata.read_metadata` validates the file; this view turns the validated model
into the few plain values the MCP surface needs (taxonomy enums and descriptions, which values are
published as resources, tool description overrides, server instructions, prompts, file titles,
stats) so the rest of the server never depends on the model's internals.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docs_mcp_core.metadata import IndexMetadata
    from docs_mcp_core.prompts import PromptDefinition


MAX_SERVED_TEXT = 32_768  # docs_mcp_core.manifest.MAX_TOOL_TEXT_LENGTH: the longest a build writes


def _served(text: str, what: str) -> str:
    """``text`` as every client receives it: its first :data:`MAX_SERVED_TEXT` characters, with a
    warning, when an index built before the cap (or by the original) holds a longer one; each
    ``initialize`` or ``tools/list`` answer carried it whole into an agent's context."""
    if len(text) <= MAX_SERVED_TEXT:
        return text
    from docs_mcp_server.logs import log

    log(
        logging.WARNING,
        f"{what} in metadata.json is {len(text):,} characters long; serving its first "
        f"{MAX_SERVED_TEXT:,} (rebuild the index with a shorter one)",
    )
    return text[:MAX_SERVED_TEXT]


@dataclass(frozen=True)
class TaxonomyFieldView:
    description: str | None
    values: tuple[str, ...]
    resource_values: tuple[str, ...]
    """Values marked ``mcp_resource: true``: their files are published as MCP resources."""


@dataclass(frozen=True)
class MetadataView:
    corpus_description: str
    taxonomy: dict[str, TaxonomyFieldView]
    instructions: str | None = None
    tool_descriptions: dict[str, str] = field(default_factory=dict)
    files: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """``metadata.json``'s ``files`` (one entry per file of the corpus, 40,000 at ten times
    sdk-docs): read through :meth:`file_title`, never copied at start-up."""
    prompts: tuple[PromptDefinition, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    embedding_provider: str | None = None
    local_models: tuple[tuple[str, str], ...] = ()
    """The shipped models a search embeds its query with, as ``(leg, model)``: ``("vector", m)``
    for chunk vectors built by the ``local`` provider, ``("headings", m)`` for heading vectors."""
    index_path: str = ".lancedb"
    index_table: str = "chunks"

    def tool_description(self, tool: str) -> str | None:
        return self.tool_descriptions.get(tool) or None

    def file_title(self, path: str) -> str | None:
        """The ``title`` a file's front matter gave it, if any."""
        title = (self.files.get(path) or {}).get("title")
        return title if isinstance(title, str) and title.strip() else None

    @classmethod
    def from_metadata(cls, metadata: IndexMetadata) -> MetadataView:
        """Build the view from a validated :class:`~docs_mcp_core.metadata.IndexMetadata`."""
        taxonomy = {
            key: TaxonomyFieldView(
                description=spec.description or None,
                values=tuple(spec.values),
                resource_values=tuple(
                    value for value, props in spec.properties.items() if props.mcp_resource
                ),
            )
            for key, spec in metadata.taxonomy.items()
        }
        tool_descriptions: dict[str, str] = {}
        if metadata.tool_descriptions is not None:
            for tool, text in metadata.tool_descriptions.model_dump().items():
                if isinstance(text, str) and text.strip():
                    tool_descriptions[tool] = _served(text, f"the {tool} tool's description")
        instructions = metadata.mcpServerInstructions
        if instructions:
            instructions = _served(instructions, "mcpServerInstructions")
        local_models: list[tuple[str, str]] = []
        if metadata.embedding is not None and metadata.embedding.provider.strip().lower() == "local":
            local_models.append(("vector", metadata.embedding.model))
        if metadata.heading_vectors is not None:
            local_models.append(("headings", metadata.heading_vectors.model))
        return cls(
            corpus_description=metadata.corpus_description,
            taxonomy=taxonomy,
            instructions=instructions if instructions and instructions.strip() else None,
            tool_descriptions=tool_descriptions,
            files=metadata.files,
            prompts=tuple(metadata.prompts or ()),
            stats=metadata.stats.model_dump(mode="json"),
            embedding_provider=metadata.embedding.provider.strip().lower() if metadata.embedding else None,
            local_models=tuple(local_models),
            index_path=metadata.index.path.strip() or ".lancedb",
            index_table=metadata.index.table.strip() or "chunks",
        )
