"""The HTTP part shared by the fake LLM servers: a threaded server on 127.0.0.1 that records requests,
counts the ones in flight and can hold them until enough arrive (to prove concurrency without sleeps).

A subclass implements :meth:`FakeLLMServer.respond` for its wire protocol and appends anything the
client got wrong to :attr:`FakeLLMServer.violations` (the answer is then an HTTP 400 with that text).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self, cast

from tests.fakes.agent_script import RawJson, Script


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    json: Any
    status: int = 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:  # clients may hang up
        return


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_POST(self) -> None:
        fake = cast(_Server, self.server).fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        record = Recorded(path=self.path, headers=headers, json=body)
        fake.enter()
        try:
            answer = fake.respond(self.path, headers, body)
        except Exception as exc:  # noqa: BLE001 - a bug in a test script: answer 500 and keep it visible
            fake.violations.append(f"fake server crashed: {type(exc).__name__}: {exc}")
            answer = Answer(500, {"error": {"message": str(exc), "type": "fake_crash"}}, {})
        finally:
            fake.leave()
        record.status = answer.status
        fake.record(record)
        payload = encode_body(answer.body).encode("utf-8")
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in answer.headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)


class FakeLLMServer:
    """Base class: lifecycle, recording, the in-flight gate. Subclasses implement :meth:`respond`."""

    def __init__(self, scripts: list[Script], *, api_key: str = "test-key", model: str) -> None:
        self.scripts = scripts
        self.api_key = api_key
        self.model = model
        self.violations: list[str] = []
        self._lock = threading.Condition()
        self._requests: list[Recorded] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._gate_count: int | None = None
        self._gate_timeout = 0.0
        self._gate_open = True
        self._ids = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._gate_open = True
            self._lock.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def respond(self, path: str, headers: dict[str, str], body: Any) -> Answer:
        raise NotImplementedError

    def new_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:05d}"

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def record(self, request: Recorded) -> None:
        with self._lock:
            self._requests.append(request)

    def hold_until_in_flight(self, count: int, timeout: float = 30.0) -> None:
        """Requests wait (bounded) until ``count`` are in flight at once; then the gate stays open."""
        with self._lock:
            self._gate_count = count
            self._gate_timeout = timeout
            self._gate_open = False

    def enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if not self._gate_open and self._gate_count is not None:
                if self._in_flight >= self._gate_count:
                    self._gate_open = True
                    self._lock.notify_all()
                elif not self._lock.wait_for(lambda: self._gate_open, self._gate_timeout):
                    self._gate_open = True  # give up once: a serial client pays one timeout

    def leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def reject(self, message: str, error: dict[str, Any]) -> Answer:
        self.violations.append(message)
        return Answer(400, error, {})


def encode_body(body: Any) -> str:
    """``body`` as JSON, each :class:`~tests.fakes.agent_script.RawJson` in it written as its text."""
    raws: list[str] = []

    def placeholder(value: Any) -> str:
        if not isinstance(value, RawJson):
            raise TypeError(f"{type(value).__name__} is not JSON")
        raws.append(value.text)
        return f"\u0000raw{len(raws) - 1}"

    text = json.dumps(body, default=placeholder)
    for number, raw in enumerate(raws):
        text = text.replace(f'"\\u0000raw{number}"', raw, 1)
    return text
