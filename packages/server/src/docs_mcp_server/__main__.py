"""``python -m docs_mcp_server`` is the ``docs-mcp-server`` command."""

from docs_mcp_server.entry import run

run()
