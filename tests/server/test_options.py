"""Server options: defaults from the environment, tool naming rules, custom tools from JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_server.custom_tools import echo_arguments, parse_custom_tools_json
from docs_mcp_server.errors import OptionsError
from docs_mcp_server.options import BuildInfo, CustomTool, ServerOptions
from tests.support.hostile_json import HUGE_NUMBER, TOO_DEEP


def test_name_and_version_resolution(tmp_path: Path) -> None:
    base = ServerOptions(index_dir=tmp_path)
    assert base.resolved_name({}) == "docs-mcp-server"
    assert base.resolved_version({}) == "0.1.0"
    assert base.resolved_name({"SERVER_NAME": "cisco-docs"}) == "cisco-docs"
    assert base.resolved_name({"SERVER_NAME": "   "}) == "docs-mcp-server"  # blank env = unset
    assert base.resolved_version({"SERVER_VERSION": "2.0.0"}) == "2.0.0"
    prefixed = ServerOptions(index_dir=tmp_path, tool_prefix="cisco")
    assert prefixed.resolved_name({}) == "cisco-docs-server"
    assert prefixed.search_tool_name == "cisco_search_docs"
    assert prefixed.get_doc_tool_name == "cisco_get_doc"
    explicit = ServerOptions(index_dir=tmp_path, name="n", version="v", tool_prefix="cisco")
    assert (
        explicit.resolved_name({"SERVER_NAME": "x"}),
        explicit.resolved_version({"SERVER_VERSION": "y"}),
    ) == (
        "n",
        "v",
    )


def test_build_info_header_and_health_shape(tmp_path: Path) -> None:
    info = ServerOptions(index_dir=tmp_path, name="test-server", version="0.1.0").build_info(
        {"GIT_COMMIT": "abc123", "BUILD_DATE": "2026-01-01"}
    )
    assert info.header_value() == "name=test-server version=0.1.0 git=abc123 date=2026-01-01"
    assert info.to_dict() == {
        "name": "test-server",
        "version": "0.1.0",
        "gitCommit": "abc123",
        "buildDate": "2026-01-01",
    }
    assert BuildInfo("a", "1").header_value() == "name=a version=1"
    assert BuildInfo("a", "1").to_dict() == {"name": "a", "version": "1"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tool_prefix": "bad prefix"}, "tool prefix 'bad prefix' is invalid"),
        (
            {"tool_prefix": "x" * 60},
            "Built-in tool name '" + "x" * 60 + "_search_docs' exceeds 64 characters",
        ),
        ({"proximity_weight": 0.0}, "proximity weight must be a positive number"),
        ({"vector_weight": -1.0}, "vector weight must be a positive number"),
        ({"phrase_slop": 6}, "phrase slop must be an integer from 0 to 5"),
        ({"vector_cooldown_seconds": -1.0}, "vector cooldown must be a number of seconds >= 0"),
        ({"vector_cooldown_seconds": float("nan")}, "vector cooldown must be a number of seconds >= 0"),
        ({"ranking": "fancy"}, "ranking must be one of: default, original"),
    ],
)
def test_invalid_options_are_rejected(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(OptionsError, match=message.replace("(", r"\(")):
        ServerOptions(index_dir=tmp_path, **kwargs)  # type: ignore[arg-type]


SCHEMA = {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([CustomTool("bad name", "d", SCHEMA)], "Custom tool name 'bad name' must match MCP spec"),
        (
            [CustomTool("x" * 65, "d", SCHEMA)],
            "must match MCP spec: alphanumeric/dash/underscore, 1-64 chars.",
        ),
        ([CustomTool("search_docs", "d", SCHEMA)], "Custom tool name 'search_docs' collides with a built-in"),
        ([CustomTool("t", "d", SCHEMA), CustomTool("t", "d", SCHEMA)], "Duplicate custom tool name 't'."),
        ([CustomTool("t", " ", SCHEMA)], "Custom tool 't' needs a non-empty description."),
        ([CustomTool("t", "d", {"type": "array"})], 'needs an inputSchema with "type": "object"'),
    ],
)
def test_custom_tool_rules(tmp_path: Path, tools: list[CustomTool], message: str) -> None:
    with pytest.raises(OptionsError, match=message.replace("(", r"\(")):
        ServerOptions(index_dir=tmp_path, custom_tools=tools)


def test_custom_tools_json_parsing(tmp_path: Path) -> None:
    spec = [{"name": "docs_feedback", "description": "Rate the docs", "inputSchema": SCHEMA}]
    tools = parse_custom_tools_json(json.dumps(spec))
    assert [(t.name, t.description, dict(t.input_schema)) for t in tools] == [
        ("docs_feedback", "Rate the docs", SCHEMA)
    ]
    assert tools[0].handler is echo_arguments
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert [t.name for t in parse_custom_tools_json(f"@{path}")] == ["docs_feedback"]
    assert echo_arguments({"b": 1, "a": "é"}) == '{"b":1,"a":"é"}'


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("[", "--custom-tools-json is not valid JSON"),
        ("{}", "must be a JSON array"),
        ("[1]", r"--custom-tools-json\[0\] must be an object"),
        (
            '[{"name": 1, "description": "d", "inputSchema": {"type": "object"}}]',
            r"\[0\].name must be a string",
        ),
        (
            '[{"name": "t", "inputSchema": {"type": "object"}}]',
            r"\[0\].description must be a non-empty string",
        ),
        ('[{"name": "t", "description": "d"}]', r"\[0\].inputSchema must be an object"),
        ("@/nonexistent/tools.json", "cannot read custom tools file"),
        # these ended the server with a bare traceback (RecursionError, ValueError, UnicodeDecodeError)
        (TOO_DEEP, "cannot be read: it nests arrays or objects too deeply"),
        ('[{"n": ' + HUGE_NUMBER + "}]", "cannot be read: it holds a number too long"),
        ("@/dev/zero", "is larger than 16 MiB"),  # was read until memory ran out
        # the last value was kept without a word: a tool renamed, a property's schema dropped
        (
            '[{"name": "a", "description": "d", "name": "b", "inputSchema": {"type": "object"}}]',
            r"^--custom-tools-json gives the key 'name' twice in one object; only the last value would "
            r"count: remove the other$",
        ),
        (
            '[{"name": "t", "description": "d", "inputSchema": {"type": "object", '
            '"properties": {"x": {"type": "string"}, "x": {"type": "integer"}}}}]',
            "gives the key 'x' twice in one object",
        ),
    ],
)
def test_custom_tools_json_errors(value: str, message: str) -> None:
    with pytest.raises(OptionsError, match=message):
        parse_custom_tools_json(value)


def test_vector_cooldown_reaches_the_engine(built_index: Path) -> None:
    from docs_mcp_server.app import DocsMcpApp
    from docs_mcp_server.boot import load_index_metadata

    options = ServerOptions(index_dir=built_index, vector_cooldown_seconds=5.0)
    app = DocsMcpApp(options, load_index_metadata(built_index))
    assert app.engine.get().options.vector_cooldown_seconds == 5.0
    default = DocsMcpApp(ServerOptions(index_dir=built_index), load_index_metadata(built_index))
    assert default.engine.get().options.vector_cooldown_seconds == 60.0


def test_a_custom_tools_file_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes(b'[{"name": "\xff"}]')
    with pytest.raises(OptionsError, match=r"is not UTF-8 text \(byte 11\); save it as UTF-8"):
        parse_custom_tools_json(f"@{path}")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # the CR/LF went into the DOCS-MCP header as is: a second header (response splitting)
        ({"name": "docs\r\nX-Injected: 1"}, r"--name \(or SERVER_NAME\) .* holds a control character"),
        ({"git_commit": "abc\tdef"}, r"--git-commit \(or GIT_COMMIT\) .* holds a control character"),
        # argv bytes that are not UTF-8: /healthz answered 500, stdio never answered initialize
        ({"version": "1.0\udcff"}, r"--server-version \(or SERVER_VERSION\) is not valid UTF-8 text"),
        ({"build_date": "2026\x7f"}, r"--build-date \(or BUILD_DATE\) .* holds a control character"),
        # a 100,000-character GIT_COMMIT went into the header of every answer: clients whose HTTP
        # parsers take 8-16 KB of headers (Node, h11, aiohttp) could read none of them
        ({"git_commit": "a" * 257}, r"^--git-commit \(or GIT_COMMIT\) is 257 characters long; at most 256"),
        ({"name": "n" * 100_000}, r"^--name \(or SERVER_NAME\) is 100,000 characters long; at most 256"),
    ],
)
def test_an_identity_that_cannot_go_into_a_header_is_refused(
    tmp_path: Path, fields: dict[str, str], message: str
) -> None:
    with pytest.raises(OptionsError, match=message):
        ServerOptions(index_dir=tmp_path, **fields)  # type: ignore[arg-type]
    ServerOptions(index_dir=tmp_path, name="Café docs", version="1.0 (beta)")  # plain text is fine
    ServerOptions(index_dir=tmp_path, git_commit="c" * 256)  # and so is the longest allowed


def test_a_cursor_secret_that_is_not_utf8_is_refused_at_start_up(tmp_path: Path) -> None:
    # --cursor-secret $'s\xff': the server started, then every search failed to open the index
    with pytest.raises(
        OptionsError, match=r"--cursor-secret \(or DOCS_MCP_CURSOR_SECRET\) is not valid UTF-8"
    ):
        ServerOptions(index_dir=tmp_path, cursor_secret="s\udcff")
