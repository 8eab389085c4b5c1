"""The ``docs-mcp-server`` command line: its flags and their checks, the short answer to a usage
error, and the step from parsed flags to :class:`~docs_mcp_server.options.ServerOptions`.

Only the standard library and the server's light modules are imported here: the parser is built on
every start, before the client's opening request is answered.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from docs_mcp_server.options import (
    DEFAULT_HTTP_HOST,
    DEFAULT_HTTP_PORT,
    KEEP_ALIVE_SECONDS,
    PACKAGE_NAME,
    TOKEN_ENCODINGS,
    HttpLimits,
    package_version,
)

if TYPE_CHECKING:
    from docs_mcp_server.options import ServerOptions

EXIT_OK, EXIT_BOOT_FAILED, EXIT_USAGE = 0, 1, 2
TRANSPORTS = ("stdio", "http")

EPILOG = """\
environment variables:
  SERVER_NAME, SERVER_VERSION  defaults for --name / --server-version
  STATELESS=true               same as --stateless
  DOCS_MCP_WORKERS             default for --workers
  DOCS_MCP_WORKER_CRASH_SECONDS  a worker and its replacement that both die sooner after their start stop the server (default 10)
  DOCS_MCP_WORKER_LIVENESS_SECONDS  a worker silent for longer is killed and replaced (default 10; 0: off)
  DOCS_MCP_WORKER_FIRST_BEAT_SECONDS  time a starting worker has for its first beat, on top of that (default 60)
  LOG_LEVEL, LOG_PRETTY=true   defaults for --log-level / --log-pretty
  GIT_COMMIT, BUILD_DATE       defaults for --git-commit / --build-date
  DOCS_MCP_AUTH_TOKEN          default for --auth-token
  DOCS_MCP_CURSOR_SECRET       default for --cursor-secret
  PLAYGROUND_PASSWORD          default for --playground-password
  DOCS_MCP_RELOAD_CHECK_SECONDS  how often a rebuilt local index is looked for (default 1)
  DOCS_MCP_DISPLAY_CACHE_MB    hit text kept (default 4096 mapped, 128 held; 0 reads every page from the index)
  DOCS_MCP_VECTOR_CACHE_MB     memory for vectors searched in process (default 48; 0 leaves them in the index)
  DOCS_MCP_CONTENT_CACHE_MB    memory for chunk text served by get_doc (default 256; 0 reads it from the index)
  OPENAI_API_KEY               default for --query-embedding-api-key
  AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION,
  AWS_ALLOW_HTTP               object-store settings for an s3:// --index-dir (see --storage-option)
"""


def _number(kind: type[float] | type[int]):
    def parse(value: str) -> float | int:
        try:
            return kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid {'integer' if kind is int else 'numeric'} value {value!r}"
            ) from None

    return parse


def _port(value: str) -> int:
    port = _number(int)(value)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be between 0 and 65535, got {value!r}")
    return int(port)


def _seconds(value: str) -> float:
    seconds = _number(float)(value)
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {value!r}")
    return float(seconds)


def _index_location(value: str) -> Path | str:
    from docs_mcp_core.errors import StorageError
    from docs_mcp_core.index.location import index_location

    try:
        return index_location(value)
    except StorageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _storage_option(value: str) -> tuple[str, str]:
    from docs_mcp_core.errors import StorageError
    from docs_mcp_core.index.location import parse_storage_option

    try:
        return parse_storage_option(value)
    except StorageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _PrintVersion(argparse.Action):
    """``--version`` (and its older name ``--about``): print ``docs-mcp-server <version>`` and exit.

    The version is read when the flag is used, so building the parser stays off the start-up path."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.pop("default", None)
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(f"{PACKAGE_NAME} {package_version()}")
        parser.exit()


USAGE = f"{PACKAGE_NAME} --index-dir DIR [options]"
ADVICE = f"usage: {USAGE}  (`{PACKAGE_NAME} --help` lists every option)"
# flags of `docs-mcp build` that people give the server, which serves what that command built
_BUILD_FLAGS = ("--docs-dir", "--out")


