"""docs-mcp eval: a retrieval benchmark harness for MCP documentation servers.

Modules, one concept each:

* :mod:`~docs_mcp_eval.cases` — reading and validating case files (both formats);
* :mod:`~docs_mcp_eval.runner` — starting a stdio MCP server and driving it through the cases;
* :mod:`~docs_mcp_eval.commands` — the server and build command lines, the run's settings, timing the build;
* :mod:`~docs_mcp_eval.session` — one client session: search pages, ``get_doc`` answers, tokens read;
* :mod:`~docs_mcp_eval.rss` — sampling the server's peak resident memory;
* :mod:`~docs_mcp_eval.metrics` and :mod:`~docs_mcp_eval.leaks` — MRR@5, NDCG@5, facet precision,
  rounds, percentiles, filter leaks;
* :mod:`~docs_mcp_eval.results` — the run result and its JSON form (interchangeable with the original's);
* :mod:`~docs_mcp_eval.report`, :mod:`~docs_mcp_eval.delta`, :mod:`~docs_mcp_eval.benchmark_report` —
  Markdown reports;
* :mod:`~docs_mcp_eval.benchmark` — one index and one run per embedding provider;
* :mod:`~docs_mcp_eval.cli` — the ``docs-mcp-eval`` command.

The harness talks to servers only over MCP and never imports the rest of docs-mcp.
"""

from importlib.metadata import version as _distribution_version

# The installed distribution's version: pyproject.toml is the only place it is written.
__version__: str = _distribution_version("docs-mcp-eval")
