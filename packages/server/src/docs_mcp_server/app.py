"""The MCP surface of a docs-mcp index: tools, resources and prompts on a low-level MCP ``Server``.

``search_docs`` and ``get_doc`` (optionally prefixed) answer with the search engine's results; files
under taxonomy values marked ``mcp_resource`` are readable as ``docs:///<filepath>`` resources; the
prompt templates compiled into the index are served as MCP prompts. Tool schemas are built at
start-up from ``metadata.json``; the engine itself is opened lazily (see :mod:`.engine`).
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote, unquote, urlsplit

import anyio
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from docs_mcp_core.errors import shown
from docs_mcp_server import prompts as prompt_support
from docs_mcp_server.arguments import (
    ToolArguments,
    check_custom_arguments,
    parse_get_doc_request,
    parse_search_request,
)
from docs_mcp_server.boot import load_index_metadata
from docs_mcp_server.engine import LazyEngine
from docs_mcp_server.errors import ArgumentError, IndexUnavailableError, OptionsError, PromptRequestError
from docs_mcp_server.generation import Lease
from docs_mcp_server.logs import log
from docs_mcp_server.metadata_view import MetadataView
from docs_mcp_server.options import TOKEN_ENCODINGS, BuildInfo, CustomTool, ServerOptions

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from docs_mcp_core.search import Query, SearchEngine
from docs_mcp_server.schemas import (
    example_chunk_id,
    get_doc_description,
    get_doc_schema,
    search_docs_description,
    search_docs_schema,
    vector_search_available,
)
from docs_mcp_server.strings import file_title

RESOURCE_SCHEME = "docs"
RESOURCE_NOT_FOUND = -32002
MIME_MARKDOWN = "text/markdown"
_URI_PATH_SAFE = "/!$&'()*+,;=:@~"  # left as they are in a URI's path (RFC 3986 sub-delims, ":", "@")


async def _named_invalid_params(ctx: Any, call_next: Any) -> Any:
    """Params of the wrong shape (``resources/read`` with a numeric ``uri``, ``prompts/get`` with
    an argument that is not a string ...) get ``-32602`` naming the field and what it must be; the
    SDK's own answer, "Invalid request parameters" with empty data, names nothing to correct. An
    error whose data repeats a value the client sent (the SDK's "Method not found" carries the
    whole method name) repeats only its start."""
    from pydantic import ValidationError

    try:
        return await call_next(ctx)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(part) for part in error["loc"]) or "params"
        message = f"Invalid request parameters for {shown(ctx.method)}: {shown(field)}: {error['msg']}"
        raise MCPError(code=types.INVALID_PARAMS, message=message) from None
    except MCPError as exc:
        if isinstance(exc.data, str) and shown(exc.data) != exc.data:
            raise MCPError(code=exc.code, message=exc.message, data=shown(exc.data)) from None
        raise


def _failure_message(what: str, exc: Exception) -> str:
    """What a caller of ``what`` (a tool, ``resources/list``...) is told of the engine's ``exc``: a
    docs-mcp error as it is; anything else is logged, and LanceDB's errors (a table's file damaged
    or missing after the build) say to rebuild, without the library's source location."""
    from docs_mcp_core.errors import DocsMcpError

    if isinstance(exc, DocsMcpError | IndexUnavailableError):
        return str(exc)
    log(logging.ERROR, f"{what} failed", error=f"{type(exc).__name__}: {exc}")
    text = str(exc)
    if "lance error" in text.lower():
        detail = text.split(", /", 1)[0].strip()
        return f"{what} failed: the index's table cannot be read ({detail}); rebuild it with docs-mcp build"
    return f"{what} failed: {text}" if text else f"{what} failed"


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def _text_result(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=False
    )


