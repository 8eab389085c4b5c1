"""The ``docs-mcp-server`` command: argument checks, start-up failures and the stdio transport."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.support.index_stubs import metadata_document, write_index_stub
from tests.support.programs import SERVER_COMMAND, permissions_enforced, server_env
from tests.support.protocol import INITIALIZE, INITIALIZED, text
from tests.support.server_process import ServerProcess, run_server

pytestmark = pytest.mark.integration  # starts processes or listens on ports


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by this interpreter in a process of its own (the workspace's packages importable)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("docs-mcp-server: error: ")
    return lines[0].removeprefix("docs-mcp-server: error: ")


@pytest.mark.parametrize("flag", ["--version", "--about"])
def test_version_prints_the_program_version(flag: str) -> None:
    result = run_server([flag])
    assert result.returncode == 0
    assert result.stdout.strip() == "docs-mcp-server 0.1.0"


def test_version_with_a_value_points_to_server_version() -> None:
    result = run_server(["--index-dir", "idx", "--version", "1.2.3"])
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines()[0] == (
        "docs-mcp-server: error: --version takes no value; "
        "set the version reported to clients with --server-version 1.2.3"
    )


@pytest.mark.parametrize("args", [["--wrong"], ["--index-dir", "idx", "--wrong", "x"], []])
def test_a_usage_error_is_one_line_and_one_line_of_advice(args: list[str]) -> None:
    result = run_server(args)
    assert result.returncode == 2 and result.stdout == ""
    error, advice = result.stderr.splitlines()
    assert error.startswith("docs-mcp-server: error: ")
    assert advice == (
        "usage: docs-mcp-server --index-dir DIR [options]  (`docs-mcp-server --help` lists every option)"
    )


@pytest.mark.parametrize("args", [["--docs-dir", "docs"], ["--docs-dir=docs", "--out", "idx"]])
def test_docs_dir_given_to_the_server_says_how_to_build_an_index(args: list[str]) -> None:
    result = run_server(args)
    assert result.returncode == 2
    error = result.stderr.splitlines()[0]
    assert "the server serves an index, not a docs folder" in error
    assert "`docs-mcp build --docs-dir DOCS --out INDEX`" in error and "--index-dir INDEX" in error


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_documents_version_and_environment(flag: str) -> None:
    result = run_server([flag])
    assert result.returncode == 0
    assert "--version, --about" in result.stdout and "--server-version VERSION" in result.stdout
    for name in ("SERVER_NAME", "STATELESS", "LOG_LEVEL", "DOCS_MCP_AUTH_TOKEN", "DOCS_MCP_CURSOR_SECRET"):
        assert name in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--transport", "sse"], "argument --transport: invalid choice: 'sse' (choose from 'stdio', 'http')"),
        (["--log-level", "verbose"], "--log-level must be one of: trace, debug, info, warning, error, fatal"),
        (["--proximity-weight", "abc"], "invalid numeric value 'abc'"),
        (["--phrase-slop", "1.5"], "invalid integer value '1.5'"),
        (["--port", "70000"], "port must be between 0 and 65535"),
        (["--phrase-slop", "9"], "phrase slop must be an integer from 0 to 5"),
        (["--vector-cooldown", "-5"], "vector cooldown must be a number of seconds >= 0"),
        (
            ["--reload-interval", "-1"],
            "argument --reload-interval: must be a number of seconds >= 0, got '-1'",
        ),
        (["--reload-interval", "soon"], "argument --reload-interval: invalid numeric value 'soon'"),
        (["--tool-prefix", "a b"], "tool prefix 'a b' is invalid"),
        (["--custom-tools-json", "[{]"], "--custom-tools-json is not valid JSON"),
    ],
)
def test_invalid_arguments_exit_with_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    result = run_server(["--index-dir", str(write_index_stub(tmp_path / "idx")), *args])
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        # each started a server that answered every request 401 (400 for the long one)
        ("DOCS_MCP_AUTH_TOKEN", "   ", "--auth-token (or DOCS_MCP_AUTH_TOKEN) starts or ends with a space"),
        (
            "DOCS_MCP_AUTH_TOKEN",
            "line\nbreak",
            "--auth-token (or DOCS_MCP_AUTH_TOKEN) starts or ends with a space",
        ),
        ("DOCS_MCP_AUTH_TOKEN", "t" * 5000, "--auth-token (or DOCS_MCP_AUTH_TOKEN) is 5,000 characters long"),
        ("PLAYGROUND_PASSWORD", " pw", "--playground-password (or PLAYGROUND_PASSWORD) starts or ends with"),
    ],
)
def test_a_credential_no_client_can_send_is_a_usage_error(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    index = str(write_index_stub(tmp_path / "idx"))
    result = run_server(
        ["--index-dir", index, "--transport", "http", "--port", "0", "--playground"],
        env=server_env(**{variable: value}),
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"docs-mcp-server: error: {message}")


def test_index_dir_is_required() -> None:
    result = run_server([])
    assert result.returncode == 2
    assert "the following arguments are required: --index-dir" in result.stderr


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("missing-dir", "index directory does not exist: "),
        ("missing-metadata", "metadata.json not found in index directory: "),
        ("not-json", "Invalid metadata.json at "),
        ("major-2", "Unsupported metadata_version major: expected 1.x.x, got 2.0.0"),
        ("no-lancedb", "LanceDB index not found at "),
    ],
)
def test_unusable_index_fails_fast_with_one_line(tmp_path: Path, case: str, expected: str) -> None:
    index = tmp_path / "idx"
    if case == "missing-metadata":
        index.mkdir()
    elif case == "not-json":
        write_index_stub(index, '{"metadata_version": "1.1.0",')
    elif case == "major-2":
        write_index_stub(index, metadata_document(metadata_version="2.0.0"))
    elif case == "no-lancedb":
        write_index_stub(index, table=False)
    result = run_server(["--index-dir", str(index)])
    assert result.returncode == 1
    assert expected in one_error_line(result.stderr)
    assert result.stdout == ""


@pytest.mark.parametrize("where", ["index folder", "table folder", "long name"])
def test_a_loop_of_symbolic_links_or_a_name_too_long_fails_fast_with_one_line(
    tmp_path: Path, where: str
) -> None:
    # Python 3.11's Path.resolve raised RuntimeError("Symlink loop from ..."), and is_dir raised
    # OSError(ENAMETOOLONG): a bare traceback
    (tmp_path / "one").symlink_to(tmp_path / "two")
    (tmp_path / "two").symlink_to(tmp_path / "one")
    if where == "index folder":
        index, code = tmp_path / "one", 2
        expected = f"--index-dir '{index}' leads round a loop of symbolic links; point it at a folder"
    elif where == "long name":
        index, code = tmp_path / ("x" * 300), 2
        expected = (
            f"--index-dir '{str(index)[:200]}... ({len(str(index))} characters)': a name on its path is too long "
            "(File name too long); choose a path with shorter names"
        )
    else:
        index, code = write_index_stub(tmp_path / "idx", table=False), 1
        (index / ".lancedb").symlink_to(tmp_path / "one")
        expected = (
            f"the index's table folder '{index / '.lancedb'}' leads round a loop of symbolic links; "
            "re-run docs-mcp build to generate the index"
        )
    result = run_server(["--index-dir", str(index)])
    assert result.returncode == code, result.stderr
    assert one_error_line(result.stderr) == expected


def test_an_index_folder_this_user_may_not_read_fails_fast_naming_it(tmp_path: Path) -> None:
    # the first look into it (for a build's leftovers) raised PermissionError: a bare traceback
    index = write_index_stub(tmp_path / "idx")
    wrapper = permissions_enforced()
    index.chmod(0o600)  # readable, but not to be entered
    try:
        result = subprocess.run(
            [*wrapper, SERVER_COMMAND, "--index-dir", str(index)],
            capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, env=server_env(),
        )  # fmt: skip
    finally:
        index.chmod(0o755)
    assert result.returncode == 1, result.stderr
    assert one_error_line(result.stderr).startswith(f"cannot read the index at '{index}' (")
    assert "Permission denied; let the user running docs-mcp read it" in result.stderr
    assert "Traceback" not in result.stderr


def test_corrupt_table_is_reported_on_first_use(tmp_path: Path) -> None:
    index = write_index_stub(tmp_path / "idx")
    (index / ".lancedb" / "chunks.lance" / "_versions").mkdir()
    (index / ".lancedb" / "chunks.lance" / "_versions" / "1.manifest").write_bytes(b"garbage")
    server = ServerProcess(["--index-dir", str(index)])
    try:
        server.send(INITIALIZE)
        assert server.receive()["result"]["serverInfo"]["name"] == "docs-mcp-server"
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "search_docs", "arguments": {"query": "retry"}}})  # fmt: skip
        reply = server.receive(timeout=60)
        assert reply["result"]["isError"] is True
        text = reply["result"]["content"][0]["text"]
        assert "LanceDB" in text or "could not be opened" in text, text
        server.close_stdin()
        assert server.wait() == 0
        assert any('"search index unavailable"' in line for line in server.stderr_lines)
    finally:
        server.stop()


def test_stdio_answers_initialize_then_serves_until_eof(built_index: Path) -> None:
    server = ServerProcess(
        ["--index-dir", str(built_index), "--name", "stdio-test", "--server-version", "1.2.3"]
    )
    try:
        server.send(INITIALIZE)
        init = server.receive()
        assert init["id"] == 1
        assert init["result"]["serverInfo"] == {"name": "stdio-test", "version": "1.2.3"}
        assert init["result"]["protocolVersion"] == "2025-06-18"
        assert init["result"]["instructions"].startswith("Tidewater Payments documentation")
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = server.receive()
        assert tools["id"] == 2, "the SDK's duplicate initialize answer must not reach the client"
        assert [tool["name"] for tool in tools["result"]["tools"]] == ["search_docs", "get_doc"]
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "search_docs", "arguments": {"query": "webhook signature"}}})  # fmt: skip
        found = server.receive(timeout=60)
        assert found["id"] == 3 and found["result"]["isError"] is False
        assert json.loads(found["result"]["content"][0]["text"])["hits"]
        server.close_stdin()
        assert server.wait() == 0
        for line in server.stderr_lines:  # stderr carries JSON log lines only
            assert json.loads(line)["logger"] == "app"
        assert not any("differs" in line for line in server.stderr_lines)
    finally:
        server.stop()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_stdio_sigterm_or_sighup_finishes_the_request_in_flight(
    built_index: Path, signum: signal.Signals
) -> None:
    # SIGHUP (the session that started the server went away) ended it at once, cutting the answer off
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "debug"])
    try:
        server.send(INITIALIZE)
        server.receive()
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "resources/list"})  # only the SDK answers it:
        assert server.receive()["id"] == 2  # the search below is the SDK's too, not answered early
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "search_docs", "arguments": {"query": "list customers"}}})  # fmt: skip
        server.wait_for_log(lambda r: r.get("message") == "tool call")
        server.proc.send_signal(signum)
        reply = server.receive(timeout=60)
        assert reply["id"] == 3 and reply["result"]["isError"] is False
        assert server.wait() == 0
        assert any('"shutting down stdio server"' in line for line in server.stderr_lines)
    finally:
        server.stop()


@pytest.mark.skipif(shutil.which("nohup") is None, reason="no nohup to start the server with SIGHUP ignored")
def test_a_server_started_with_sighup_ignored_keeps_ignoring_it(built_index: Path) -> None:
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "info"], wrapper=["nohup"])
    try:
        server.send(INITIALIZE)
        server.receive()
        server.send(INITIALIZED)
        server.proc.send_signal(signal.SIGHUP)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "search_docs", "arguments": {"query": "list customers"}}})  # fmt: skip
        reply = server.receive(timeout=60)
        assert reply["id"] == 2 and reply["result"]["isError"] is False
        assert server.proc.poll() is None
        server.close_stdin()
        assert server.wait() == 0
        assert not any('"shutting down stdio server"' in line for line in server.stderr_lines)
    finally:
        server.stop()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_stdio_with_the_sdk_client(built_index: Path, mode: str) -> None:
    params = StdioServerParameters(
        command=SERVER_COMMAND,
        args=["--index-dir", str(built_index), "--tool-prefix", "tide", "--log-level", "warning"],
        env=server_env(),
    )
    async with Client(params, mode=mode) as client:
        assert client.server_info is not None and client.server_info.name == "tide-docs-server"
        tools = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool(
            "tide_search_docs", {"query": "refund a payment", "language": "typescript"}
        )
        assert not result.is_error
        hit = result.structured_content["hits"][0]
        doc = await client.call_tool("tide_get_doc", {"chunk_id": hit["chunk_id"]})
        resources = (await client.list_resources()).resources
        prompts = (await client.list_prompts()).prompts
    assert tools == ["tide_search_docs", "tide_get_doc"]
    assert text(doc.content[0]).startswith(f"--- Chunk: {hit['chunk_id']}")
    assert resources and prompts


def test_start_up_imports_stay_lean() -> None:
    """The command line and the early-handshake path must not import the MCP SDK, uvicorn or LanceDB."""
    code = (
        "import sys, docs_mcp_server, docs_mcp_server.cli, docs_mcp_server.boot, docs_mcp_server.handshake, "
        "docs_mcp_server.stdio; print(sorted(m for m in ('mcp', 'uvicorn', 'lancedb', 'starlette') if m in sys.modules))"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_app_imports_jsonschema_only_for_custom_tools(built_index: Path) -> None:
    """Building the app imports the MCP SDK, but jsonschema (a tenth of that time) only when custom
    tools need their schemas checked (a plainly valid search needs no validator either)."""
    code = (
        "import sys\n"
        "from docs_mcp_server.app import DocsMcpApp\n"
        "from docs_mcp_server.boot import load_index_metadata\n"
        "from docs_mcp_server.options import ServerOptions\n"
        f"options = ServerOptions(index_dir={str(built_index)!r})\n"
        "app = DocsMcpApp(options, load_index_metadata(options.index_dir))\n"
        "print('jsonschema' in sys.modules)\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_stdio_answers_requests_sent_before_end_of_input(built_index: Path) -> None:
    """A client that writes its requests and closes stdin at once still gets every answer."""
    server = ServerProcess(["--index-dir", str(built_index), "--log-level", "warning"])
    try:
        server.send(INITIALIZE)
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "resources/list"})
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "get_doc", "arguments": {"chunk_id": "guides/retries.md"}}})  # fmt: skip
        server.close_stdin()
        replies = {reply["id"]: reply for reply in (server.receive(timeout=60) for _ in range(3))}
        assert set(replies) == {1, 2, 3}
        assert replies[2]["result"]["resources"]
        assert "result" in replies[3]
        assert server.wait() == 0
    finally:
        server.stop()


def test_environment_supplies_identity_and_logging(built_index: Path) -> None:
    env = server_env(SERVER_NAME="env-docs", SERVER_VERSION="9.9.9", LOG_LEVEL="debug", LOG_PRETTY="true")
    server = ServerProcess(["--index-dir", str(built_index)], env=env)
    try:
        server.send(INITIALIZE)
        assert server.receive()["result"]["serverInfo"] == {"name": "env-docs", "version": "9.9.9"}
        server.send(INITIALIZED)
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "get_doc", "arguments": {"chunk_id": "guides/retries.md"}}})  # fmt: skip
        assert server.receive(timeout=60)["id"] == 2
        server.close_stdin()
        assert server.wait() == 0
        started = next(line for line in server.stderr_lines if "started mcp server" in line)
        assert not started.startswith("{") and " INFO  app: started mcp server" in started
        assert any(' DEBUG app: tool call tool="get_doc"' in line for line in server.stderr_lines)
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--playground"], {}, "--playground only applies"),
        (["--playground-password", "pw"], {}, "--playground-password (or PLAYGROUND_PASSWORD) only applies"),
        ([], {"PLAYGROUND_PASSWORD": "pw"}, "--playground-password (or PLAYGROUND_PASSWORD) only applies"),
    ],
)
def test_a_stdio_server_names_the_http_flag_it_ignores(
    built_index: Path, args: list[str], env: dict[str, str], named: str
) -> None:
    # a password alone was said to be "--playground", a flag the command line did not hold
    done = subprocess.run(
        [SERVER_COMMAND, "--index-dir", str(built_index), *args],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=server_env(**env),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "ignored for stdio" in line]
    assert len(warnings) == 1 and named in warnings[0], done.stderr


@pytest.mark.skipif(shutil.which("sh") is None, reason="closes a descriptor with a POSIX shell")
@pytest.mark.parametrize("closed", ["<&-", ">&-", "2>&-"])
def test_a_server_started_without_a_standard_stream_ends_cleanly(built_index: Path, closed: str) -> None:
    # no stdin made os.dup raise (a traceback, status 1); no stdout or stderr left sys.stdout or
    # sys.stderr None, and the exit's flush raised (status 1, after the session had gone well)
    done = subprocess.run(
        ["sh", "-c", f'exec "$0" "$@" {closed}', SERVER_COMMAND, "--index-dir", str(built_index)],
        input=json.dumps(INITIALIZE).encode() + b"\n",
        capture_output=True,
        timeout=60,
        env=server_env(),
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    if closed == "2>&-":
        assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]


@pytest.mark.parametrize("raised", ["KeyboardInterrupt()", "Interrupted('SIGINT')"])
def test_an_interrupt_before_the_server_has_started_ends_it_quietly(raised: str) -> None:
    """Ctrl-C or SIGTERM while the arguments are read (before main() has set up its logging and
    handlers): exit 0, as an interrupt while the index opens, and no traceback."""
    code = (
        "import docs_mcp_server.cli as cli\n"
        "from docs_mcp_server.errors import Interrupted\n"
        "def interrupted(argv=None):\n"
        f"    raise {raised}\n"
        "cli.main = interrupted\n"
        "cli.run()\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_the_command_ends_quietly_on_ctrl_c_while_it_imports() -> None:
    """The console script imports :mod:`docs_mcp_server.entry` first: from there until ``run()``
    installs the server's handlers, SIGINT has its default action (no ``KeyboardInterrupt``
    traceback from a module being imported)."""
    code = (
        "import signal, sys\n"
        "import docs_mcp_server.entry\n"
        "print(signal.getsignal(signal.SIGINT) is signal.SIG_DFL, 'mcp' in sys.modules)\n"
    )
    done = _python(code)
    assert done.stdout.split() == ["True", "False"], done.stderr
