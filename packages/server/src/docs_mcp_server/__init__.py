"""docs-mcp server."""

__version__ = "0.1.0"