class DocsMcpApp:
    """One index served over MCP: owns the ``Server``, the lazily opened engine and the build info."""

    def __init__(
        self, options: ServerOptions, metadata: MetadataView, *, engine: LazyEngine | None = None
    ) -> None:
        self.options = options
        self.metadata = metadata
        self.build_info: BuildInfo = options.build_info()
        self.engine = engine or options.open_engine()
        self.search_tool = options.search_tool_name
        self.get_doc_tool = options.get_doc_tool_name
        encoding = options.token_encoding or TOKEN_ENCODINGS[0]
        self._search_args = ToolArguments(
            self.search_tool, search_docs_schema(metadata, encoding), filters=list(metadata.taxonomy)
        )
        self._get_doc_args = ToolArguments(
            self.get_doc_tool, get_doc_schema(example_chunk_id(options.index_dir), encoding), filters=()
        )
        self._custom = _checked_custom_tools(options.custom_tools)
        available = vector_search_available(metadata, options.query_embedding_api_key)
        self.tools: list[types.Tool] = [
            types.Tool(
                name=self.search_tool,
                description=search_docs_description(metadata, vector_search_available=available),
                input_schema=dict(self._search_args.schema),
            ),
            types.Tool(
                name=self.get_doc_tool,
                description=get_doc_description(metadata),
                input_schema=dict(self._get_doc_args.schema),
            ),
            *(
                types.Tool(name=tool.name, description=tool.description, input_schema=dict(tool.input_schema))
                for tool, _ in self._custom.values()
            ),
        ]
        self._schemas = {tool.name: tool.input_schema for tool in self.tools}
        self._resources: tuple[int, list[types.Resource]] | None = None  # (generation, resources)
        self._resource_lock = threading.Lock()
        self.server: Server[Any] = Server(
            self.build_info.name,
            version=self.build_info.version,
            instructions=metadata.instructions,
            get_tool_input_schema=self._schemas.get,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        self.server.middleware.append(self._non_object_arguments)
        self.server.middleware.append(_named_invalid_params)

    async def _non_object_arguments(self, ctx: Any, call_next: Any) -> Any:
        """A ``tools/call`` whose ``arguments`` are not an object gets the tool's documented
        ``isError`` answer (``<tool> input must be an object``) rather than the SDK's
        "Invalid request parameters": the SDK checks the params' shape before any handler runs."""
        params = ctx.params
        if ctx.method == "tools/call" and isinstance(params, Mapping):
            name, arguments = params.get("name"), params.get("arguments")
            if isinstance(name, str) and arguments is not None and not isinstance(arguments, Mapping):
                result = await self.call_tool(name, cast(Any, arguments))
                return result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude_unset=True)
        return await call_next(ctx)

    # -- tools ---------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(self.tools))

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await self.call_tool(params.name, params.arguments)

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run one tool call and shape its ``CallToolResult`` (errors become ``isError`` results)."""
        log(logging.DEBUG, "tool call", tool=name)
        if name == self.search_tool:
            return await self._search_docs(arguments)
        if name == self.get_doc_tool:
            return await self._get_doc(arguments)
        if name in self._custom:
            return await self._run_custom(name, arguments)
        return _error_result(f"Unknown tool '{shown(name)}'.")

    async def _search_docs(self, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        try:
            request = parse_search_request(self._search_args, arguments, list(self.metadata.taxonomy))
        except ArgumentError as exc:
            return _error_result(str(exc))

        try:
            with await self._lease() as engine:
                result = await engine.search_async(request.query, **request.search_kwargs())
            data = result.to_dict()
        except Exception as exc:  # noqa: BLE001 - tool boundary: every failure becomes an isError result
            return self._engine_failure(self.search_tool, exc)
        return _text_result(result.text(), data)

    async def _get_doc(self, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        try:
            request = parse_get_doc_request(self._get_doc_args, arguments)
        except ArgumentError as exc:
            return _error_result(str(exc))
        try:
            with await self._lease() as engine:
                if request.max_tokens is None and request.cursor is None:
                    text = await engine.get_doc_async(request.chunk_id, request.context, scope=request.scope)
                else:
                    # an answer fitted to a budget parses its markdown and counts its tokens: seconds
                    # for a section of megabytes, which on the event loop held every other request
                    text = await anyio.to_thread.run_sync(
                        lambda: engine.get_doc(
                            request.chunk_id,
                            request.context,
                            scope=request.scope,
                            max_tokens=request.max_tokens,
                            cursor=request.cursor,
                        )
                    )
        except Exception as exc:  # noqa: BLE001 - tool boundary: every failure becomes an isError result
            return self._engine_failure(self.get_doc_tool, exc)
        return _text_result(text)

    async def parse_query(self, text: str) -> Query:
        """``text`` read as the served index's search reads it (what the playground highlights by).

        Raises :class:`~docs_mcp_core.errors.SearchError` for an empty query and
        :class:`IndexUnavailableError` when the index cannot be opened.
        """
        with await self._lease() as engine:
            return engine.parse_query(text)

    async def _lease(self) -> Lease:
        """A hold on the index generation being served, for the length of one call; waits (off the
        event loop) while the index is still opening or a rebuilt one is being opened."""
        lease = self.engine.try_lease()
        if lease is None:
            lease = await anyio.to_thread.run_sync(self.engine.lease)
        return lease

    def close(self) -> None:
        """Stop serving the index (its snapshot is removed once no call uses it)."""
        self.engine.close()

    def _engine_failure(self, tool: str, exc: Exception) -> types.CallToolResult:
        return _error_result(_failure_message(tool, exc))

    async def _run_custom(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        tool, validator = self._custom[name]
        try:
            args = check_custom_arguments(name, validator, arguments)
            handler = tool.handler
            if handler is None:
                from docs_mcp_server.custom_tools import echo_arguments

                handler = echo_arguments
            if inspect.iscoroutinefunction(handler):
                output = await cast(Any, handler)(args)
            else:
                output = await anyio.to_thread.run_sync(handler, args)
        except Exception as exc:  # noqa: BLE001 - a custom tool's failure is reported to the caller
            return _error_result(str(exc) or f"{name} failed")
        if isinstance(output, types.CallToolResult):
            return output
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return _text_result(text)

    # -- resources -----------------------------------------------------------------------------

    async def resources(self) -> list[types.Resource]:
        """Files under taxonomy values marked ``mcp_resource`` in the index being served."""
        lease = await self._lease()
        with lease:
            return await self._resources_of(lease)

    async def _resources_of(self, lease: Lease) -> list[types.Resource]:
        """The resources of the leased generation (listed once per generation)."""
        cached = self._resources
        if cached is not None and cached[0] == lease.generation:
            return cached[1]
        return await anyio.to_thread.run_sync(self._collect_resources, lease)

    def _collect_resources(self, lease: Lease) -> list[types.Resource]:
        with self._resource_lock:
            cached = self._resources
            if cached is None or cached[0] != lease.generation:
                cached = self._resources = (lease.generation, self._list_resource_files(lease.engine))
            return cached[1]

    def _list_resource_files(self, engine: SearchEngine) -> list[types.Resource]:
        from docs_mcp_core.ordering import sort_key

        metadata = MetadataView.from_metadata(engine.metadata)
        wanted = [(key, value) for key, spec in metadata.taxonomy.items() for value in spec.resource_values]
        if not wanted:
            return []
        paths: set[str] = set()
        for key, value in wanted:
            paths.update(engine.list_filepaths({key: value}))
        return [
            types.Resource(
                uri=resource_uri(path),
                name=path,
                title=file_title(path, metadata.file_title(path)),
                description=path,
                mime_type=MIME_MARKDOWN,
            )
            for path in sorted(paths, key=sort_key)
        ]

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            return types.ListResourcesResult(resources=await self.resources())
        except Exception as exc:  # every failure is an internal error saying what failed
            raise MCPError(
                code=types.INTERNAL_ERROR, message=_failure_message("resources/list", exc)
            ) from exc

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        filepath = resource_filepath(uri)
        try:
            lease = await self._lease()
            with lease as engine:
                listed = {resource.name for resource in await self._resources_of(lease)}
                if filepath not in listed:
                    raise MCPError(code=RESOURCE_NOT_FOUND, message=f"Resource not found: {shown(uri)}")
                text = await engine.file_content_async(filepath)  # from memory: no thread hop
        except MCPError:
            raise
        except Exception as exc:  # every failure is an internal error saying what failed
            raise MCPError(
                code=types.INTERNAL_ERROR, message=_failure_message("resources/read", exc)
            ) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=MIME_MARKDOWN, text=text)]
        )

    # -- prompts -------------------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompt_support.list_prompts(self.metadata.prompts))

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            return prompt_support.get_prompt(self.metadata.prompts, params.name, params.arguments or {})
        except PromptRequestError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from exc


def resource_uri(filepath: str) -> str:
    """The ``docs:///<filepath>`` URI of a corpus file, percent-encoded so that it reads back:
    ``#``, ``?``, ``%``, spaces and non-ASCII characters in the path are escaped, ``/`` is kept."""
    return f"{RESOURCE_SCHEME}:///{quote(filepath, safe=_URI_PATH_SAFE)}"


