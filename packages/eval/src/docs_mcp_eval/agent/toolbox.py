"""Every tool the agent may call in one scenario, and where each call goes.

The workspace tools (``read_file``, ``write_file``, ``list_files``, ``run_command``) are always there;
the docs server's tools (``mcp__docs-mcp__search_docs``, ``mcp__docs-mcp__get_doc``, ...) unless the
run is ``--no-mcp``; and the feedback tool, served by the docs server or, when the server does not
offer it, answered here with the same echo behaviour.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from docs_mcp_eval.agent.docs_server import DocsServer, is_docs_tool, qualified_name
from docs_mcp_eval.agent.feedback import FeedbackToolConfig
from docs_mcp_eval.agent.workspace import ToolOutcome, ToolSpec, Workspace


class Toolbox:
    def __init__(
        self,
        workspace: Workspace,
        docs: DocsServer | None,
        feedback: FeedbackToolConfig | None,
    ) -> None:
        self.workspace = workspace
        self.docs = docs
        self.feedback = feedback if docs is not None else None
        self.feedback_name: str | None = None
        self._local_feedback = False
        if self.feedback is not None and docs is not None:
            self.feedback_name = qualified_name(docs.server_name, self.feedback.name)
            self._local_feedback = not docs.offers(self.feedback.name)

    def specs(self) -> list[ToolSpec]:
        specs = self.workspace.specs()
        if self.docs is not None:
            specs += self.docs.specs()
        if self._local_feedback and self.feedback is not None and self.feedback_name is not None:
            specs.append(
                ToolSpec(self.feedback_name, self.feedback.description, dict(self.feedback.input_schema))
            )
        return specs

    def is_docs_tool(self, name: str) -> bool:
        """A call that counts as using the documentation (``search_docs`` / ``get_doc``)."""
        return self.docs is not None and is_docs_tool(name, self.docs.server_name)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        if self._local_feedback and name == self.feedback_name:
            return ToolOutcome(json.dumps(dict(arguments), ensure_ascii=False, separators=(",", ":")))
        if self.docs is not None and self.docs.owns(name):
            return await self.docs.call(name, arguments)
        if name in {spec.name for spec in self.workspace.specs()}:
            return await self.workspace.call(name, arguments)
        return ToolOutcome(f"there is no tool named {name!r}", is_error=True)
