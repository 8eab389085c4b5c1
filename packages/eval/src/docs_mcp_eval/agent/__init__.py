"""``docs-mcp-eval agent-eval``: coding agents answer scenario tasks with and without the docs server.

Modules, one concept each:

* :mod:`~docs_mcp_eval.agent.scenarios` — scenario suites (YAML, the original's format);
* :mod:`~docs_mcp_eval.agent.assertions` — checks on the answer and the workspace;
* :mod:`~docs_mcp_eval.agent.feedback` — the feedback tool and its scores;
* :mod:`~docs_mcp_eval.agent.index_cache` — cached indexes built with ``docs-mcp build``;
* :mod:`~docs_mcp_eval.agent.workspace`, :mod:`~docs_mcp_eval.agent.shell` — the agent's folder and
  its tools, commands with time limits;
* :mod:`~docs_mcp_eval.agent.docs_server` — the docs server over stdio, as the agent's MCP tools;
* :mod:`~docs_mcp_eval.agent.toolbox` — where each tool call goes;
* :mod:`~docs_mcp_eval.agent.provider`, :mod:`~docs_mcp_eval.agent.openai_chat`,
  :mod:`~docs_mcp_eval.agent.anthropic_messages` — model APIs;
* :mod:`~docs_mcp_eval.agent.pricing` — token prices and budgets;
* :mod:`~docs_mcp_eval.agent.loop` — the agent loop;
* :mod:`~docs_mcp_eval.agent.runner` — a suite run: workspaces, servers, concurrency;
* :mod:`~docs_mcp_eval.agent.results`, :mod:`~docs_mcp_eval.agent.metrics` — results and the summary;
* :mod:`~docs_mcp_eval.agent.history`, :mod:`~docs_mcp_eval.agent.compare`,
  :mod:`~docs_mcp_eval.agent.report`, :mod:`~docs_mcp_eval.agent.report_format` — saved runs, trend,
  with/without comparison, reports;
* :mod:`~docs_mcp_eval.agent.preparation`, :mod:`~docs_mcp_eval.agent.command` — the command line.
"""
