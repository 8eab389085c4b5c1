"""The MCP surface over a real index of ``examples/docs``, driven by the real MCP client in memory."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from docs_mcp_core.tokens import count_tokens
from docs_mcp_server import CustomTool, DocsMcpApp, create_app
from tests.support.named_pipes import without_waiting_on
from tests.support.protocol import text
from tests.support.tiny_corpus import build_pages

pytestmark = pytest.mark.anyio

INSTRUCTIONS_START = "Tidewater Payments documentation"


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return text(result.content[0])


async def search(client: Client, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("search_docs", arguments)
    assert not result.is_error, text_of(result)
    return result.structured_content


async def test_handshake_identity_and_instructions(built_app: DocsMcpApp, mode: str) -> None:
    async with Client(built_app.server, mode=mode) as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("test-server", "0.1.0")
        assert client.instructions is not None and client.instructions.startswith(INSTRUCTIONS_START)
        capabilities = client.server_capabilities
        assert capabilities.tools is not None
        assert capabilities.resources is not None
        assert capabilities.prompts is not None


async def test_tools_list_has_taxonomy_enums(built_app: DocsMcpApp, mode: str) -> None:
    async with Client(built_app.server, mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == ["search_docs", "get_doc"]
    search_tool, get_doc_tool = tools
    properties = search_tool.input_schema["properties"]
    taxonomy = list(built_app.metadata.taxonomy)
    assert list(properties) == ["query", "limit", "cursor", *taxonomy, "max_tokens", "facets"]
    assert {"language", "scope"} <= set(properties)
    assert properties["language"]["enum"] == ["go", "python", "typescript"]
    assert properties["language"]["description"] == "Filter results by language."
    assert properties["scope"]["enum"] == ["global-guide", "sdk-specific"]
    assert search_tool.input_schema["additionalProperties"] is False
    assert search_tool.description is not None
    assert search_tool.description.startswith(
        f"Search the pre-indexed {built_app.metadata.corpus_description} — "
    )
    assert "Use exact identifiers and method names." in search_tool.description
    assert get_doc_tool.input_schema["required"] == ["chunk_id"]


async def test_search_returns_json_text_and_structured_content(built_app: DocsMcpApp, mode: str) -> None:
    async with Client(built_app.server, mode=mode) as client:
        result = await client.call_tool("search_docs", {"query": "retry backoff", "language": "python"})
    assert result.is_error is False
    data = result.structured_content
    assert data is not None
    assert text_of(result) == json.dumps(data, indent=2, ensure_ascii=False)
    assert list(data) == ["hits", "next_cursor", "hint"]
    assert data["hits"], "expected hits for 'retry backoff'"
    for hit in data["hits"]:
        assert list(hit) == ["chunk_id", "heading", "breadcrumb", "snippet", "filepath", "metadata", "score"]
        # auto-include: python SDK pages plus global guides, never another SDK's pages
        assert hit["metadata"].get("language") in (None, "", "python"), hit
    assert data["hint"] is None


async def test_search_pages_with_cursor(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        first = await search(client, query="payment", limit=2)
        assert len(first["hits"]) == 2
        assert first["next_cursor"]
        second = await search(client, query="payment", limit=2, cursor=first["next_cursor"])
        first_ids = {hit["chunk_id"] for hit in first["hits"]}
        assert second["hits"] and first_ids.isdisjoint(hit["chunk_id"] for hit in second["hits"])
        other_query = await client.call_tool(
            "search_docs", {"query": "refund", "cursor": first["next_cursor"]}
        )
        bad = await client.call_tool("search_docs", {"query": "payment", "cursor": "bad-cursor"})
    assert other_query.is_error and "Invalid cursor" in text_of(other_query)
    assert bad.is_error and "Invalid cursor" in text_of(bad)


async def test_zero_results_come_with_a_hint(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        data = await search(client, query="zyxwvutsrq")
    assert data["hits"] == []
    assert data["next_cursor"] is None
    assert data["hint"] is not None and data["hint"]["message"].startswith("0 results found")


async def test_get_doc_returns_the_chunk_text(built_app: DocsMcpApp, mode: str) -> None:
    async with Client(built_app.server, mode=mode) as client:
        hit = (await search(client, query="idempotency keys"))["hits"][0]
        result = await client.call_tool("get_doc", {"chunk_id": hit["chunk_id"]})
        wider = await client.call_tool("get_doc", {"chunk_id": hit["chunk_id"], "context": 1})
    assert result.is_error is False
    assert result.structured_content is None
    assert text_of(result).startswith(f"--- Chunk: {hit['chunk_id']} (Chunk ")
    assert "(Target) ---" in text_of(result).splitlines()[0]
    assert len(text_of(wider)) > len(text_of(result))
    assert "Context: " in text_of(wider)


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search_docs", {"query": "retry", "unsupported": "x"}, "Unexpected field 'unsupported'"),
        ("search_docs", {"query": "retry", "limit": 0}, "limit must be between 1 and 50"),
        ("search_docs", {"query": " "}, "query must be a non-empty string"),
        (
            "search_docs",
            {"query": "retry", "language": "cobol"},
            "Invalid taxonomy value for 'language': 'cobol'. Allowed values: go, python, typescript",
        ),
        ("search_docs", {"query": "retry " * 400}, "query is too long: 2,399 characters, at most 2,000; "
         "search for the names and words that matter"),
        ("search_docs", {"query": "retry " * 65}, "query has too many words: 65, at most 64; "
         "search for the names and words that matter"),
        ("search_docs", {"query": "retry", "cursor": "e" * 513}, "Invalid cursor: longer than 512 characters"),
        ("get_doc", {"chunk_id": "guides/retries.md", "context": 6}, "context must be between 0 and 5"),
        ("get_doc", {"chunk_id": "guides/missing.md#nothing"}, "Chunk ID 'guides/missing.md#nothing' not found. "
         "Use search_docs to discover valid chunk IDs."),
        ("get_doc", {"chunk_id": "a#b#c"}, "Chunk ID 'a#b#c' has invalid format. "
         "Expected {filepath} or {filepath}#{heading-path}."),
        ("nope", {}, "Unknown tool 'nope'."),
    ],
)  # fmt: skip
async def test_tool_errors_are_is_error_results(
    built_app: DocsMcpApp, tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with Client(built_app.server) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    assert text_of(result) == message


@pytest.mark.parametrize(
    ("tool", "arguments", "start"),
    [
        ("get_doc", {"chunk_id": "a#" * 50_000}, "Chunk ID 'a#a#"),
        ("get_doc", {"chunk_id": "guides/" + "x" * 99_993}, "Chunk ID 'guides/xxx"),
        ("search_docs", {"query": "retry", "language": "p" * 100_000}, "Invalid taxonomy value for 'language': 'ppp"),
        ("n" * 100_000, {}, "Unknown tool 'nnn"),
    ],
)  # fmt: skip
async def test_an_error_repeats_a_huge_value_only_in_part(
    built_app: DocsMcpApp, tool: str, arguments: dict[str, Any], start: str
) -> None:
    # a megabyte sent back to an agent would fill its context with the mistake it made
    async with Client(built_app.server) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    message = text_of(result)
    assert message.startswith(start)
    assert len(message) < 500 and "(100,000 characters)" in message


async def test_a_resource_error_repeats_a_huge_uri_only_in_part(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource("docs:///" + "x" * 100_000)
    assert info.value.message.startswith("Resource not found: docs:///xxx")
    assert len(info.value.message) < 500 and "(100,008 characters)" in info.value.message


async def test_a_prompt_error_repeats_a_huge_name_only_in_part(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        with pytest.raises(MCPError) as info:
            await client.get_prompt("p" * 100_000, {})
    assert info.value.message.startswith("Prompt 'ppp")
    assert len(info.value.message) < 500 and "(100,000 characters)" in info.value.message


async def test_tool_prefix_routes_and_hides_unprefixed_names(built_index: Path) -> None:
    app = create_app(built_index, tool_prefix="acme")
    async with Client(app.server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        prefixed = await client.call_tool("acme_search_docs", {"query": "refund", "language": "go"})
        plain = await client.call_tool("search_docs", {"query": "refund"})
    assert names == ["acme_search_docs", "acme_get_doc"]
    assert prefixed.is_error is False and prefixed.structured_content["hits"]
    assert plain.is_error is True and text_of(plain) == "Unknown tool 'search_docs'."
    assert app.build_info.name == "acme-docs-server"


async def test_custom_tools_echo_validate_and_report_failures(built_index: Path) -> None:
    def explode(arguments: dict[str, Any]) -> str:
        raise RuntimeError("feedback store offline")

    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    app = create_app(
        built_index,
        custom_tools=[
            CustomTool("docs_feedback", "Rate the docs", schema),
            CustomTool("broken", "Always fails", {"type": "object"}, handler=explode),
        ],
    )
    async with Client(app.server) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        echoed = await client.call_tool("docs_feedback", {"score": 90})
        invalid = await client.call_tool("docs_feedback", {"score": "high"})
        failed = await client.call_tool("broken", {})
    assert names == ["search_docs", "get_doc", "docs_feedback", "broken"]
    assert echoed.is_error is False and text_of(echoed) == '{"score":90}'
    assert invalid.is_error is True and "Invalid arguments for 'docs_feedback'" in text_of(invalid)
    assert failed.is_error is True and text_of(failed) == "feedback store offline"


async def test_resources_list_global_guides_with_titles(built_app: DocsMcpApp, mode: str) -> None:
    async with Client(built_app.server, mode=mode) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    names = [resource.name for resource in resources]
    assert names, "scope=global-guide is marked mcp_resource in examples/docs"
    assert all(name.startswith("guides/") for name in names)
    assert names == sorted(names, key=lambda n: (n.casefold(), n))
    retries = next(resource for resource in resources if resource.name == "guides/retries.md")
    assert str(retries.uri) == "docs:///guides/retries.md"
    assert retries.title == "Guides / Retries and idempotency"
    assert retries.description == "guides/retries.md"
    assert retries.mime_type == "text/markdown"
    environments = next(resource for resource in resources if resource.name == "guides/environments.md")
    assert environments.title == "Guides / Sandbox and live environments"  # front matter title wins
    assert templates == []


async def test_read_resource_returns_the_whole_file(built_app: DocsMcpApp, examples_docs: Path) -> None:
    async with Client(built_app.server) as client:
        result = await client.read_resource("docs:///guides/retries.md")
        encoded = await client.read_resource("docs:///guides/retries%2Emd")
    (content,) = result.contents
    assert content.mime_type == "text/markdown"
    body = text(content)
    source = (examples_docs / "guides" / "retries.md").read_text(encoding="utf-8")
    for heading in ("# Retries and idempotency", "## Idempotency keys", "## Designing your own retries"):
        assert heading in body and heading in source
    assert text(encoded.contents[0]) == body


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("docs:///sdks/python/README.md", "Resource not found: docs:///sdks/python/README.md"),
        ("docs:///guides/nothing.md", "Resource not found: docs:///guides/nothing.md"),
        ("invalid://uri", "Invalid URI scheme: invalid:. Expected 'docs:'"),
        ("docs:///", "Invalid URI: missing filepath in 'docs:///'"),
        # a URI Python cannot split (an unclosed IPv6 address) came back as code 0 "Invalid IPv6 URL"
        (
            "docs://[::1/guides/errors.md",
            "Invalid URI: 'docs://[::1/guides/errors.md'. Expected docs:///<filepath>",
        ),
    ],
)
async def test_read_resource_errors(built_app: DocsMcpApp, uri: str, message: str) -> None:
    async with Client(built_app.server) as client:
        with pytest.raises(MCPError) as info:
            await client.read_resource(uri)
    assert info.value.message == message


async def test_prompts_list_and_render(built_app: DocsMcpApp, mode: str) -> None:
    async with Client(built_app.server, mode=mode) as client:
        prompts = (await client.list_prompts()).prompts
        rendered = await client.get_prompt(
            "prompts/integrate-payments", {"language": "go", "framework": "chi"}
        )
        yaml_prompt = await client.get_prompt("prompts/debug-webhook", {"event_type": "payment.failed"})
    by_name = {prompt.name: prompt for prompt in prompts}
    assert set(by_name) == {"prompts/debug-webhook", "prompts/integrate-payments"}
    integrate = by_name["prompts/integrate-payments"]
    assert integrate.title == "Integrate Tidewater payments"
    assert integrate.arguments is not None
    assert [(a.name, a.required) for a in integrate.arguments] == [
        ("language", True),
        ("framework", None),
        ("capture_mode", None),
    ]
    assert rendered.description == integrate.description
    (message,) = rendered.messages
    assert message.role == "user"
    body = text(message.content)
    assert "my go application built with chi." in body
    assert "captured immediately" in body  # inverted section for the missing capture_mode
    assert [m.role for m in yaml_prompt.messages] == ["user", "assistant", "user"]
    assert "`payment.failed`" in text(yaml_prompt.messages[0].content)


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("prompts/integrate-payments", {}, "Missing required prompt argument 'language'"),
        ("prompts/integrate-payments", {"language": "  "}, "Missing required prompt argument 'language'"),
        ("prompts/nothing", {}, "Prompt 'prompts/nothing' not found"),
    ],
)
async def test_prompt_errors(
    built_app: DocsMcpApp, name: str, arguments: dict[str, str], message: str
) -> None:
    async with Client(built_app.server) as client:
        with pytest.raises(MCPError) as info:
            await client.get_prompt(name, arguments)
    assert info.value.message == message


async def test_a_prompt_that_repeats_its_argument_is_refused_before_it_is_rendered(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # 20,000 {{a}} and a 100 KB argument rendered 2 GB in 15 s (and the answer as JSON beside it)
    template = (
        "---\ntitle: Echo\narguments:\n  - name: a\n    required: true\n---\n" + "{{a}}" * 20_000 + "\n"
    )
    pages = {"guide.md": "# Guide\n\n## Start\n\nSome text.\n", "echo.template.md": template}
    app = create_app(build_pages(tmp_path_factory, "echo", pages))
    async with Client(app.server) as client:
        with pytest.raises(MCPError) as info:
            await client.get_prompt("echo", {"a": "z" * 100_000})
        fine = await client.get_prompt("echo", {"a": "z" * 100})  # 2 MB: as much as one argument may add
    assert info.value.message == (
        "Prompt 'echo' would be longer than 4,294,304 characters with these arguments (its template "
        "repeats them); pass shorter arguments"
    )
    assert text(fine.messages[0].content) == "z" * 2_000_000


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
async def test_a_named_pipe_in_place_of_chunks_json_is_not_waited_on(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # the chunk id shown as the get_doc example was read from it: the app was never made, and every
    # call after the early answers waited forever
    index = build_pages(tmp_path_factory, "pipe", {"guide.md": "# Guide\n\n## Start\n\nSome text.\n"})
    (index / "chunks.json").unlink()
    os.mkfifo(index / "chunks.json")
    app = without_waiting_on(index / "chunks.json", lambda: create_app(index))
    assert isinstance(app, DocsMcpApp)
    async with Client(app.server) as client:
        result = await search(client, query="start")
    assert [hit["chunk_id"] for hit in result["hits"]] == ["guide.md#guide/start"]


# ── the optional arguments: max_tokens, facets, scope, the get_doc cursor ─────────────────────


async def test_budgeted_search_fits_and_says_so(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        result = await client.call_tool("search_docs", {"query": "retry backoff", "max_tokens": 300})
        plain = await search(client, query="retry backoff")
    assert not result.is_error, text_of(result)
    body = text_of(result)
    assert count_tokens(body, "o200k_base") <= 300
    data = json.loads(body)
    assert data == result.structured_content
    assert data["cut"].startswith("Fitted to max_tokens 300: ")
    kept = [hit["chunk_id"] for hit in data["hits"]]
    assert kept and kept == [hit["chunk_id"] for hit in plain["hits"]][: len(kept)]


async def test_facets_only_when_asked(built_app: DocsMcpApp) -> None:
    async with Client(built_app.server) as client:
        plain = await search(client, query="payment")
        faceted = await search(client, query="payment", facets=True, language="python")
    assert "facets" not in plain
    assert "language" not in faceted["facets"] and "scope" in faceted["facets"]
    assert all(isinstance(n, int) and n > 0 for n in faceted["facets"]["scope"].values())


async def test_get_doc_section_in_budgeted_parts_with_the_cursor(built_app: DocsMcpApp) -> None:
    chunk_id = "guides/errors.md#errors/error-code-reference-part-2"
    async with Client(built_app.server) as client:
        whole = text_of(await client.call_tool("get_doc", {"chunk_id": chunk_id, "scope": "section"}))
        assert whole.startswith("--- Section: guides/errors.md#errors/error-code-reference ")
        parts: list[str] = []
        arguments: dict[str, Any] = {"chunk_id": chunk_id, "scope": "section", "max_tokens": 200}
        for _ in range(50):
            result = await client.call_tool("get_doc", arguments)
            assert not result.is_error, text_of(result)
            parts.append(text_of(result))
            found = re.search(r'cursor "([^"]+)" ---$', parts[-1])
            if found is None:
                break
            arguments = {**arguments, "cursor": found.group(1)}
        tampered = await client.call_tool("get_doc", {**arguments, "cursor": "x" + arguments["cursor"][1:]})
        other_scope = await client.call_tool("get_doc", {**arguments, "scope": "parent"})
    assert len(parts) > 1
    assert parts[0].split("\n", 1)[0] == whole.split("\n", 1)[0]
    header = whole.split("\n", 1)[0].removesuffix(" ---")
    assert all(p.startswith(f"{header} (continued) ---\n") for p in parts[1:])
    assert all(count_tokens(p, "o200k_base") <= 200 for p in parts)
    assert tampered.is_error and other_scope.is_error
    assert "Invalid cursor" in text_of(tampered)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"chunk_id": "guides/environments.md", "scope": "page"},
            "scope must be one of: chunk, section, parent",
        ),
        (
            {"chunk_id": "guides/environments.md", "max_tokens": 10},
            "max_tokens must be between 200 and 1000000",
        ),
        ({"chunk_id": "guides/environments.md", "scope": "section", "context": 2}, "context applies only"),
    ],
)
async def test_get_doc_argument_errors(
    built_app: DocsMcpApp, arguments: dict[str, Any], message: str
) -> None:
    async with Client(built_app.server) as client:
        result = await client.call_tool("get_doc", arguments)
    assert result.is_error
    assert message in text_of(result)


STRANGE_NAMES = [
    "c#/README.md",
    "what?.md",
    "100%.md",
    "two words.md",
    "übersicht.md",
    "a&b=c.md",
    "x%20y.md",
]


async def test_every_listed_resource_uri_reads_back(tmp_path: Path) -> None:
    from docs_mcp_core.build import BuildOptions, build_index

    docs = tmp_path / "docs"
    for name in STRANGE_NAMES:
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(f"# {name}\n\nThe page called {name}.\n", encoding="utf-8")
    manifest = {"version": "1", "metadata": {"scope": "guide"},
                "taxonomy": {"scope": {"properties": {"guide": {"mcp_resource": True}}}}}  # fmt: skip
    (docs / ".docs-mcp.json").write_text(json.dumps(manifest), encoding="utf-8")
    build_index(BuildOptions(docs_dir=docs, out_dir=tmp_path / "idx"))
    app = create_app(tmp_path / "idx")
    async with Client(app.server) as client:
        resources = (await client.list_resources()).resources
        assert sorted(resource.name for resource in resources) == sorted(STRANGE_NAMES)
        for resource in resources:
            assert (
                "#" not in str(resource.uri) and "?" not in str(resource.uri) and " " not in str(resource.uri)
            )
            read = await client.read_resource(str(resource.uri))
            assert (
                text(read.contents[0]).strip() == (docs / resource.name).read_text(encoding="utf-8").strip()
            )
    app.close()


async def test_a_damaged_table_fails_resource_calls_as_internal_errors_naming_the_method(
    built_index: Path, tmp_path: Path
) -> None:
    # searches answer from the derived files, but listing and reading resources asks the table:
    # LanceDB's error came back with code 0 and no word of which call failed
    import shutil

    index = tmp_path / "index"
    shutil.copytree(built_index, index)
    for fragment in (index / ".lancedb" / "chunks.lance" / "data").iterdir():
        fragment.write_bytes(fragment.read_bytes()[: fragment.stat().st_size // 2])
    app = create_app(index)
    try:
        async with Client(app.server) as client:
            with pytest.raises(MCPError) as listed:
                await client.list_resources()
            with pytest.raises(MCPError) as read:
                await client.read_resource("docs:///guides/errors.md")
            assert (await search(client, query="retry configuration"))["hits"]  # the session goes on
    finally:
        app.close()
    for method, error in (("resources/list", listed.value), ("resources/read", read.value)):
        assert error.code == -32603
        assert error.message.startswith(f"{method} failed: ") and "rebuild" in error.message
