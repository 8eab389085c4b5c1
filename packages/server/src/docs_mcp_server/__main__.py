"""``python -m docs_mcp_server`` is the ``docs-mcp-server`` command."""

import sys

from docs_mcp_server.cli import main

sys.exit(main())
