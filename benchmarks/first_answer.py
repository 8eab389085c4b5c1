"""The first answer after a spawn, against the handshake: ``uv run python benchmarks/first_answer.py
--index-dir A [--index-dir B ...]``.

For every index (the runs interleaved: A B A B ..., so that both see the same load), ``--runs``
times:

* **stdio**: spawn ``docs-mcp-server``, send ``initialize``; when it is answered send
  ``notifications/initialized`` and one ``search_docs`` at once, as an agent does. Figures: spawn →
  ``initialize`` answered, spawn → first search answered, and their ratio (target ≤ 1.3, ≤ 2 on
  the 10x corpus). With ``--max-tokens N`` that search asks for an answer within N tokens. With ``--modern`` the client speaks the 2026-07-28 protocol instead: it opens
  with ``server/discover`` and sends its protocol, name and capabilities in every request's
  ``_meta``, as the MCP SDK's own client does;
* **HTTP** (``--http``): spawn the server on a free port; spawn → a TCP connection is accepted, and
  spawn → ``/healthz`` says ``ready``. Ratios: accepting / the same run's stdio ``initialize``
  (target ≤ 1.5) and ready / accepting (target ≤ 1.3).

Then (``--searches N``, default 60; 0 skips it), per index and interleaved ``--steady-runs`` times:
one stdio server answers the dev cases (``sdk-docs-dev-cases.json``) N times in turn after one
warm-up round; the search round trip's p50, and the server's anonymous memory afterwards
(``Private_Dirty`` of ``/proc/PID/smaps_rollup``: pages of memory-mapped index files are shared and
clean, so they do not count). Medians over the runs are printed, with the machine and its load.

Give an index built before derived files existed (or a copy without ``.lancedb/chunks.derived``)
as one of the ``--index-dir`` to compare with the start that derives everything.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_stdio import DEFAULT_CASES, INITIALIZE, StdioServer, percentile, search_arguments, server_command

TIMEOUT = 300.0
POLL_SECONDS = 0.005
FIRST_QUERY = {"query": "retry configuration"}


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "first-answer", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def stdio_first_answer(
    command: list[str], index: Path, *, modern: bool = False, max_tokens: int | None = None
) -> tuple[float, float]:
    """(spawn → opening request answered, spawn → first search answered), in ms. The opening
    request is ``initialize``, or with ``modern`` a 2026-07-28 client's ``server/discover`` (that
    client then sends its protocol, name and capabilities in every request's ``_meta``); with
    ``max_tokens`` the search asks for an answer within that many tokens."""
    server = StdioServer(command, index)
    try:
        if modern:
            server.send(
                {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": MODERN_META}}
            )
        else:
            server.send(INITIALIZE)
        server.receive()
        initialized = (time.perf_counter() - server.started) * 1000
        arguments = FIRST_QUERY if max_tokens is None else {**FIRST_QUERY, "max_tokens": max_tokens}
        params: dict[str, Any] = {"name": "search_docs", "arguments": arguments}
        if modern:
            params["_meta"] = MODERN_META
        else:
            server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result = server.call("tools/call", params)
        searched = (time.perf_counter() - server.started) * 1000
        if result.get("isError") or not _hits(result):
            raise RuntimeError(f"the first search failed on {index}: {result}")
        return initialized, searched
    finally:
        server.close()


def _hits(result: dict[str, Any]) -> list[Any]:
    """A ``search_docs`` answer's hits: from its structured content, or from the JSON of its text
    (a server that answers with text only, as the original does)."""
    structured = result.get("structuredContent")
    if structured is None:
        structured = json.loads(result["content"][0]["text"])
    return structured.get("hits") or []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_start(command: list[str], index: Path) -> tuple[float, float]:
    """(spawn → a connection accepted, spawn → /healthz ready), in ms."""
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            *command,
            "--index-dir",
            str(index),
            "--transport",
            "http",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "LANCEDB_LOG": "error"},
    )
    try:
        accepted = _wait(lambda: _connects(port), proc) - started
        ready = _wait(lambda: _ready(port), proc) - started
        return accepted * 1000, ready * 1000
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait(check: Any, proc: subprocess.Popen[bytes]) -> float:
    deadline = time.perf_counter() + TIMEOUT
    while time.perf_counter() < deadline:
        if check():
            return time.perf_counter()
        if proc.poll() is not None:
            raise RuntimeError(f"the HTTP server exited with {proc.returncode}")
        time.sleep(POLL_SECONDS)
    raise RuntimeError("the HTTP server did not start in time")


def _connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _ready(port: int) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        connection.request("GET", "/healthz")
        body = json.loads(connection.getresponse().read())
    except (OSError, ValueError):
        return False
    finally:
        connection.close()
    return body.get("index", {}).get("status") == "ready"


def steady(
    command: list[str], index: Path, cases: list[dict[str, Any]], searches: int
) -> tuple[float, float]:
    """(search round trip p50 in ms, Private_Dirty MB after the searches) of one stdio server."""
    server = StdioServer(command, index)
    try:
        server.handshake()
        for case in cases:
            server.call("tools/call", {"name": "search_docs", "arguments": search_arguments(case)})
        times = []
        for number in range(searches):
            case = cases[number % len(cases)]
            started = time.perf_counter()
            server.call("tools/call", {"name": "search_docs", "arguments": search_arguments(case)})
            times.append((time.perf_counter() - started) * 1000)
        return percentile(times, 0.5), private_dirty_mb(server.proc.pid)
    finally:
        server.close()


def private_dirty_mb(pid: int) -> float:
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith("Private_Dirty:"):
                return int(line.split()[1]) / 1024
    return 0.0


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores ({model or 'unknown CPU'}), load average {load}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--index-dir", type=Path, action="append", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--http", action="store_true", help="also time the HTTP transport's start")
    parser.add_argument("--searches", type=int, default=60)
    parser.add_argument(
        "--modern",
        action="store_true",
        help="the stdio client speaks the 2026-07-28 protocol (server/discover, _meta on every request)",
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        help="the first search asks for an answer within this many tokens (its first count builds "
        "the token encodings)",
    )
    parser.add_argument("--steady-runs", type=int, default=2)
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument(
        "--server-command",
        action="append",
        help="the server to run (default: docs-mcp-server of this venv); once for every index, or "
        "once per --index-dir in the same order (to compare two versions of the code)",
    )
    args = parser.parse_args()
    given = args.server_command or [None]
    if len(given) not in (1, len(args.index_dir)):
        parser.error("give --server-command once, or once per --index-dir")
    commands = [server_command(c) for c in (given * len(args.index_dir) if len(given) == 1 else given)]
    runs = list(zip(args.index_dir, commands, strict=True))
    labels = _labels(runs)
    print(f"machine: {machine()}")
    first: list[list[tuple[float, ...]]] = [[] for _ in runs]
    for run in range(args.runs):
        for position, (index, command) in enumerate(runs):
            init, search = stdio_first_answer(command, index, modern=args.modern, max_tokens=args.max_tokens)
            row: tuple[float, ...] = (init, search)
            if args.http:
                row += http_start(command, index)
            first[position].append(row)
            print(
                f"run {run + 1} {labels[position]}: " + " ".join(f"{v:.0f}" for v in row) + " ms", flush=True
            )
    opening = "server/discover" if args.modern else "initialize"
    for label, rows in zip(labels, first, strict=True):
        _report_first(label, rows, args.http, opening)
    if args.searches > 0:
        cases = json.loads(args.cases.read_text())
        figures: list[list[tuple[float, float]]] = [[] for _ in runs]
        for _ in range(args.steady_runs):
            for position, (index, command) in enumerate(runs):
                figures[position].append(steady(command, index, cases, args.searches))
        for label, values in zip(labels, figures, strict=True):
            p50 = statistics.median(v[0] for v in values)
            dirty = statistics.median(v[1] for v in values)
            print(
                f"{label}: steady search p50 {p50:.2f} ms, Private_Dirty after {args.searches} searches {dirty:.1f} MB"
            )
    print(f"machine after: {machine()}")
    return 0


def _labels(runs: list[tuple[Path, list[str]]]) -> list[str]:
    """How each (index, server) pair is named in the output: the index, and the server command when
    the same index is run by more than one (two versions of the code on one index)."""
    labels = []
    for index, command in runs:
        servers = {" ".join(c) for i, c in runs if i == index}
        labels.append(f"{index} [{' '.join(command)}]" if len(servers) > 1 else str(index))
    return labels


def _report_first(index: str, rows: list[tuple[float, ...]], with_http: bool, opening: str) -> None:
    init = statistics.median(r[0] for r in rows)
    search = statistics.median(r[1] for r in rows)
    ratio = statistics.median(r[1] / r[0] for r in rows)
    print(
        f"{index}: stdio spawn -> {opening} {init:.0f} ms, -> first search {search:.0f} ms; "
        f"first search / {opening} {ratio:.2f} (target <= 1.3; 10x corpus <= 2)"
    )
    if with_http:
        accept = statistics.median(r[2] / r[0] for r in rows)
        ready = statistics.median(r[3] / r[2] for r in rows)
        print(
            f"{index}: HTTP spawn -> accepting {statistics.median(r[2] for r in rows):.0f} ms, "
            f"-> /healthz ready {statistics.median(r[3] for r in rows):.0f} ms; accepting / stdio initialize "
            f"{accept:.2f} (target <= 1.5), ready / accepting {ready:.2f} (target <= 1.3)"
        )


if __name__ == "__main__":
    sys.exit(main())
