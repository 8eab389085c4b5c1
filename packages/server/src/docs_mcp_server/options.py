"""Server configuration: what a deployment can tune, and how defaults are resolved.

Everything here is plain data and standard library only, so the command line can resolve and check
its options before any of the heavier MCP or search machinery is imported.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from docs_mcp_core.errors import UnusablePathError, resolve_path
from docs_mcp_core.utf8 import is_utf8
from docs_mcp_server.errors import OptionsError

if TYPE_CHECKING:
    from docs_mcp_core.search import SearchOptions
    from docs_mcp_server.engine import LazyEngine

PACKAGE_NAME = "docs-mcp-server"
_T = TypeVar("_T")


def package_version() -> str:
    """The installed docs-mcp-server version (read once, from the package metadata)."""
    global _PACKAGE_VERSION
    if _PACKAGE_VERSION is None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            _PACKAGE_VERSION = version("docs-mcp-server")
        except PackageNotFoundError:  # running from a source tree without installing
            _PACKAGE_VERSION = "0.0.0+unknown"
    return _PACKAGE_VERSION


_PACKAGE_VERSION: str | None = None
DEFAULT_HTTP_PORT = 20310
DEFAULT_HTTP_HOST = "127.0.0.1"
SEARCH_TOOL = "search_docs"
GET_DOC_TOOL = "get_doc"
# the tokenizers docs_mcp_core.tokens ships (named here to keep core off the start-up path)
TOKEN_ENCODINGS = ("o200k_base", "cl100k_base")

_TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOOL_PREFIX_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # an object-store index location (s3://bucket/prefix)

ToolHandler = Callable[[dict[str, Any]], Any]
"""A custom tool body: receives the validated arguments, returns text (or JSON-able data)."""


@dataclass(frozen=True)
class CustomTool:
    """An extra MCP tool listed after ``search_docs``/``get_doc``.

    ``handler`` defaults to the echo handler of the original server: it answers with the call's
    arguments as compact JSON, which is what ``--custom-tools-json`` tools do (handy as feedback
    sinks in agent evaluations).
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: ToolHandler | None = None


@dataclass(frozen=True)
class BuildInfo:
    """Identity of a running server, reported by ``/healthz`` and the ``DOCS-MCP`` header."""

    name: str
    version: str
    git_commit: str | None = None
    build_date: str | None = None

    def to_dict(self) -> dict[str, str]:
        data = {"name": self.name, "version": self.version}
        if self.git_commit:
            data["gitCommit"] = self.git_commit
        if self.build_date:
            data["buildDate"] = self.build_date
        return data

    def header_value(self) -> str:
        parts = [f"name={self.name}", f"version={self.version}"]
        if self.git_commit:
            parts.append(f"git={self.git_commit}")
        if self.build_date:
            parts.append(f"date={self.build_date}")
        return " ".join(parts)


