"""``python -m docs_mcp_cli`` is the ``docs-mcp`` command."""

from docs_mcp_cli.entry import main

main()
