"""s3:// against a local folder: ``uv run python benchmarks/object_store_serving.py [--docs-dir DIR]``.

Builds one corpus twice with ``docs-mcp build`` (same settings): into a local folder and into an
S3-compatible object store (``--endpoint`` of a running MinIO or S3, else moto's server started on
127.0.0.1 here). Starts two ``docs-mcp-server`` processes on stdio, one on each index, and times
``search_docs`` calls, alternating between the two servers query by query so both see the same
machine load (stdio rather than HTTP: on loopback HTTP the transport's own delays, about 40 ms on
some calls to either server, would hide the comparison). Prints p50/p95 (nearest rank) for each and the s3/local ratio,
then how long the s3:// server took to start answering (it fetches the generation first).

Target: the s3:// server's p50 and p95 within 1.2x of the local folder's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
BIN = Path(sys.executable).parent
BUCKET = "docs-mcp-bench"
DEFAULT_QUERIES = [
    "retry configuration",
    "create a payment",
    "authentication api key",
    "pagination cursor",
    "webhook signature",
    "error handling",
    "refund a charge",
    "install the sdk",
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))] if ordered else 0.0


@contextmanager
def object_store(endpoint: str | None) -> Iterator[dict[str, str]]:
    """AWS_* variables of the object store to use (moto on 127.0.0.1 unless ``endpoint`` is given)."""
    if endpoint:
        yield {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true"}
        return
    from tests.fakes.s3_server import s3_server

    with s3_server() as s3:
        s3.create_bucket(BUCKET)
        yield s3.environment()


def build(docs: Path, out: str, env: dict[str, str], extra: list[str]) -> None:
    done = subprocess.run(
        [str(BIN / "docs-mcp"), "build", "--docs-dir", str(docs), "--out", out, *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"build into {out} failed:\n{done.stderr}")


class Server:
    """A ``docs-mcp-server`` on stdio, spoken to in raw JSON-RPC lines (no client library overhead)."""

    def __init__(self, index: str, env: dict[str, str], extra: list[str]) -> None:
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [str(BIN / "docs-mcp-server"), "--index-dir", index, "--log-level", "warning", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.call("search_docs", {"query": "warm up"})  # opens (and for s3://, fetches) the index
        self.ready_seconds = time.perf_counter() - started

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"the server stopped answering (exit {self.proc.poll()})")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit(f"{method} failed: {reply['error']}")
                return reply["result"]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise SystemExit(f"{tool} failed: {result}")
        return result

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Search latency of an s3:// index against a local folder.")
    parser.add_argument(
        "--docs-dir", type=Path, default=REPO_ROOT / "examples" / "docs", help="corpus to build"
    )
    parser.add_argument("--cases", type=Path, help="eval cases (cases.json); default: a few fixed queries")
    parser.add_argument("--passes", type=int, default=5, help="timed passes over the queries (default 5)")
    parser.add_argument(
        "--endpoint", help="a running S3-compatible server (AWS_* credentials from the environment)"
    )
    parser.add_argument("--bucket", default=BUCKET, help=f"bucket to publish into (default {BUCKET})")
    parser.add_argument("--build-arg", action="append", default=[], help="extra docs-mcp build argument")
    args = parser.parse_args(argv)

    if args.cases:
        from docs_mcp_eval.cases import load_cases

        queries = [case.query for case in load_cases(args.cases)]
    else:
        queries = DEFAULT_QUERIES
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {"LANCEDB_LOG": "error"}
    with object_store(args.endpoint) as aws, tempfile.TemporaryDirectory(prefix="docs-mcp-bench-") as tmp:
        env |= (
            aws
            if args.endpoint is None
            else {**aws, **{k: v for k, v in os.environ.items() if k.startswith("AWS_")}}
        )
        uri = f"s3://{args.bucket}/bench/{int(time.time())}"
        local = str(Path(tmp) / "idx")
        t0 = time.perf_counter()
        build(args.docs_dir, local, env, args.build_arg)
        build(args.docs_dir, uri, env, args.build_arg)
        print(f"built {args.docs_dir} twice in {time.perf_counter() - t0:.1f} s: {local} and {uri}")
        servers = {
            "local": Server(local, env, []),
            "s3": Server(uri, env, ["--index-cache-dir", str(Path(tmp) / "cache")]),
        }
        try:
            for server in servers.values():  # the same warm-up on both
                for query in queries[:10]:
                    server.call("search_docs", {"query": query, "limit": 5})
            samples: dict[str, list[float]] = {name: [] for name in servers}
            for n in range(args.passes):
                order = list(servers.items()) if n % 2 == 0 else list(reversed(servers.items()))
                for query in queries:
                    for name, server in order:
                        started = time.perf_counter()
                        server.call("search_docs", {"query": query})
                        samples[name].append((time.perf_counter() - started) * 1000)
            print(f"{len(queries)} queries x {args.passes} passes, search_docs over stdio, interleaved")
            for name in servers:
                values = samples[name]
                print(
                    f"  {name:5} p50 {percentile(values, 0.5):7.2f} ms  p95 {percentile(values, 0.95):7.2f} ms"
                )
            for p, label in ((0.5, "p50"), (0.95, "p95")):
                ratio = percentile(samples["s3"], p) / max(percentile(samples["local"], p), 1e-9)
                print(f"  ratio s3/local {label}: {ratio:.2f}x (target <= 1.2x)")
            print(f"  ready to answer: local {servers['local'].ready_seconds:.2f} s, "
                  f"s3 {servers['s3'].ready_seconds:.2f} s (fetch included)")  # fmt: skip
        finally:
            for server in servers.values():
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
