"""HTTP load: ``uv run python benchmarks/server_http_load.py --index-dir DIR [--clients 20 --requests 5000]``.

Starts ``docs-mcp-server --transport http`` on 127.0.0.1 in each mode (stateful sessions, then
``--stateless``) and drives ``--requests`` ``search_docs`` calls from ``--clients`` concurrent
clients, cycling through the dev queries. Stateful clients open one MCP session each (initialize +
initialized) and reuse it; stateless clients send every call on its own. Prints, per mode: errors
(HTTP status other than 200, JSON-RPC errors, ``isError`` results), throughput and latency
percentiles. Clients speak raw JSON-RPC over keep-alive connections (httpx2), so the load
generator stays light next to the server on a small machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CASES = SHARED_DIR / "corpora" / "sdk-docs-dev-cases.json"
PROTOCOL_VERSION = "2025-11-25"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
START_TIMEOUT = 60.0


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))] if ordered else 0.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command(override: str | None) -> list[str]:
    if override:
        return shlex.split(override)
    script = Path(sys.executable).parent / "docs-mcp-server"
    return [str(script)] if script.exists() else [sys.executable, "-m", "docs_mcp_server"]


def parse_reply(response: httpx2.Response) -> dict[str, Any] | None:
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    return None


class LoadClient:
    """One simulated agent: its own connection and (in stateful mode) its own MCP session."""

    def __init__(self, http: httpx2.AsyncClient, url: str, stateful: bool) -> None:
        self.http = http
        self.url = url
        self.stateful = stateful
        self.headers = {**HEADERS, "MCP-Protocol-Version": PROTOCOL_VERSION}
        self.next_id = 1

    async def open(self) -> None:
        if not self.stateful:
            return
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                           "clientInfo": {"name": "load", "version": "1"}}}  # fmt: skip
        response = await self.http.post(self.url, json=init, headers=HEADERS)
        response.raise_for_status()
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        (await self.http.post(self.url, json=note, headers=self.headers)).raise_for_status()

    async def search(self, arguments: dict[str, Any]) -> tuple[float, bool]:
        request_id = self.next_id
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                "params": {"name": "search_docs", "arguments": arguments}}  # fmt: skip
        started = time.perf_counter()
        try:
            response = await self.http.post(self.url, json=body, headers=self.headers)
            reply = parse_reply(response) if response.status_code == 200 else None
        except httpx2.HTTPError:
            reply = None
        elapsed = (time.perf_counter() - started) * 1000
        ok = reply is not None and "result" in reply and not reply["result"].get("isError")
        return elapsed, ok


async def run_load(
    url: str, stateful: bool, cases: list[dict[str, Any]], clients: int, total: int
) -> dict[str, Any]:
    counter = iter(range(total))
    latencies: list[float] = []
    errors = 0

    async def worker() -> None:
        nonlocal errors
        limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx2.AsyncClient(timeout=60, limits=limits) as http:
            client = LoadClient(http, url, stateful)
            await client.open()
            for index in counter:
                case = cases[index % len(cases)]
                arguments = {
                    "query": case["query"],
                    "limit": case.get("limit") or 5,
                    **(case.get("filters") or {}),
                }
                elapsed, ok = await client.search(arguments)
                latencies.append(elapsed)
                errors += not ok

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    wall = time.perf_counter() - started
    return {
        "requests": len(latencies),
        "errors": errors,
        "wall_s": wall,
        "rps": len(latencies) / wall,
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99),
    }


def wait_until_healthy(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("server did not become healthy in time")


def bench_mode(
    command: list[str], index_dir: Path, stateful: bool, cases: list[dict[str, Any]], args: Any
) -> None:
    port = free_port()
    argv = [*command, "--index-dir", str(index_dir), "--transport", "http", "--port", str(port),
            "--log-level", "warning", *([] if stateful else ["--stateless"])]  # fmt: skip
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "LANCEDB_LOG": "error"})  # fmt: skip
    try:
        wait_until_healthy(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        warm = min(len(cases), args.requests)
        asyncio.run(run_load(url, stateful, cases, 1, warm))  # open the index, warm caches
        stats = asyncio.run(run_load(url, stateful, cases, args.clients, args.requests))
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
    mode = "stateful" if stateful else "stateless"
    print(f"{mode:9s}: {stats['requests']} searches, {args.clients} clients, errors {stats['errors']}, "
          f"{stats['rps']:.0f} req/s, p50 {stats['p50']:.1f} ms, p95 {stats['p95']:.1f} ms, "
          f"p99 {stats['p99']:.1f} ms, wall {stats['wall_s']:.1f} s, exit code {code}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Load-test docs-mcp-server over streamable HTTP.")
    parser.add_argument("--index-dir", type=Path, required=True, help="prebuilt index (docs-mcp build --out)")
    parser.add_argument(
        "--cases", type=Path, default=DEFAULT_CASES, help=f"queries (default {DEFAULT_CASES})"
    )
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (default 20)")
    parser.add_argument("--requests", type=int, default=5000, help="searches per mode (default 5000)")
    parser.add_argument("--modes", default="stateful,stateless", help="comma-separated: stateful, stateless")
    parser.add_argument("--server-command", help="command to run instead of docs-mcp-server (shell syntax)")
    args = parser.parse_args(argv)
    if not (args.index_dir / "metadata.json").is_file():
        print(f"error: {args.index_dir} has no metadata.json; build the index first", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in ("stateful", "stateless")]
    if unknown:
        print(f"error: unknown mode(s) {', '.join(unknown)}; use stateful and/or stateless", file=sys.stderr)
        return 2
    cases = json.loads(args.cases.read_text(encoding="utf-8"))
    command = server_command(args.server_command)
    for mode in modes:
        bench_mode(command, args.index_dir, mode == "stateful", cases, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