@dataclass(frozen=True)
class ServerOptions:
    """Options of :func:`docs_mcp_server.create_server` (the command-line flags map onto these).

    ``None`` means "use the default": name and version fall back to ``SERVER_NAME`` /
    ``SERVER_VERSION`` and then to built-in defaults, git commit and build date to ``GIT_COMMIT`` /
    ``BUILD_DATE``; ranking knobs fall back to the search engine's defaults.
    """

    index_dir: Path | str  # a folder, or an object-store URI such as s3://bucket/prefix (kept as given)
    name: str | None = None
    version: str | None = None
    tool_prefix: str | None = None
    proximity_weight: float | None = None
    phrase_slop: int | None = None
    vector_weight: float | None = None
    vector_cooldown_seconds: float | None = None
    ranking: Literal["default", "original"] | None = None
    token_encoding: Literal["o200k_base", "cl100k_base"] | None = None  # max_tokens budgets' tokenizer
    query_embedding_api_key: str | None = None
    query_embedding_base_url: str | None = None
    cursor_secret: str | None = None
    custom_tools: Sequence[CustomTool] = field(default_factory=tuple)
    git_commit: str | None = None
    build_date: str | None = None
    storage_options: Mapping[str, str] | None = None  # object-store settings over the AWS_* variables
    reload_interval: float | None = None  # object stores: seconds between checks for a new build (0: off)
    index_cache_dir: Path | None = None  # object stores: where generations are copied (default: temporary)

    def __post_init__(self) -> None:
        if isinstance(self.index_dir, str) and _URI_RE.match(self.index_dir):
            object.__setattr__(self, "index_dir", self.index_dir.rstrip("/"))
        else:
            try:
                folder = resolve_path(Path(self.index_dir).expanduser(), "--index-dir")
            except UnusablePathError as exc:
                raise OptionsError(str(exc)) from None
            object.__setattr__(self, "index_dir", folder)
        object.__setattr__(self, "custom_tools", tuple(self.custom_tools))
        validate_options(self)

    @property
    def search_tool_name(self) -> str:
        return f"{self.tool_prefix}_{SEARCH_TOOL}" if self.tool_prefix else SEARCH_TOOL

    @property
    def get_doc_tool_name(self) -> str:
        return f"{self.tool_prefix}_{GET_DOC_TOOL}" if self.tool_prefix else GET_DOC_TOOL

    def open_engine(self) -> LazyEngine:
        """The index these options serve, to be opened on first use."""
        from docs_mcp_server.engine import LazyEngine

        return LazyEngine(
            self.index_dir,
            search_options=self.search_options,  # called when the index opens: it imports the engine
            storage_options=self.storage_options,
            reload_interval=self.reload_interval,
            cache_dir=self.index_cache_dir,
        )

    def resolved_name(self, env: Mapping[str, str] | None = None) -> str:
        """Server name: option, else ``SERVER_NAME``, else ``<prefix>-docs-server``, else the package name."""
        env = os.environ if env is None else env
        if self.name:
            return self.name
        from_env = env.get("SERVER_NAME", "").strip()
        if from_env:
            return from_env
        return f"{self.tool_prefix}-docs-server" if self.tool_prefix else PACKAGE_NAME

    def resolved_version(self, env: Mapping[str, str] | None = None) -> str:
        """Server version: option, else ``SERVER_VERSION``, else this package's version."""
        env = os.environ if env is None else env
        if self.version:
            return self.version
        return env.get("SERVER_VERSION", "").strip() or package_version()

    def search_options(self) -> SearchOptions:
        """The search engine's options: these options' values, the engine's defaults for ``None``."""
        from docs_mcp_core.search import SearchOptions

        default = SearchOptions()
        return SearchOptions(
            proximity_weight=_given(self.proximity_weight, default.proximity_weight),
            phrase_slop=_given(self.phrase_slop, default.phrase_slop),
            vector_weight=_given(self.vector_weight, default.vector_weight),
            vector_cooldown_seconds=_given(self.vector_cooldown_seconds, default.vector_cooldown_seconds),
            cursor_secret=self.cursor_secret,
            ranking=_given(self.ranking, default.ranking),
            token_encoding=_given(self.token_encoding, default.token_encoding),
            query_embedding_api_key=self.query_embedding_api_key,
            query_embedding_base_url=self.query_embedding_base_url,
        )

    def build_info(self, env: Mapping[str, str] | None = None) -> BuildInfo:
        env = os.environ if env is None else env
        return BuildInfo(
            name=self.resolved_name(env),
            version=self.resolved_version(env),
            git_commit=self.git_commit or env.get("GIT_COMMIT", "").strip() or None,
            build_date=self.build_date or env.get("BUILD_DATE", "").strip() or None,
        )


def _given(value: _T | None, default: _T) -> _T:
    return default if value is None else value