class _Parser(argparse.ArgumentParser):
    """argparse with a short answer to a usage error: the error, then one line of advice (the
    full usage block of 40 options would bury the one line that matters)."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments:"):
            given = message.removeprefix("unrecognized arguments:").split()
            if any(word.split("=", 1)[0] in _BUILD_FLAGS for word in given):
                message = (
                    f"{message}: the server serves an index, not a docs folder; build one with "
                    "`docs-mcp build --docs-dir DOCS --out INDEX`, then run "
                    f"`{PACKAGE_NAME} --index-dir INDEX`"
                )
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n{ADVICE}\n")


def build_parser() -> argparse.ArgumentParser:
    """The command's parser: every flag, its check and its help (``--help`` prints them in this order)."""
    parser = _Parser(
        prog=PACKAGE_NAME,
        usage=USAGE,
        description="Serve a docs-mcp index (search_docs, get_doc, resources, prompts) over MCP.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--index-dir",
        type=_index_location,
        metavar="DIR",
        help="directory written by `docs-mcp build --out` (metadata.json + .lancedb/), "
        "or an object-store URI such as s3://bucket/prefix",
    )
    parser.add_argument(
        "--storage-option",
        action="append",
        default=[],
        type=_storage_option,
        metavar="KEY=VALUE",
        help="object-store setting for an s3:// index (endpoint, region, access_key_id, secret_access_key, "
        "session_token, allow_http; default: the AWS_* environment variables); repeatable",
    )
    parser.add_argument(
        "--reload-interval",
        type=_seconds,
        metavar="SECONDS",
        help="s3:// index: check metadata.json for a newly published build this often, and switch to it "
        "once fetched (default 30; 0: never). A local folder is checked every second.",
    )
    parser.add_argument(
        "--index-cache-dir",
        type=Path,
        metavar="DIR",
        help="s3:// index: the local folder the served generation is copied to (default: a temporary "
        "folder, removed at exit); a copy left there by an earlier run is reused when it still matches",
    )
    parser.add_argument(
        "--version", "--about", action=_PrintVersion, help="print the program version and exit"
    )
    _add_transport_flags(parser)
    _add_http_limit_flags(parser)
    _add_identity_flags(parser)
    _add_search_flags(parser)
    _add_logging_flags(parser)
    return parser


def _add_transport_flags(parser: argparse.ArgumentParser) -> None:
    """How clients reach the server: stdio or HTTP, its address, workers and who may call it."""
    env = os.environ
    transport = parser.add_argument_group("transport")
    transport.add_argument("--transport", choices=TRANSPORTS, default="stdio", help="stdio (default) or http")
    transport.add_argument(
        "--host", default=DEFAULT_HTTP_HOST, help=f"HTTP bind address (default {DEFAULT_HTTP_HOST})"
    )
    transport.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_HTTP_PORT,
        help=f"HTTP port (default {DEFAULT_HTTP_PORT}; 0 picks a free port; a busy port is an error)",
    )
    transport.add_argument(
        "--stateless",
        action="store_true",
        default=env.get("STATELESS", "").strip().lower() == "true",
        help="HTTP without sessions: every POST is served on its own (for load-balanced replicas)",
    )
    transport.add_argument(
        "--workers",
        type=_number(int),
        default=env.get("DOCS_MCP_WORKERS") or 1,
        metavar="N",
        help="HTTP: serve the port from N processes, which share the index's derived files through "
        "the page cache (default 1; more than 1 needs --stateless)",
    )
    transport.add_argument(
        "--auth-token",
        default=env.get("DOCS_MCP_AUTH_TOKEN") or None,
        metavar="TOKEN",
        help="require `Authorization: Bearer <token>` on /mcp (HTTP)",
    )
    transport.add_argument(
        "--playground",
        action="store_true",
        help="HTTP: also serve a web page at / for exploring the index (talks to /mcp like an agent)",
    )
    transport.add_argument(
        "--playground-password",
        metavar="PASSWORD",
        default=env.get("PLAYGROUND_PASSWORD") or None,
        help="HTTP: put the playground page and /mcp behind a login with this password "
        "(Bearer <password> also opens /mcp; so does --auth-token)",
    )


def _add_identity_flags(parser: argparse.ArgumentParser) -> None:
    """What the server says it is: its name, version, tool names and build stamp."""
    identity = parser.add_argument_group("identity")
    identity.add_argument(
        "--name",
        help="server name reported to clients (default: SERVER_NAME, else <prefix>-docs-server, else "
        "docs-mcp-server)",
    )
    identity.add_argument(
        "--server-version",
        metavar="VERSION",
        help="server version reported to clients (default: SERVER_VERSION, else the program's version)",
    )
    identity.add_argument(
        "--tool-prefix", metavar="PREFIX", help="prefix for the built-in tools: 'acme' gives acme_search_docs"
    )
    identity.add_argument(
        "--git-commit", metavar="SHA", help="git commit shown by /healthz and the DOCS-MCP header"
    )
    identity.add_argument(
        "--build-date", metavar="DATE", help="build date shown by /healthz and the DOCS-MCP header"
    )
    identity.add_argument(
        "--custom-tools-json",
        metavar="JSON",
        help="extra echo tools: JSON array of {name, description, inputSchema} (or @file)",
    )


