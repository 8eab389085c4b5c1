"""Running ``docs-mcp-server`` as a real subprocess with bounded waits on its output."""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from tests.support.programs import SERVER_COMMAND, server_env

WAIT_SECONDS = 30.0


class ServerProcess:
    """A server subprocess whose stdout and stderr lines are collected by background threads."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        wrapper: Sequence[str] = (),
    ) -> None:
        """``wrapper``: a command that runs the server (its path and ``args`` follow it)."""
        self.proc = subprocess.Popen(
            [*wrapper, SERVER_COMMAND, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env or server_env(),
            cwd=cwd,
        )
        self.stdout_lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_lines: list[str] = []
        self._stderr_queue: queue.Queue[str | None] = queue.Queue()
        self._stderr_done = threading.Event()  # every stderr line is in stderr_lines
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout_lines), daemon=True).start()
        threading.Thread(target=self._pump_stderr, args=(self.proc.stderr,), daemon=True).start()

    @staticmethod
    def _pump(stream: IO[bytes], sink: queue.Queue[bytes | None]) -> None:
        for line in iter(stream.readline, b""):
            sink.put(line)
        sink.put(None)

    def _pump_stderr(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            text = line.decode("utf-8", errors="replace").rstrip("\n")
            self.stderr_lines.append(text)
            self._stderr_queue.put(text)
        self._stderr_queue.put(None)
        self._stderr_done.set()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode())

    def send_raw(self, line: bytes) -> None:
        """Write ``line`` (no newline) and a newline, exactly as given."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        reply = self.receive_any(timeout)
        assert isinstance(reply, dict), reply
        return reply

    def receive_any(self, timeout: float = WAIT_SECONDS) -> Any:
        """The next JSON line on stdout, whatever its shape (an array answers a batch)."""
        line = self.stdout_lines.get(timeout=timeout)
        assert line is not None, f"server closed stdout; stderr:\n{self.stderr_text()}"
        return json.loads(line)

    def wait_for_log(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = WAIT_SECONDS
    ) -> dict[str, Any]:
        """The first JSON log record on stderr matching ``predicate`` (bounded by ``timeout``)."""
        while True:
            text = self._stderr_queue.get(timeout=timeout)
            if text is None:
                raise AssertionError(
                    f"server exited before the expected log line; stderr:\n{self.stderr_text()}"
                )
            try:
                record = json.loads(text)
            except ValueError:
                continue
            if isinstance(record, dict) and predicate(record):
                return record

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = WAIT_SECONDS) -> int:
        """The exit status, once the process has exited and its stderr has been read to the end
        (the lines it wrote last are in :attr:`stderr_lines`)."""
        status = self.proc.wait(timeout=timeout)
        self._stderr_done.wait(timeout)
        return status

    def stderr_text(self) -> str:
        return "\n".join(self.stderr_lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT_SECONDS)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):  # unflushed input to a process that is gone
                    stream.close()


def run_server(
    args: Sequence[str], *, timeout: float = WAIT_SECONDS, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """Run the command to completion (for start-up failures and --about)."""
    return subprocess.run(
        [SERVER_COMMAND, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=kwargs.pop("env", None) or server_env(),
        **kwargs,
    )


# -- HTTP -------------------------------------------------------------------------------------------

MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PROTOCOL = {"MCP-Protocol-Version": "2025-06-18"}
Headers = Mapping[str, str | bytes]


def start_http_server(
    index: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[ServerProcess, int]:
    """Start ``--transport http`` on a free port of 127.0.0.1 (unless ``args`` name a ``--port``);
    returns the process and the port from its ``started mcp server`` log line."""
    port = [] if "--port" in args else ["--port", "0"]
    server = ServerProcess(
        ["--index-dir", str(index), "--transport", "http", *port, *args],
        env=server_env(**env) if env else None,
    )
    try:
        started = server.wait_for_log(lambda record: record.get("message") == "started mcp server")
    except BaseException:
        server.stop()
        raise
    return server, int(started["properties"]["port"])


def request(
    port: int, method: str, path: str, body: bytes | None = None, headers: Headers | None = None
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One HTTP request to 127.0.0.1 (``bytes`` header values are sent exactly as given)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def rpc_messages(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """JSON-RPC messages from a JSON or SSE (``data:`` lines) response body."""
    if content_type.startswith("application/json"):
        return [json.loads(body)]
    return [
        json.loads(line[5:])
        for line in body.decode().splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


def post_mcp(
    port: int, message: dict[str, Any], headers: Headers | None = None
) -> tuple[int, http.client.HTTPMessage, list[dict[str, Any]]]:
    status, response_headers, body = request(
        port, "POST", "/mcp", json.dumps(message).encode(), {**MCP_HEADERS, **(headers or {})}
    )
    return (
        status,
        response_headers,
        rpc_messages(body, response_headers.get("content-type", "")) if body else [],
    )