def resource_filepath(uri: str) -> str:
    """The corpus file a ``docs:///<filepath>`` URI names (percent-decoded), or a JSON-RPC error."""
    invalid = MCPError(
        code=types.INVALID_PARAMS, message=f"Invalid URI: '{shown(uri)}'. Expected docs:///<filepath>"
    )
    try:
        parts = urlsplit(uri)
    except ValueError:  # one Python cannot split: "docs://[::1/a.md" (an unclosed IPv6 address)
        raise invalid from None
    if not parts.scheme:
        raise invalid
    if parts.scheme.lower() != RESOURCE_SCHEME:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"Invalid URI scheme: {shown(parts.scheme)}:. Expected '{RESOURCE_SCHEME}:'",
        )
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    path = unquote(path)
    if not path:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid URI: missing filepath in '{shown(uri)}'")
    return path


def create_app(index_dir: str | Path, **options: Any) -> DocsMcpApp:
    """Check ``index_dir`` (metadata.json, ``.lancedb``) and build the MCP app serving it.

    ``options`` are the fields of :class:`~docs_mcp_server.options.ServerOptions`. Raises
    :class:`~docs_mcp_server.boot.BootError` for an unusable index directory and
    :class:`~docs_mcp_server.options.OptionsError` for invalid options.
    """
    server_options = ServerOptions(index_dir=index_dir, **options)
    metadata = load_index_metadata(server_options.index_dir, server_options.storage_options)
    return DocsMcpApp(server_options, metadata)


def create_server(index_dir: str | Path, **options: Any) -> Server[Any]:
    """An MCP ``Server`` for the index in ``index_dir`` (see :func:`create_app` for the options)."""
    return create_app(index_dir, **options).server


def _checked_custom_tools(tools: Sequence[CustomTool]) -> dict[str, tuple[CustomTool, Draft202012Validator]]:
    """Each custom tool with a validator of its input schema (jsonschema, a tenth of the MCP SDK's
    import time, is imported only for them); an invalid schema is an :class:`OptionsError`."""
    if not tools:
        return {}
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from docs_mcp_server.custom_tools import reference_problem, schema_validator

    checked: dict[str, tuple[CustomTool, Draft202012Validator]] = {}
    for tool in tools:
        try:
            Draft202012Validator.check_schema(dict(tool.input_schema))
        except SchemaError as exc:
            raise OptionsError(
                f"Custom tool '{tool.name}' has an invalid inputSchema: {exc.message}"
            ) from exc
        validator = schema_validator(dict(tool.input_schema))
        if (problem := reference_problem(validator)) is not None:
            raise OptionsError(f"Custom tool '{tool.name}' has an invalid inputSchema: {problem}")
        checked[tool.name] = (tool, validator)
    return checked
