"""A custom tool's schema references are resolved at start-up, within the schema.

jsonschema fetched a ``$ref`` to a URL (``https:``, ``file:``) when the tool was first called, with
no timeout and on the event loop: a slow host held every request of the server, ``file:`` read any
file the server could, and a reference that resolves nowhere was reported only to a caller.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from docs_mcp_server import CustomTool, create_app
from docs_mcp_server.errors import OptionsError
from tests.support.protocol import text

pytestmark = pytest.mark.anyio


def _schema(reference: str, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"$ref": reference}}, **extra}


@pytest.mark.parametrize(
    ("reference", "extra"),
    [
        ("https://example.com/schemas/x.json", {}),
        ("#/$defs/missing", {}),
        ("other.json#/a", {"$id": "https://example.com/root.json"}),
    ],
)
def test_a_reference_the_schema_does_not_hold_is_refused_at_start(
    built_index: Path, reference: str, extra: dict[str, Any]
) -> None:
    tool = CustomTool("feedback", "Rate the docs", _schema(reference, **extra))
    with pytest.raises(OptionsError) as caught:
        create_app(built_index, custom_tools=[tool])
    assert str(caught.value) == (
        f"Custom tool 'feedback' has an invalid inputSchema: its $ref '{reference}' at properties/x "
        "resolves to nothing in the schema (references to other documents are not fetched); "
        "copy the schema it names into $defs and refer to '#/$defs/<name>'"
    )


async def test_a_file_reference_is_not_read_when_the_tool_is_called(
    built_index: Path, tmp_path: Path
) -> None:
    referenced = tmp_path / "x.json"
    referenced.write_text(json.dumps({"type": "string"}), encoding="utf-8")
    tool = CustomTool("feedback", "Rate the docs", _schema(referenced.as_uri()))
    with pytest.raises(OptionsError, match=r"its \$ref 'file:///.*' at properties/x resolves to nothing"):
        create_app(built_index, custom_tools=[tool])


def test_a_reference_that_only_leads_back_to_itself_is_refused_at_start(built_index: Path) -> None:
    # validating any value recursed until Python's limit (the caller got 'maximum recursion depth
    # exceeded ...')
    for schema in (
        {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
        {
            "type": "object",
            "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}},
            "properties": {"x": {"$ref": "#/$defs/a"}},
        },
        {"type": "object", "anyOf": [{"required": ["q"]}, {"$ref": "#"}]},
    ):
        with pytest.raises(OptionsError, match=r"its \$ref '#[^']*' at .* leads back to itself"):
            create_app(built_index, custom_tools=[CustomTool("feedback", "Rate the docs", schema)])


async def test_references_within_the_schema_validate_and_a_url_is_never_fetched(
    built_index: Path, tmp_path: Path
) -> None:
    tree = {
        "type": "object",
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            }
        },
        "properties": {
            "root": {"$ref": "#/$defs/node"},
            "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"},
        },
    }
    referenced = tmp_path / "x.json"
    referenced.write_text(json.dumps({"type": "string"}), encoding="utf-8")
    remote = {"type": "object", "properties": {"x": {"$ref": referenced.as_uri()}}}
    app = create_app(built_index, custom_tools=[CustomTool("tree", "A tree", tree)])
    validator = app._custom["tree"][1]  # pyright: ignore[reportPrivateUsage] - what a call validates with
    with pytest.raises(Exception, match=r"^Unresolvable: file:///"):  # not '1 is not of type 'string''
        validator.evolve(schema=remote, _resolver=None).validate({"x": 1})
    async with Client(app.server) as client:
        good = await client.call_tool("tree", {"root": {"kids": [{"kids": []}]}, "meta": {"type": "string"}})
        bad = await client.call_tool("tree", {"root": {"kids": [{"kids": 5}]}})
    assert good.is_error is False
    assert bad.is_error is True and "Invalid arguments for 'tree' at 'root/kids/0/kids'" in text(
        bad.content[0]
    )
