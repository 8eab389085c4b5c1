"""Exceptions shared by the docs-mcp packages.

Every error a user can cause carries a message that names the file, field or value at fault and says
what to do, so command-line front ends can print it without a traceback.
"""

from __future__ import annotations


class DocsMcpError(Exception):
    """Base class for errors with a user-facing message."""

    @property
    def message(self) -> str:
        return str(self)


class ManifestError(DocsMcpError, ValueError):
    """A ``.docs-mcp.json`` manifest (or front matter) is invalid."""


class MetadataError(DocsMcpError, ValueError):
    """A ``metadata.json`` document is invalid or unsupported."""


class PromptTemplateError(DocsMcpError, ValueError):
    """A ``*.template.md`` / ``*.template.yaml`` prompt template is invalid."""


class IndexNotFoundError(DocsMcpError):
    """An index directory is missing, incomplete or unreadable."""


class SearchError(DocsMcpError, ValueError):
    """A search or get_doc request that cannot be answered (bad cursor, unknown chunk id, ...).

    The message is exactly the text returned to MCP clients as an ``isError`` result.
    """


class BuildError(DocsMcpError):
    """A build that cannot proceed (invalid corpus, empty corpus, embedding failure)."""


class EmbeddingError(DocsMcpError):
    """An embedding provider failed (bad key, unknown model, dimension mismatch, outage)."""