def _add_search_flags(parser: argparse.ArgumentParser) -> None:
    """The search engine's knobs (:class:`docs_mcp_core.search.SearchOptions`)."""
    search = parser.add_argument_group("search")
    search.add_argument(
        "--proximity-weight",
        type=_number(float),
        metavar="W",
        help="weight of exact-phrase matches in rank fusion (default 1.25)",
    )
    search.add_argument(
        "--phrase-slop",
        type=_number(int),
        metavar="N",
        help="words allowed between phrase terms, 0-5 (default 0)",
    )
    search.add_argument(
        "--vector-weight", type=_number(float), metavar="W", help="weight of the vector ranking (default 1)"
    )
    search.add_argument(
        "--ranking", choices=("default", "original"), help="our ranking (default) or the upstream recipe"
    )
    search.add_argument(
        "--token-encoding",
        choices=TOKEN_ENCODINGS,
        help="tokenizer that counts the tools' max_tokens budgets (default o200k_base)",
    )
    search.add_argument(
        "--vector-cooldown",
        type=_number(float),
        metavar="SECONDS",
        help="after a failed query embedding, search lexically this long before trying again (default 60)",
    )
    search.add_argument(
        "--query-embedding-api-key", metavar="KEY", help="API key for embedding queries (else OPENAI_API_KEY)"
    )
    search.add_argument(
        "--query-embedding-base-url", metavar="URL", help="base URL of an OpenAI-compatible embeddings API"
    )
    search.add_argument(
        "--cursor-secret",
        default=os.environ.get("DOCS_MCP_CURSOR_SECRET") or None,
        metavar="SECRET",
        help="key for signing pagination cursors (default: derived from metadata.json; the same on every "
        "replica)",
    )


def _add_logging_flags(parser: argparse.ArgumentParser) -> None:
    env = os.environ
    logs = parser.add_argument_group("logging")
    logs.add_argument(
        "--log-level",
        default=env.get("LOG_LEVEL") or "info",
        metavar="LEVEL",
        help="trace, debug, info (default), warning, error or fatal",
    )
    logs.add_argument(
        "--log-pretty",
        action="store_true",
        default=env.get("LOG_PRETTY", "").strip().lower() == "true",
        help="human-readable logs instead of JSON lines (stderr)",
    )


def _add_http_limit_flags(parser: argparse.ArgumentParser) -> None:
    """Flags bounding what slow, idle and abandoned HTTP clients can hold (see :class:`HttpLimits`)."""
    default = HttpLimits()
    limits = parser.add_argument_group(
        "HTTP limits",
        f"idle kept-alive connections are closed after {KEEP_ALIVE_SECONDS} seconds",
    )
    limits.add_argument(
        "--header-timeout",
        type=_number(float),
        default=default.header_timeout,
        metavar="SECONDS",
        help="time a connection has to send a request's headers, else 408 and closed "
        f"(default {default.header_timeout:g})",
    )
    limits.add_argument(
        "--body-timeout",
        type=_number(float),
        default=default.body_timeout,
        metavar="SECONDS",
        help=f"time to send a request's body once its headers are in (default {default.body_timeout:g})",
    )
    limits.add_argument(
        "--send-timeout",
        type=_number(float),
        default=default.send_timeout,
        metavar="SECONDS",
        help="time a response may wait for its client to read it, else its connection is closed "
        f"(default {default.send_timeout:g})",
    )
    limits.add_argument(
        "--max-connections",
        type=_number(int),
        default=default.max_connections,
        metavar="N",
        help="open connections; a new one from a client holding fewer than another closes that "
        "client's longest waiting connection, else it is answered 503 and closed "
        f"(default {default.max_connections})",
    )
    limits.add_argument(
        "--max-sessions",
        type=_number(int),
        default=default.max_sessions,
        metavar="N",
        help="open MCP sessions; a request for another ends the longest idle session of the client "
        "holding the most (503 only if every session has a request in flight) "
        f"(default {default.max_sessions})",
    )
    limits.add_argument(
        "--session-idle-timeout",
        type=_number(float),
        default=default.session_idle_timeout,
        metavar="SECONDS",
        help="a session that sends no request this long is closed, even while it holds its event "
        f"stream; its client starts a new one (default {default.session_idle_timeout:g})",
    )


