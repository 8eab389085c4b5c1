"""What the protocol costs: ``uv run python benchmarks/protocol_overhead.py --index-dir DIR``.

Times the same ``search_docs`` and ``get_doc`` requests three ways in one run:

* **in process**: :class:`~docs_mcp_core.search.SearchEngine` called directly (``search`` and
  ``get_doc``), as ``search_inprocess.py`` does;
* **stdio**: a ``docs-mcp-server`` child spoken to with raw JSON-RPC lines on its stdin/stdout;
* **http**: a ``docs-mcp-server --transport http`` child on 127.0.0.1, raw JSON-RPC ``POST /mcp`` on
  one kept-alive connection (a stateful session by default, ``--stateless`` for none).

Each request is sent to every path in turn before the next request (interleaved), so a change in
the machine's load affects all three alike. Every dev case gives one search (its query, filters and
limit) and one ``get_doc`` of its expected chunk (``--context`` neighbours, default 0). After
``--warmup`` rounds, ``--passes`` timed rounds are taken; the table shows p50 and p95 (nearest rank)
per path in milliseconds, then each path's p50 as a ratio to in process and as milliseconds added.

The clients are minimal (a line or one HTTP request, ``json.loads`` of the answer), so the figures are
the server's costs plus a pipe or a loopback socket. ``--server-command`` runs another build of the
server (for before/after comparisons in one sitting).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import select
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docs_mcp_core.search import SearchEngine
from docs_mcp_eval.cases import EvalCase, load_cases

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CASES = SHARED_DIR / "corpora" / "sdk-docs-dev-cases.json"
PROTOCOL_VERSION = "2025-11-25"
TIMEOUT = 120.0
PATHS = ("in process", "stdio", "http")


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (the eval's definition)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))] if ordered else 0.0


def server_command(override: str | None) -> list[str]:
    if override:
        return shlex.split(override)
    script = Path(sys.executable).parent / "docs-mcp-server"
    return [str(script)] if script.exists() else [sys.executable, "-m", "docs_mcp_server"]


def initialize_params() -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "protocol-overhead", "version": "1"},
    }


def checked(reply: dict[str, Any], what: str) -> dict[str, Any]:
    """The result of a JSON-RPC reply; a protocol or tool error stops the benchmark."""
    if "error" in reply:
        raise RuntimeError(f"{what}: {reply['error']}")
    result = reply["result"]
    if isinstance(result, dict) and result.get("isError"):
        raise RuntimeError(f"{what}: {result['content'][0]['text']}")
    return result


class StdioPath:
    """A stdio server child, spoken to with one JSON-RPC line per request. Replies are read from
    the pipe on the calling thread (``select`` bounds the wait), so the client adds no thread
    hand-off of its own to the figures."""

    def __init__(self, command: list[str], index_dir: Path) -> None:
        self.proc = subprocess.Popen(
            [*command, "--index-dir", str(index_dir), "--log-level", "warning"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "LANCEDB_LOG": "error"},
        )
        assert self.proc.stdout is not None
        self.fd = self.proc.stdout.fileno()
        self.pending = b""
        self.next_id = 0
        self.call("initialize", initialize_params())
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _line(self) -> bytes:
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise RuntimeError(f"the stdio server did not answer within {TIMEOUT:g} s")
            data = os.read(self.fd, 1 << 20)
            if not data:
                raise RuntimeError(f"the stdio server exited with {self.proc.wait()}")
            self.pending += data
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = json.loads(self._line())
            if reply.get("id") == self.next_id:
                return checked(reply, method)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Connection(http.client.HTTPConnection):
    """A client connection without Nagle's algorithm: ``http.client`` sends a request's headers and
    body in two writes, and the second would wait for the server's delayed ACK (40 ms)."""

    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class HttpPath:
    """An HTTP server child and one kept-alive connection to it."""

    def __init__(self, command: list[str], index_dir: Path, *, stateless: bool) -> None:
        self.port = free_port()
        argv = [*command, "--index-dir", str(index_dir), "--transport", "http", "--port", str(self.port),
                "--log-level", "warning", *(["--stateless"] if stateless else [])]  # fmt: skip
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "LANCEDB_LOG": "error"},
        )
        self._wait_healthy()
        self.conn = _Connection("127.0.0.1", self.port, timeout=TIMEOUT)
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        self.next_id = 0
        if not stateless:
            self.call("initialize", initialize_params())
            self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the HTTP server exited with {self.proc.returncode}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    conn.close()
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the HTTP server did not answer /healthz in time")

    def _post(self, message: dict[str, Any]) -> tuple[http.client.HTTPResponse, bytes]:
        payload = json.dumps(message).encode()
        try:
            self.conn.request("POST", "/mcp", body=payload, headers=self.headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # the server closed the idle connection (its keep-alive is a few seconds): open another
            self.conn.close()
            self.conn.request("POST", "/mcp", body=payload, headers=self.headers)
            response = self.conn.getresponse()
        body = response.read()
        if response.status not in (200, 202):
            raise RuntimeError(f"POST /mcp answered {response.status}: {body[:200]!r}")
        session = response.getheader("mcp-session-id")
        if session:
            self.headers["mcp-session-id"] = session
        return response, body

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        response, body = self._post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            data = [line[5:] for line in body.splitlines() if line.startswith(b"data:") and line[5:].strip()]
            body = data[-1]
        return checked(json.loads(body), method)

    def close(self) -> None:
        self.conn.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def search_arguments(case: EvalCase) -> dict[str, Any]:
    return {"query": case.query, "limit": case.limit, **dict(case.filters)}


def requests_of(
    engine: SearchEngine, remote: dict[str, StdioPath | HttpPath], case: EvalCase, context: int
) -> dict[str, dict[str, Callable[[], object]]]:
    """For each request kind, the call that makes it on each path."""
    search = {"name": "search_docs", "arguments": search_arguments(case)}
    get_doc = {"name": "get_doc", "arguments": {"chunk_id": case.expected_chunk_id, "context": context}}
    calls: dict[str, dict[str, Callable[[], object]]] = {
        "search": {
            "in process": lambda: engine.search(case.query, limit=case.limit, filters=dict(case.filters))
        },
        "get_doc": {"in process": lambda: engine.get_doc(case.expected_chunk_id, context)},
    }
    for name, client in remote.items():
        calls["search"][name] = lambda client=client: client.call("tools/call", search)
        calls["get_doc"][name] = lambda client=client: client.call("tools/call", get_doc)
    return calls


def run_round(
    engine: SearchEngine,
    remote: dict[str, StdioPath | HttpPath],
    cases: list[EvalCase],
    context: int,
    samples: dict[tuple[str, str], list[float]] | None,
) -> None:
    for case in cases:
        for kind, per_path in requests_of(engine, remote, case, context).items():
            for path, call in per_path.items():
                started = time.perf_counter()
                call()
                elapsed = (time.perf_counter() - started) * 1000
                if samples is not None:
                    samples.setdefault((kind, path), []).append(elapsed)


def report(samples: dict[tuple[str, str], list[float]], paths: list[str]) -> None:
    print(f"{'request':8s} {'path':10s} {'p50 ms':>8s} {'p95 ms':>8s} {'p50 ratio':>10s} {'p50 added':>10s}")
    for kind in ("search", "get_doc"):
        base = percentile(samples[(kind, "in process")], 0.5)
        for path in paths:
            values = samples[(kind, path)]
            p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
            print(f"{kind:8s} {path:10s} {p50:8.2f} {p95:8.2f} {p50 / base:9.2f}x {p50 - base:+9.2f} ms")


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text(encoding="ascii").split()[:3])
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Compare in-process, stdio and HTTP latency of the same requests."
    )
    parser.add_argument("--index-dir", type=Path, required=True, help="prebuilt index (docs-mcp build --out)")
    parser.add_argument(
        "--cases", type=Path, default=DEFAULT_CASES, help=f"eval cases (default {DEFAULT_CASES})"
    )
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds over the cases (default 1)")
    parser.add_argument("--passes", type=int, default=3, help="timed rounds over the cases (default 3)")
    parser.add_argument("--context", type=int, default=0, help="get_doc neighbours on each side (default 0)")
    parser.add_argument(
        "--paths",
        default=",".join(PATHS[1:]),
        help="comma-separated remote paths: stdio, http (default both)",
    )
    parser.add_argument(
        "--stateless", action="store_true", help="HTTP without a session (--stateless server)"
    )
    parser.add_argument("--server-command", help="command to run instead of docs-mcp-server (shell syntax)")
    args = parser.parse_args(argv)
    if not (args.index_dir / "metadata.json").is_file():
        print(f"error: {args.index_dir} has no metadata.json; build the index first", file=sys.stderr)
        return 2
    if not args.cases.is_file():
        print(f"error: no case file at {args.cases}; pass --cases FILE", file=sys.stderr)
        return 2
    wanted = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PATHS[1:]]
    if unknown:
        print(f"error: unknown path(s) {', '.join(unknown)}; use stdio and/or http", file=sys.stderr)
        return 2
    cases = load_cases(args.cases)
    command = server_command(args.server_command)
    print(
        f"server: {' '.join(command)}  index: {args.index_dir}  cases: {len(cases)}  load: {load_average()}"
    )

    engine = SearchEngine.open(args.index_dir)
    remote: dict[str, StdioPath | HttpPath] = {}
    try:
        for path in wanted:
            if path == "stdio":
                remote[path] = StdioPath(command, args.index_dir)
            else:
                remote[path] = HttpPath(command, args.index_dir, stateless=args.stateless)
        for _ in range(args.warmup):
            run_round(engine, remote, cases, args.context, None)
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.passes):
            run_round(engine, remote, cases, args.context, samples)
    finally:
        for client in remote.values():
            client.close()
        engine.close()
    http_mode = " (stateless)" if args.stateless else " (one session)"
    print(f"{args.passes} passes x {len(cases)} cases, get_doc context {args.context}, "
          f"http{http_mode if 'http' in remote else ''}; load at the end: {load_average()}")  # fmt: skip
    report(samples, ["in process", *remote])
    return 0


if __name__ == "__main__":
    sys.exit(main())
