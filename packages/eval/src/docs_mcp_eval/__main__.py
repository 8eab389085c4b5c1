"""``python -m docs_mcp_eval`` runs the command line."""

from docs_mcp_eval.cli import main

main()
