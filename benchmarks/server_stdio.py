"""stdio server start-up, search latency and memory: ``uv run python benchmarks/server_stdio.py --index-dir DIR``.

Measures, against a prebuilt index (``docs-mcp build --out DIR``):

* spawn → ``initialize`` answered: wall time from starting ``docs-mcp-server`` to the first response
  line on stdout, over ``--spawns`` fresh processes (median, p95, min);
* spawn → ``tools/list`` answered (the first request that needs the MCP SDK), same processes;
* ``search_docs`` latency p50/p95 over the dev queries (``sdk-docs-dev-cases.json``: query, filters
  and limit of each case) after ``--warmup`` rounds over them, in one long-lived server;
* server RSS: right after the handshake, idle after warm-up (index open), and the peak (VmHWM).

Requests are raw JSON-RPC lines, so the figures are the server's cost, not a client library's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CASES = SHARED_DIR / "corpora" / "sdk-docs-dev-cases.json"
TIMEOUT = 120.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def server_command(override: str | None) -> list[str]:
    if override:
        return shlex.split(override)
    script = Path(sys.executable).parent / "docs-mcp-server"
    return [str(script)] if script.exists() else [sys.executable, "-m", "docs_mcp_server"]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (the eval's definition)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))] if ordered else 0.0


def rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) in MB from /proc (Linux)."""
    fields: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


class StdioServer:
    """A server process spoken to with raw JSON-RPC lines."""

    def __init__(self, command: list[str], index_dir: Path) -> None:
        env = {**os.environ, "LANCEDB_LOG": "error"}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*command, "--index-dir", str(index_dir), "--log-level", "warning"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        self.next_id = 1

    def _pump(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self.lines.get(timeout=TIMEOUT)
        if line is None:
            raise RuntimeError(f"server exited with {self.proc.wait()}")
        return json.loads(line)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = self.next_id
        self.next_id += 1
        self.send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
        )
        while True:
            reply = self.receive()
            if reply.get("id") == request_id:
                if "error" in reply:
                    raise RuntimeError(f"{method} failed: {reply['error']}")
                return reply["result"]

    def handshake(self) -> tuple[float, float]:
        """Initialize, then tools/list; returns the ms from spawn to each answer."""
        self.send(INITIALIZE)
        self.receive()
        initialized = (time.perf_counter() - self.started) * 1000
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.call("tools/list")
        return initialized, (time.perf_counter() - self.started) * 1000

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def measure_startup(command: list[str], index_dir: Path, spawns: int) -> None:
    init_ms: list[float] = []
    list_ms: list[float] = []
    for _ in range(spawns):
        server = StdioServer(command, index_dir)
        try:
            initialized, listed = server.handshake()
        finally:
            server.close()
        init_ms.append(initialized)
        list_ms.append(listed)
    print(f"spawn -> initialize ({spawns} spawns): median {statistics.median(init_ms):.0f} ms, "
          f"p95 {percentile(init_ms, 0.95):.0f} ms, min {min(init_ms):.0f} ms")  # fmt: skip
    print(f"spawn -> tools/list ({spawns} spawns): median {statistics.median(list_ms):.0f} ms, "
          f"p95 {percentile(list_ms, 0.95):.0f} ms")  # fmt: skip


def search_arguments(case: dict[str, Any]) -> dict[str, Any]:
    return {"query": case["query"], "limit": case.get("limit") or 5, **(case.get("filters") or {})}


def measure_search(command: list[str], index_dir: Path, cases: list[dict[str, Any]], warmup: int) -> None:
    server = StdioServer(command, index_dir)
    try:
        server.handshake()
        rss_start, _ = rss_mb(server.proc.pid)
        first = time.perf_counter()
        server.call("tools/call", {"name": "search_docs", "arguments": search_arguments(cases[0])})
        first_ms = (time.perf_counter() - first) * 1000
        for _ in range(warmup):
            for case in cases:
                server.call("tools/call", {"name": "search_docs", "arguments": search_arguments(case)})
        rss_idle, _ = rss_mb(server.proc.pid)
        latencies: list[float] = []
        errors = 0
        for case in cases:
            started = time.perf_counter()
            result = server.call("tools/call", {"name": "search_docs", "arguments": search_arguments(case)})
            latencies.append((time.perf_counter() - started) * 1000)
            errors += bool(result.get("isError"))
        _, rss_peak = rss_mb(server.proc.pid)
    finally:
        server.close()
    print(f"first search (index opening included or overlapped): {first_ms:.0f} ms")
    print(f"search_docs over {len(cases)} dev queries after {warmup} warm-up round(s): "
          f"p50 {percentile(latencies, 0.5):.1f} ms, p95 {percentile(latencies, 0.95):.1f} ms, "
          f"max {max(latencies):.1f} ms, isError {errors}")  # fmt: skip
    print(f"server RSS: after handshake {rss_start:.0f} MB, idle after warm-up {rss_idle:.0f} MB, "
          f"peak {rss_peak:.0f} MB")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure docs-mcp-server over stdio.")
    parser.add_argument("--index-dir", type=Path, required=True, help="prebuilt index (docs-mcp build --out)")
    parser.add_argument(
        "--cases", type=Path, default=DEFAULT_CASES, help=f"eval cases (default {DEFAULT_CASES})"
    )
    parser.add_argument("--spawns", type=int, default=20, help="fresh processes for the start-up figures")
    parser.add_argument("--warmup", type=int, default=1, help="rounds over all queries before measuring")
    parser.add_argument("--server-command", help="command to run instead of docs-mcp-server (shell syntax)")
    args = parser.parse_args(argv)
    if not (args.index_dir / "metadata.json").is_file():
        print(f"error: {args.index_dir} has no metadata.json; build the index first", file=sys.stderr)
        return 2
    cases = json.loads(args.cases.read_text(encoding="utf-8"))
    command = server_command(args.server_command)
    print(f"server: {' '.join(command)}  index: {args.index_dir}")
    measure_startup(command, args.index_dir, args.spawns)
    measure_search(command, args.index_dir, cases, args.warmup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
