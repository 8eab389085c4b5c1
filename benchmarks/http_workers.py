"""HTTP throughput against ``--workers``: ``uv run python benchmarks/http_workers.py --index-dir DIR``.

Starts ``docs-mcp-server --transport http --stateless --workers N`` on 127.0.0.1 for each N of
``--workers`` (default ``1,2``; ``--rounds`` repeats the list, interleaved) and drives it with
``wrk`` (a C load generator: Debian's ``wrk`` package), whose Lua script POSTs JSON-RPC
``tools/call`` ``search_docs`` bodies, one per dev query in turn, on ``--connections`` kept-alive
connections. Before each timed run, ``--warmup`` seconds of the same load warm every worker up.

Prints, per run: requests per second, latency p50 / p99 (wrk's), the requests that did not answer
200 or answered an ``isError`` result, the CPU the load generator used (user + system time over
wall time, in cores), the CPU the server's processes used (in cores, and in milliseconds per
request) and the machine's load average; then each N's best requests per second as a
ratio to the first N's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from docs_mcp_eval.cases import load_cases

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CASES = SHARED_DIR / "corpora" / "sdk-docs-dev-cases.json"
START_TIMEOUT = 120.0

LUA = r"""
local bodies = {%(bodies)s}
local n = 0
local threads = {}
errors = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"

function setup(thread)
  table.insert(threads, thread)
end

function request()
  n = n %% #bodies + 1
  return wrk.format(nil, "/mcp", nil, bodies[n])
end

function response(status, headers, body)
  if status ~= 200 or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("errors")
  end
  io.write(string.format("RESULT %%d %%d %%.3f %%.3f %%.6f\n", summary.requests, failed,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.duration / 1e6))
end
"""


def lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def write_script(cases_path: Path, directory: Path) -> Path:
    bodies = []
    for i, case in enumerate(load_cases(cases_path)):
        arguments = {"query": case.query, "limit": case.limit, **dict(case.filters)}
        call = {"name": "search_docs", "arguments": arguments}
        bodies.append(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call}))
    script = directory / "search.lua"
    script.write_text(LUA % {"bodies": ", ".join(lua_string(b) for b in bodies)}, encoding="utf-8")
    return script


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "docs-mcp-server"
    return [str(script)] if script.exists() else [sys.executable, "-m", "docs_mcp_server"]


def start_server(index_dir: Path, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    argv = [*server_command(), "--index-dir", str(index_dir), "--transport", "http", "--stateless",
            "--port", str(port), "--workers", str(workers), "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env={**os.environ, "LANCEDB_LOG": "error"})
    deadline = time.monotonic() + START_TIMEOUT
    ready: set[int] = set()
    while len(ready) < workers:  # every worker has opened the index
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the server with {workers} worker(s) did not become ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
                health = json.load(answer)
            if health["index"]["status"] == "ready":
                ready.add(health.get("worker", {}).get("id", 0))
        except OSError:
            pass
        time.sleep(0.05)
    return proc, port


def run_wrk(port: int, script: Path, seconds: float, connections: int) -> tuple[dict[str, float], float]:
    """wrk's figures and the CPU it used, in cores."""
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency", "-s", str(script),
            f"http://127.0.0.1:{port}"]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    output = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    found = re.search(r"^RESULT (\d+) (\d+) ([\d.]+) ([\d.]+) ([\d.]+)$", output, re.MULTILINE)
    if proc.returncode != 0 or found is None:
        raise RuntimeError(f"wrk failed:\n{output}")
    requests, failed, p50, p99, duration = (float(v) for v in found.groups())
    figures = {"rps": requests / duration, "failed": failed, "p50": p50, "p99": p99, "requests": requests}
    return figures, (usage.ru_utime + usage.ru_stime) / wall


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` and its child processes (the workers) so far."""
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii").split()
    except OSError:
        children = []
    pids += [int(child) for child in children]
    ticks = 0
    for each in pids:
        try:
            fields = Path(f"/proc/{each}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text(encoding="ascii").split()[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="HTTP requests per second against --workers, driven by wrk.")
    parser.add_argument("--index-dir", type=Path, required=True, help="prebuilt index (docs-mcp build --out)")
    parser.add_argument(
        "--cases", type=Path, default=DEFAULT_CASES, help=f"queries (default {DEFAULT_CASES})"
    )
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts (default 1,2)")
    parser.add_argument(
        "--rounds", type=int, default=1, help="times to run the list, interleaved (default 1)"
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="timed seconds per run (default 15)")
    parser.add_argument("--warmup", type=float, default=3.0, help="untimed seconds of load first (default 3)")
    parser.add_argument("--connections", type=int, default=16, help="kept-alive connections (default 16)")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print("error: wrk is not installed (Debian/Ubuntu: apt-get install wrk)", file=sys.stderr)
        return 2
    if not (args.index_dir / "metadata.json").is_file():
        print(f"error: {args.index_dir} has no metadata.json; build the index first", file=sys.stderr)
        return 2
    if not args.cases.is_file():
        print(f"error: no case file at {args.cases}; pass --cases FILE", file=sys.stderr)
        return 2
    counts = [int(c) for c in args.workers.split(",") if c.strip()]
    best: dict[int, float] = {}
    print(f"cores: {os.cpu_count()}  connections: {args.connections}  load: {load_average()}")
    print(
        f"{'workers':>7s} {'req/s':>8s} {'p50 ms':>7s} {'p99 ms':>7s} {'failed':>6s} {'wrk CPU':>8s} "
        f"{'server CPU':>10s} {'CPU/req':>8s}  load"
    )
    with tempfile.TemporaryDirectory() as tmp:
        script = write_script(args.cases, Path(tmp))
        for _ in range(args.rounds):
            for count in counts:
                proc, port = start_server(args.index_dir, count)
                try:
                    run_wrk(port, script, args.warmup, args.connections)
                    cpu_before, started = server_cpu_seconds(proc.pid), time.perf_counter()
                    figures, cpu = run_wrk(port, script, args.seconds, args.connections)
                    server_cpu = server_cpu_seconds(proc.pid) - cpu_before
                    server_cores = server_cpu / (time.perf_counter() - started)
                finally:
                    proc.terminate()
                    proc.wait(timeout=60)
                best[count] = max(best.get(count, 0.0), figures["rps"])
                per_request = server_cpu * 1000 / max(1.0, figures["requests"])
                print(f"{count:7d} {figures['rps']:8.1f} {figures['p50']:7.1f} {figures['p99']:7.1f} "
                      f"{int(figures['failed']):6d} {cpu:7.2f}c {server_cores:9.2f}c {per_request:6.2f}ms  "
                      f"{load_average()}")  # fmt: skip
    base = best[counts[0]]
    for count in counts:
        print(
            f"{count} worker(s): best {best[count]:.1f} req/s, {best[count] / base:.2f}x {counts[0]} worker(s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
