"""Abusive HTTP clients against fair shares: ``uv run python benchmarks/http_hoarding.py --index-dir DIR``.

Starts ``docs-mcp-server --transport http`` on 127.0.0.1 for each scenario; the abusive client
connects from 127.0.0.1 and the other client from 127.0.0.2 (both loopback on Linux):

- **sessions**: the abuser opens ``--sessions`` sessions (default 500, the default
  ``--max-sessions``) and holds each one's ``GET /mcp`` event stream; then the other client tries to
  initialize for up to 10 s. Prints how often it was refused, how long admission took, and whether
  its search answered.
- **slow headers** / **slow bodies**: the abuser keeps ``--connections`` (default 1,100, above the
  default ``--max-connections``) connections sending their request a byte a second, reopening each
  as soon as the server closes or refuses it; meanwhile the other client initializes every 100 ms
  for ``--seconds``. Prints the other client's admissions, its slowest answer and the server's RSS.
- **unread answers**: with ``--max-sessions 1 --send-timeout 5`` (``--send-timeout``), the abuser pipelines 3,000
  searches on one connection of its session and reads nothing; the other client retries
  ``initialize`` every 0.5 s. Prints when it was admitted and the server's RSS.

``--server-command`` runs another build (say, an older checkout's ``.venv/bin/docs-mcp-server``) for
the before figures. Needs ``ulimit -n`` above the connection count (the script raises its own soft
limit when it can).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import queue
import resource
import shlex
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

OTHER = "127.0.0.2"
PROTOCOL = "2025-06-18"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}  # fmt: skip
SEARCH = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "search_docs", "arguments": {"query": "retry", "limit": 50}}}  # fmt: skip


class Server:
    def __init__(self, command: list[str], index_dir: str, *flags: str) -> None:
        args = [*command, "--index-dir", index_dir, "--transport", "http", "--port", "0", *flags]
        self.process = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        ports: queue.Queue[int] = queue.Queue()

        def pump() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:  # read to the end: a full pipe would stall the server
                if "started mcp server" in line:
                    ports.put(json.loads(line)["properties"]["port"])

        threading.Thread(target=pump, daemon=True).start()
        self.port = ports.get(timeout=60)

    def rss_mb(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0]) // 1024

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def post(port: int, message: dict[str, Any], session: str | None = None, source: str = "127.0.0.1") -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    headers = {
        **HEADERS,
        "MCP-Protocol-Version": PROTOCOL,
        **({"mcp-session-id": session} if session else {}),
    }
    try:
        conn.request("POST", "/mcp", json.dumps(message).encode(), headers)
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def open_session(port: int, source: str = "127.0.0.1") -> str | None:
    status, headers, _ = post(port, INIT, source=source)
    if status != 200:
        return None
    session = headers["mcp-session-id"]
    post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session, source)
    return session


def hold_stream(port: int, session: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(
        f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        f"MCP-Protocol-Version: {PROTOCOL}\r\nmcp-session-id: {session}\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    return sock


def sessions(command: list[str], index_dir: str, count: int) -> None:
    server = Server(command, index_dir)
    streams = []
    try:
        for _ in range(count):
            session = open_session(server.port)
            if session is not None:
                streams.append(hold_stream(server.port, session))
        refused, started = 0, time.perf_counter()
        while time.perf_counter() - started < 10:
            session = open_session(server.port, OTHER)
            if session is not None:
                admitted = (time.perf_counter() - started) * 1000
                status, _, body = post(server.port, SEARCH, session, OTHER)
                print(f"sessions: {len(streams)} held with event streams; the other client was admitted after "
                      f"{refused} refusals in {admitted:.1f} ms, its search answered {status} ({len(body)} bytes)")  # fmt: skip
                return
            refused += 1
        print(
            f"sessions: {len(streams)} held with event streams; the other client was refused {refused} times in 10 s"
        )
    finally:
        for sock in streams:
            sock.close()
        server.stop()


async def _slow_connection(port: int, body: bool, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        try:
            if body:
                writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 1000\r\n\r\n{")  # fmt: skip
            else:
                writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while not stop.is_set():
                writer.write(b" " if body else b"X-Slow: a\r\n")
                await writer.drain()
                try:
                    if await asyncio.wait_for(reader.read(1024), 1.0) or reader.at_eof():
                        break  # answered (408, 503) or closed: reopen
                except TimeoutError:
                    pass
        except OSError:
            pass
        finally:
            writer.close()


def _other_client(port: int, stop: threading.Event, results: list[tuple[int | str, float]]) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            status: int | str = post(port, INIT, source=OTHER)[0]
        except OSError as exc:
            status = type(exc).__name__
        results.append((status, time.perf_counter() - started))
        time.sleep(0.1)


async def slow(command: list[str], index_dir: str, count: int, seconds: float, body: bool) -> None:
    server = Server(command, index_dir)
    stop, other_stop, results = asyncio.Event(), threading.Event(), []
    try:
        tasks = [asyncio.create_task(_slow_connection(server.port, body, stop)) for _ in range(count)]
        await asyncio.sleep(3)
        other = threading.Thread(target=_other_client, args=(server.port, other_stop, results))
        other.start()
        await asyncio.sleep(seconds)
        other_stop.set()
        await asyncio.to_thread(other.join)
        rss = server.rss_mb()
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        server.stop()
    admitted = sum(1 for status, _ in results if status == 200)
    slowest = max((took for _, took in results), default=0.0) * 1000
    statuses = sorted({str(status) for status, _ in results})
    print(f"slow {'bodies' if body else 'headers'}: {count} connections; the other client was admitted "
          f"{admitted} of {len(results)} times (answers {', '.join(statuses)}), slowest {slowest:.0f} ms; server RSS {rss} MB")  # fmt: skip


def unread(command: list[str], index_dir: str, send_timeout: float) -> None:
    flags = ["--send-timeout", f"{send_timeout:g}"] if send_timeout else []  # 0: a build without the flag
    server = Server(command, index_dir, "--max-sessions", "1", *flags)
    try:
        session = open_session(server.port)
        assert session is not None
        body = json.dumps(SEARCH).encode()
        request = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: " + PROTOCOL.encode()
                   + b"\r\nmcp-session-id: " + session.encode() + b"\r\nContent-Length: " + str(len(body)).encode()
                   + b"\r\n\r\n" + body)  # fmt: skip
        with socket.create_connection(("127.0.0.1", server.port)) as reader:
            reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            reader.setblocking(False)
            for _ in range(3000):
                try:
                    reader.send(request)
                except BlockingIOError:
                    break
            started = time.perf_counter()
            while time.perf_counter() - started < 60:
                if open_session(server.port, OTHER) is not None:
                    print(f"unread answers: the other client was admitted after {time.perf_counter() - started:.1f} s"
                          f" (--send-timeout {send_timeout:g}); server RSS {server.rss_mb()} MB")  # fmt: skip
                    return
                time.sleep(0.5)
            print(f"unread answers: the other client was refused for 60 s; server RSS {server.rss_mb()} MB")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--index-dir", required=True)
    parser.add_argument(
        "--server-command", help="command line of the server to measure (default: this checkout's)"
    )
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--send-timeout", type=float, default=5.0, help="for unread answers; 0: do not pass it"
    )
    parser.add_argument("--only", choices=["sessions", "headers", "bodies", "unread"], action="append")
    args = parser.parse_args()
    script = Path(sys.executable).parent / "docs-mcp-server"
    command = shlex.split(args.server_command) if args.server_command else [str(script)]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 2 * args.connections + 256)), hard))
    only = set(args.only or ["sessions", "headers", "bodies", "unread"])
    if "sessions" in only:
        sessions(command, args.index_dir, args.sessions)
    for name, body in (("headers", False), ("bodies", True)):
        if name in only:
            asyncio.run(slow(command, args.index_dir, args.connections, args.seconds, body))
    if "unread" in only:
        unread(command, args.index_dir, args.send_timeout)


if __name__ == "__main__":
    main()