@dataclass(frozen=True)
class HttpLimits:
    """Bounds that keep slow, idle and abandoned HTTP clients from tying up the server.

    ``header_timeout``: seconds a connection has to send a request's complete headers, from the
    moment it opens or its previous response ends (an idle kept-alive connection is closed sooner,
    after :data:`KEEP_ALIVE_SECONDS`). ``body_timeout``: seconds to send a whole request body.
    ``send_timeout``: seconds a response may wait for its client to read it (the connection's
    buffers full, nothing taken) before the connection is closed.
    ``max_connections``: open connections; a new one from a client holding fewer than another
    closes that client's longest waiting connection, else it is answered 503 and closed (see
    :mod:`docs_mcp_server.http_connections`). ``max_sessions``:
    open MCP sessions; a request that would open another first ends the longest idle session of the
    client (peer address) holding the most, and gets 503 only while every session has a request in
    flight. ``session_idle_timeout``: seconds a session may go without sending a request (an open
    event stream does not count) before it is closed; its id then gets 404 and the client starts a
    new session. See :mod:`docs_mcp_server.http_sessions`.
    """

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    send_timeout: float = 30.0
    max_connections: int = 1000
    max_sessions: int = 500
    session_idle_timeout: float = 600.0

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout", "send_timeout", "session_idle_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                flag = "--" + name.replace("_", "-")
                raise OptionsError(f"{flag} must be a number of seconds > 0, got {value!r}")
        for name in ("max_connections", "max_sessions"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                flag = "--" + name.replace("_", "-")
                raise OptionsError(f"{flag} must be a whole number >= 1, got {value!r}")


KEEP_ALIVE_SECONDS = 5  # an idle kept-alive HTTP connection is closed after this long


def validate_options(options: ServerOptions) -> None:
    """Reject option values the server cannot run with (raises :class:`OptionsError`)."""
    if options.tool_prefix is not None and not _TOOL_PREFIX_RE.match(options.tool_prefix):
        raise OptionsError(
            f"tool prefix {options.tool_prefix!r} is invalid: use only letters, digits, '-' and '_'"
        )
    for name in (options.search_tool_name, options.get_doc_tool_name):
        if not _TOOL_NAME_RE.match(name):
            raise OptionsError(
                f"Built-in tool name '{name}' exceeds 64 characters or contains invalid characters. "
                "Use a shorter toolPrefix."
            )
    if options.proximity_weight is not None and not options.proximity_weight > 0:
        raise OptionsError(f"proximity weight must be a positive number, got {options.proximity_weight!r}")
    if options.vector_weight is not None and not options.vector_weight > 0:
        raise OptionsError(f"vector weight must be a positive number, got {options.vector_weight!r}")
    cooldown = options.vector_cooldown_seconds
    if cooldown is not None and not (math.isfinite(cooldown) and cooldown >= 0):
        raise OptionsError(f"vector cooldown must be a number of seconds >= 0, got {cooldown!r}")
    if options.phrase_slop is not None and not 0 <= options.phrase_slop <= 5:
        raise OptionsError(f"phrase slop must be an integer from 0 to 5, got {options.phrase_slop!r}")
    if options.ranking is not None and options.ranking not in ("default", "original"):
        raise OptionsError(f"ranking must be one of: default, original (got {options.ranking!r})")
    if options.token_encoding is not None and options.token_encoding not in TOKEN_ENCODINGS:
        raise OptionsError(
            f"token encoding must be one of: {', '.join(TOKEN_ENCODINGS)} (got {options.token_encoding!r})"
        )
    validate_custom_tools(options.custom_tools, {options.search_tool_name, options.get_doc_tool_name})
    _check_identity(options.build_info())
    if options.cursor_secret is not None and not is_utf8(options.cursor_secret):
        # the engine signs with its UTF-8 bytes: the server started, and every search then failed
        raise OptionsError(
            "--cursor-secret (or DOCS_MCP_CURSOR_SECRET) is not valid UTF-8 text; give it as UTF-8"
        )


MAX_IDENTITY_LENGTH = 256
"""Characters of each of --name, --server-version, --git-commit and --build-date."""


def _check_identity(info: BuildInfo) -> None:
    """The identity goes into the ``DOCS-MCP`` response header, ``/healthz`` and ``serverInfo``: a
    CR/LF there split HTTP responses (a header of the operator's text), and bytes that are not UTF-8
    (``\\udcff`` from argv) failed every answer: /healthz with 500, stdio before ``initialize``."""
    given = (
        ("--name (or SERVER_NAME)", info.name),
        ("--server-version (or SERVER_VERSION)", info.version),
        ("--git-commit (or GIT_COMMIT)", info.git_commit),
        ("--build-date (or BUILD_DATE)", info.build_date),
    )
    for flag, value in given:
        if value is None:
            continue
        if not is_utf8(value):
            raise OptionsError(f"{flag} is not valid UTF-8 text; give it as UTF-8")
        if len(value) > MAX_IDENTITY_LENGTH:  # in the header of every answer: most clients read 8-16 KB
            raise OptionsError(
                f"{flag} is {len(value):,} characters long; at most {MAX_IDENTITY_LENGTH} are allowed, "
                "as it is sent in the DOCS-MCP header of every HTTP answer"
            )
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
            raise OptionsError(
                f"{flag} {value!r} holds a control character (a newline, a tab); it is sent in the "
                "DOCS-MCP HTTP header, so give plain text"
            )


def validate_custom_tools(tools: Sequence[CustomTool], builtin_names: set[str]) -> None:
    """Apply the original server's naming rules to custom tools, plus basic schema sanity."""
    seen: set[str] = set()
    for tool in tools:
        if not isinstance(tool.name, str) or not _TOOL_NAME_RE.match(tool.name):
            raise OptionsError(
                f"Custom tool name '{tool.name}' must match MCP spec: alphanumeric/dash/underscore, 1-64 chars."
            )
        if tool.name in builtin_names:
            raise OptionsError(f"Custom tool name '{tool.name}' collides with a built-in tool name.")
        if tool.name in seen:
            raise OptionsError(f"Duplicate custom tool name '{tool.name}'.")
        seen.add(tool.name)
        if not isinstance(tool.description, str) or not tool.description.strip():
            raise OptionsError(f"Custom tool '{tool.name}' needs a non-empty description.")
        schema = tool.input_schema
        if not isinstance(schema, Mapping) or schema.get("type") != "object":
            raise OptionsError(f'Custom tool \'{tool.name}\' needs an inputSchema with "type": "object".')
