"""MCP prompts from the prompt templates compiled into an index (``*.template.md`` / ``.yaml``).

Listing shows each prompt's name, title, description and arguments (argument titles are dropped,
as in the original); getting one checks that every required argument is present and non-blank,
then renders the template's messages with the arguments (Mustache, no HTML escaping; unknown
variables render empty) via :func:`docs_mcp_core.prompts.render_prompt`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import mcp.types as types

from docs_mcp_core.errors import shown
from docs_mcp_server.errors import PromptRequestError

if TYPE_CHECKING:
    from docs_mcp_core.prompts import PromptDefinition


def list_prompts(prompts: Sequence[PromptDefinition]) -> list[types.Prompt]:
    return [
        types.Prompt(
            name=prompt.name,
            title=prompt.title or None,
            description=prompt.description or None,
            arguments=[
                types.PromptArgument(
                    name=arg.name, description=arg.description or None, required=arg.required
                )
                for arg in prompt.arguments
            ]
            or None,
        )
        for prompt in prompts
    ]


def get_prompt(
    prompts: Sequence[PromptDefinition], name: str, arguments: Mapping[str, str]
) -> types.GetPromptResult:
    prompt = next((p for p in prompts if p.name == name), None)
    if prompt is None:
        raise PromptRequestError(f"Prompt '{shown(name)}' not found")
    for argument in prompt.arguments:
        value = arguments.get(argument.name)
        if argument.required and (not isinstance(value, str) or not value.strip()):
            raise PromptRequestError(f"Missing required prompt argument '{argument.name}'")
    from docs_mcp_core.errors import PromptTemplateError
    from docs_mcp_core.prompts import render_prompt

    try:
        rendered = render_prompt(prompt, dict(arguments))
    except PromptTemplateError as exc:
        raise PromptRequestError(str(exc)) from exc
    return types.GetPromptResult(
        description=prompt.description or None,
        messages=[
            types.PromptMessage(
                role=message.role, content=types.TextContent(type="text", text=message.content.text)
            )
            for message in rendered
        ],
    )
