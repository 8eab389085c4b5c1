"""docs-mcp cli."""

from importlib.metadata import version as _distribution_version

# The installed distribution's version: pyproject.toml is the only place it is written.
__version__: str = _distribution_version("docs-mcp-cli")