def http_limits(args: argparse.Namespace) -> HttpLimits:
    return HttpLimits(
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        send_timeout=args.send_timeout,
        max_connections=args.max_connections,
        max_sessions=args.max_sessions,
        session_idle_timeout=args.session_idle_timeout,
    )


def fail(message: str, code: int) -> int:
    """Print the command's one error line (``docs-mcp-server: error: ...``) and return ``code``."""
    print(f"{PACKAGE_NAME}: error: {message}", file=sys.stderr, flush=True)
    return code


def server_options(args: argparse.Namespace) -> ServerOptions:
    """The server's options from the parsed flags (raises ``OptionsError`` for an invalid value)."""
    from docs_mcp_server.options import ServerOptions

    custom_tools = []
    if args.custom_tools_json:
        from docs_mcp_server.custom_tools import parse_custom_tools_json

        custom_tools = parse_custom_tools_json(args.custom_tools_json)
    return ServerOptions(
        index_dir=args.index_dir,
        name=args.name,
        version=args.server_version,
        tool_prefix=args.tool_prefix,
        proximity_weight=args.proximity_weight,
        phrase_slop=args.phrase_slop,
        vector_weight=args.vector_weight,
        vector_cooldown_seconds=args.vector_cooldown,
        ranking=args.ranking,
        token_encoding=args.token_encoding,
        query_embedding_api_key=args.query_embedding_api_key,
        query_embedding_base_url=args.query_embedding_base_url,
        cursor_secret=args.cursor_secret,
        custom_tools=custom_tools,
        git_commit=args.git_commit,
        build_date=args.build_date,
        storage_options=dict(args.storage_option) or None,
        reload_interval=args.reload_interval,
        index_cache_dir=args.index_cache_dir,
    )


MAX_SECRET_LENGTH = 4096  # an Authorization header longer than that is refused by the HTTP parser


def _secret_problem(flag: str, value: str | None) -> str | None:
    """Why no client could ever send ``value`` as a bearer credential (None when one can): a server
    started with it answered every request 401 (or 400 for one over the header limit)."""
    if value is None:
        return None
    if len(value) > MAX_SECRET_LENGTH:
        return f"{flag} is {len(value):,} characters long; at most {MAX_SECRET_LENGTH} fit in an HTTP header"
    if value != value.strip(" \t") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        return (
            f"{flag} starts or ends with a space or holds a control character, so no client can send it in "
            "an Authorization header; give plain text"
        )
    return None


def usage_problem(args: argparse.Namespace) -> str | None:
    """Why the flags cannot be served together (None when they can); ``--workers`` becomes an int."""
    problem = _workers_problem(args)
    if problem is None:
        problem = _secret_problem("--auth-token (or DOCS_MCP_AUTH_TOKEN)", args.auth_token)
    if problem is None:
        problem = _secret_problem("--playground-password (or PLAYGROUND_PASSWORD)", args.playground_password)
    if problem is None and args.transport == "http" and args.playground_password and not args.playground:
        problem = (
            "a playground password is set (--playground-password or PLAYGROUND_PASSWORD) but --playground "
            "is not: add --playground, or protect /mcp alone with --auth-token"
        )
    return problem


def _workers_problem(args: argparse.Namespace) -> str | None:
    """Why ``--workers`` cannot be used as given (None when it can)."""
    try:
        workers = int(args.workers)
    except ValueError:
        return f"--workers must be a whole number, got {args.workers!r} (DOCS_MCP_WORKERS?)"
    args.workers = workers
    if workers < 1:
        return f"--workers must be 1 or more, got {workers}"
    if workers == 1:
        return None
    if args.transport != "http":
        return "--workers only applies to --transport http; a stdio server has one client"
    if not args.stateless:
        return (
            f"--workers {workers} needs --stateless: a session lives in the memory of one worker and "
            "the client's next connection may reach another; add --stateless, or use --workers 1"
        )
    if args.playground_password:
        return (
            f"--workers {workers} cannot keep a playground login: each worker would accept only its "
            "own cookies; use --auth-token, or --workers 1"
        )
    return None
