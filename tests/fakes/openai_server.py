"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI API for docs-mcp's tests.

It stands in for ``https://api.openai.com/v1``: point an ``openai.OpenAI`` client (or docs-mcp's
``--embedding-base-url``) at :attr:`FakeOpenAI.base_url`. Implemented endpoints:

* ``POST /v1/embeddings``: deterministic vectors (the docs-mcp ``hash`` algorithm at the requested
  dimensions), answered as base64 little-endian float32 or as JSON floats per ``encoding_format``;
* ``POST /v1/files`` (multipart), ``GET /v1/files/{id}/content``;
* ``POST /v1/batches``, ``GET /v1/batches?limit=N``, ``GET /v1/batches/{id}``: a batch advances one
  step per poll and completes after ``batch_polls_to_complete`` polls, producing an output file
  (lines in reverse order, so clients must place results by ``custom_id``).

Usage::

    with FakeOpenAI() as api:
        api.script("embeddings", Fault(status=429, headers={"Retry-After": "1"}))
        provider = OpenAIEmbeddingProvider(api_key=api.api_key, base_url=api.base_url, ...)
        ...
        assert len(api.requests_to("embeddings")) == 2
        assert api.max_in_flight == 4

Faults are queued per route with :meth:`FakeOpenAI.script` and consumed one per request, in order.
A route's requests after the queue empties are answered normally. ``latency`` adds a fixed delay to
every embeddings request (a stand-in for network round trips in benchmarks). Every request is recorded
(:attr:`FakeOpenAI.requests`). No test double here sleeps to synchronise: :meth:`hold_until_in_flight`
makes the server itself wait (bounded) until N requests are in flight, which proves real concurrency.
"""

from __future__ import annotations

import base64
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import numpy as np

Route = Literal[
    "embeddings", "files.create", "files.content", "batches.create", "batches.list", "batches.retrieve"
]

MODEL_DIMENSIONS: dict[str, int] = {
    "text-embedding-3-large": 3072,
    "text-embedding-3-small": 1536,
    "text-embedding-ada-002": 1536,
}


def fake_vector(text: str, dimensions: int) -> list[float]:
    """The vector this server returns for ``text``: byte i into bucket i % dims (+ even, - odd), L2-normalised."""
    data = text.encode("utf-8")
    vector = [0.0] * dimensions
    for i, byte in enumerate(data):
        vector[i % dimensions] += byte if i % 2 == 0 else -byte
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


@dataclass
class Fault:
    """One scripted misbehaviour for the next request on a route.

    ``kind``:
      * ``"status"``: answer ``status`` with ``body`` (dict -> JSON; default an OpenAI error object) and ``headers``;
      * ``"malformed_json"``: 200 with a body that is not JSON;
      * ``"wrong_count"``: 200 with one vector fewer than inputs;
      * ``"drop"``: close the connection without answering;
      * ``"ok"``: answer normally (useful with ``delay`` for slow responses);
      * ``"trickle"``: 200 announcing ``size`` bytes of body, then sending one every ``interval`` s;
      * ``"trickle_headers"``: the status line and one header, one byte every ``interval`` s;
      * ``"huge"``: 200 with a body of ``size`` spaces, sent as fast as the client reads.
    ``delay`` seconds are waited before answering (interruptible by :meth:`FakeOpenAI.stop`, as is
    every trickled byte).
    """

    status: int = 500
    kind: Literal[
        "status", "malformed_json", "wrong_count", "drop", "ok", "trickle", "trickle_headers", "huge"
    ] = "status"
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    size: int = 0
    interval: float = 0.05


@dataclass
class RecordedRequest:
    method: str
    path: str
    route: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any
    started: float
    status: int = 0


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, str]
    status: str = "validating"
    total: int = 0
    completed: int = 0
    failed: int = 0
    polls: int = 0
    output_file_id: str | None = None
    created_at: int = field(default_factory=lambda: int(time.time()))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": None,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": None,
            "created_at": self.created_at,
            "request_counts": {"total": self.total, "completed": self.completed, "failed": self.failed},
            "metadata": dict(self.metadata),
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    api: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:  # quiet: clients hang up on purpose
        return


class FakeOpenAI:
    """The fake API server; a context manager that starts on enter and stops on exit."""

    def __init__(
        self,
        *,
        api_key: str | None = "sk-test",
        models: Iterable[str] = MODEL_DIMENSIONS,
        dimensions_override: int | None = None,
        batch_polls_to_complete: int = 2,
        batch_outcome: Literal["completed", "failed", "expired"] = "completed",
        latency: float = 0.0,
    ) -> None:
        self.api_key = api_key or "sk-test"
        self.require_key = api_key is not None
        self.models = set(models)
        self.dimensions_override = dimensions_override
        self.batch_polls_to_complete = batch_polls_to_complete
        self.batch_outcome = batch_outcome
        self.latency = latency
        self.batches: dict[str, FakeBatch] = {}
        self.files: dict[str, bytes] = {}
        self.file_purposes: dict[str, str] = {}
        self._lock = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._faults: dict[str, deque[Fault]] = {}
        self._in_flight = 0
        self._max_in_flight = 0
        self._gate_count: int | None = None
        self._gate_timeout = 0.0
        self._gate_open = True
        self._ids = 0
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.api = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._gate_open = True
            self._lock.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` / ``--embedding-base-url``."""
        return f"{self.url}/v1"

    # -- scripting -----------------------------------------------------------------------------

    def script(self, route: Route, *faults: Fault) -> None:
        """Queue ``faults`` for the next requests on ``route`` (one fault per request, in order)."""
        with self._lock:
            self._faults.setdefault(route, deque()).extend(faults)

    def hold_until_in_flight(self, count: int, timeout: float = 5.0) -> None:
        """Make embeddings requests wait (at most ``timeout`` s) until ``count`` are in flight at once.

        The gate opens for good the first time ``count`` concurrent requests are reached (or the first
        wait times out), so a client that really runs ``count`` requests in parallel is never slowed
        down, while a serial client shows ``max_in_flight == 1`` after one bounded wait.
        """
        with self._lock:
            self._gate_count = count
            self._gate_timeout = timeout
            self._gate_open = False

    def hold(self, timeout: float = 120.0) -> None:
        """Make embeddings requests wait until :meth:`release` (at most ``timeout`` s), e.g. to keep a
        build busy at a known point while a test looks at what it holds."""
        self.hold_until_in_flight(1 << 30, timeout)

    def release(self) -> None:
        """Let held requests (and all later ones) through."""
        with self._lock:
            self._gate_open = True
            self._lock.notify_all()

    def add_batch(
        self,
        *,
        content_sha: str,
        status: str = "in_progress",
        batch_name: str | None = None,
        input_jsonl: bytes | None = None,
        total: int = 0,
    ) -> FakeBatch:
        """Register a batch as if a previous run had created it (for resume tests).

        With ``input_jsonl`` the batch can really complete (a ``completed`` one gets its output now).
        """
        with self._lock:
            file_id = self._new_id("file")
            self.files[file_id] = input_jsonl or b""
            self.file_purposes[file_id] = "batch"
            metadata = {"content_sha": content_sha}
            if batch_name:
                metadata["batch_name"] = batch_name
            lines = [ln for ln in (input_jsonl or b"").splitlines() if ln.strip()]
            batch = FakeBatch(
                id=self._new_id("batch"),
                input_file_id=file_id,
                endpoint="/v1/embeddings",
                completion_window="24h",
                metadata=metadata,
                status=status,
                total=total or len(lines),
            )
            if status == "completed":
                self._complete_batch(batch)
            self.batches[batch.id] = batch
            return batch

    # -- inspection ----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, route: Route) -> list[RecordedRequest]:
        return [r for r in self.requests if r.route == route]

    @property
    def embedding_inputs(self) -> list[list[str]]:
        """The ``input`` list of every embeddings request, in arrival order."""
        out: list[list[str]] = []
        for r in self.requests_to("embeddings"):
            value = r.json.get("input") if isinstance(r.json, dict) else None
            out.append([value] if isinstance(value, str) else list(value or []))
        return out

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._max_in_flight

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Block until ``predicate()`` holds (re-checked on every request), at most ``timeout`` s."""
        with self._lock:
            return self._lock.wait_for(predicate, timeout)

    # -- internals -----------------------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids:04d}"

    def _next_fault(self, route: str) -> Fault | None:
        with self._lock:
            queue = self._faults.get(route)
            return queue.popleft() if queue else None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            self._lock.notify_all()

    def _enter(self, gated: bool) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            if gated and not self._gate_open and self._gate_count is not None:
                if self._in_flight >= self._gate_count:
                    self._gate_open = True
                    self._lock.notify_all()
                elif not self._lock.wait_for(lambda: self._gate_open, self._gate_timeout):
                    self._gate_open = True  # give up once: a failing client costs one timeout, not N

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()

    def _complete_batch(self, batch: FakeBatch) -> None:
        """Compute a batch's output file from its input file (lines written in reverse order)."""
        out_lines: list[str] = []
        for raw in self.files.get(batch.input_file_id, b"").splitlines():
            if not raw.strip():
                continue
            request = json.loads(raw)
            body = request["body"]
            dims = body.get("dimensions") or MODEL_DIMENSIONS.get(body["model"], 1536)
            vector = fake_vector(body["input"], self.dimensions_override or dims)
            out_lines.append(
                json.dumps(
                    {
                        "id": f"batch_req_{request['custom_id']}",
                        "custom_id": request["custom_id"],
                        "response": {
                            "status_code": 200,
                            "request_id": request["custom_id"],
                            "body": {
                                "object": "list",
                                "data": [{"object": "embedding", "index": 0, "embedding": vector}],
                                "model": body["model"],
                                "usage": {"prompt_tokens": 1, "total_tokens": 1},
                            },
                        },
                        "error": None,
                    }
                )
            )
        out_lines.reverse()
        output_id = self._new_id("file-out")
        self.files[output_id] = ("\n".join(out_lines) + "\n").encode("utf-8")
        batch.output_file_id = output_id
        batch.total = batch.total or len(out_lines)
        batch.completed = len(out_lines)
        batch.status = "completed"

    def _advance_batch(self, batch: FakeBatch) -> None:
        with self._lock:
            if batch.status in ("completed", "failed", "expired", "cancelled"):
                return
            batch.polls += 1
            if batch.polls >= self.batch_polls_to_complete:
                if self.batch_outcome == "completed":
                    self._complete_batch(batch)
                else:
                    batch.status = self.batch_outcome
            else:
                batch.status = "in_progress"
                batch.completed = batch.total * batch.polls // max(1, self.batch_polls_to_complete)


def _error_body(message: str, code: str | None, type_: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _route_of(method: str, path: str) -> str:
    parts = [p for p in path.split("/") if p]
    if parts[:1] != ["v1"]:
        return "unknown"
    rest = parts[1:]
    if method == "POST" and rest == ["embeddings"]:
        return "embeddings"
    if method == "POST" and rest == ["files"]:
        return "files.create"
    if method == "GET" and len(rest) == 3 and rest[0] == "files" and rest[2] == "content":
        return "files.content"
    if method == "POST" and rest == ["batches"]:
        return "batches.create"
    if method == "GET" and rest == ["batches"]:
        return "batches.list"
    if method == "GET" and len(rest) == 2 and rest[0] == "batches":
        return "batches.retrieve"
    return "unknown"


class _Handler(BaseHTTPRequestHandler):
    # without this every answer waits ~40 ms for delayed ACKs (Nagle), which distorts timings
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    _record_entry: RecordedRequest

    @property
    def api(self) -> FakeOpenAI:
        server = self.server
        assert isinstance(server, _Server)
        return server.api

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    # -- plumbing ---------------------------------------------------------------------------

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self._record_entry.status = status  # before answering, so a client never sees it unset
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _handle(self, method: str) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        route = _route_of(method, split.path)
        parsed: Any = None
        if body and "json" in (self.headers.get("Content-Type") or ""):
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
        record = RecordedRequest(
            method=method,
            path=split.path,
            route=route,
            query=parse_qs(split.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            json=parsed,
            started=time.monotonic(),
        )
        self._record_entry = record
        self.api._record(record)
        self.api._enter(gated=route == "embeddings")
        try:
            self._dispatch(route, record)
        finally:
            self.api._leave()

    def _dispatch(self, route: str, req: RecordedRequest) -> int:
        fault = self.api._next_fault(route)
        if route == "embeddings" and self.api.latency > 0:
            self.api._stopping.wait(self.api.latency)
        if fault is not None and fault.delay > 0:
            self.api._stopping.wait(fault.delay)
        if fault is not None and fault.kind == "drop":
            self.close_connection = True
            return 0
        if fault is not None and fault.kind == "status":
            payload = (
                fault.body
                if fault.body is not None
                else _error_body(f"scripted failure {fault.status}", None, "server_error")
            )
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
            self._send(fault.status, raw, "application/json", fault.headers)
            return fault.status
        if fault is not None and fault.kind in ("trickle", "trickle_headers", "huge"):
            self._stream_fault(fault)
            return 200
        if fault is not None and fault.kind == "malformed_json":
            self._send(200, b'{"object": "list", "data": [', "application/json")
            return 200
        if self.api.require_key and req.headers.get("authorization") != f"Bearer {self.api.api_key}":
            self._json(
                401,
                _error_body(
                    "Incorrect API key provided: sk-***. You can find your API key at "
                    "https://platform.openai.com/account/api-keys.",
                    "invalid_api_key",
                ),
            )
            return 401
        handler = {
            "embeddings": self._embeddings,
            "files.create": self._files_create,
            "files.content": self._files_content,
            "batches.create": self._batches_create,
            "batches.list": self._batches_list,
            "batches.retrieve": self._batches_retrieve,
        }.get(route)
        if handler is None:
            self._json(404, _error_body(f"Invalid URL ({req.method} {req.path})", None))
            return 404
        return handler(req, fault)

    def _stream_fault(self, fault: Fault) -> None:
        """A trickled or huge answer; ends early when the client hangs up or the server stops."""
        self._record_entry.status = 200
        self.close_connection = True
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {fault.size}\r\n\r\n"
        try:
            if fault.kind == "trickle_headers":
                for byte in (head[:-4] + "\r\nX-Slow: " + "a" * fault.size).encode("ascii"):
                    self.wfile.write(bytes([byte]))
                    if self.api._stopping.wait(fault.interval):
                        return
                return
            self.wfile.write(head.encode("ascii"))
            if fault.kind == "huge":
                block = b" " * (1 << 16)
                for start in range(0, fault.size, len(block)):
                    self.wfile.write(block[: fault.size - start])
                return
            for _ in range(fault.size):
                self.wfile.write(b" ")
                if self.api._stopping.wait(fault.interval):
                    return
        except OSError:  # the client hung up: what a bounded client does
            return

    # -- endpoints --------------------------------------------------------------------------

    def _embeddings(self, req: RecordedRequest, fault: Fault | None) -> int:
        payload = req.json
        if not isinstance(payload, dict) or "input" not in payload or "model" not in payload:
            self._json(400, _error_body("'input' and 'model' are required", None))
            return 400
        model = payload["model"]
        if model not in self.api.models:
            self._json(
                404,
                _error_body(
                    f"The model `{model}` does not exist or you do not have access to it.", "model_not_found"
                ),
            )
            return 404
        native = MODEL_DIMENSIONS.get(model, 1536)
        dims = payload.get("dimensions")
        if dims is not None and model == "text-embedding-ada-002":
            self._json(400, _error_body("This model does not support specifying dimensions.", None))
            return 400
        if dims is not None and (not isinstance(dims, int) or dims < 1 or dims > native):
            self._json(400, _error_body(f"Invalid 'dimensions': {dims!r}.", None))
            return 400
        inputs = payload["input"]
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        size = self.api.dimensions_override or dims or native
        encoding = payload.get("encoding_format", "float")
        data: list[dict[str, Any]] = []
        for index, text in enumerate(texts):
            vector = fake_vector(text, size)
            embedding: Any
            if encoding == "base64":
                embedding = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
            else:
                embedding = vector
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        if fault is not None and fault.kind == "wrong_count":
            data = data[:-1]
        data.reverse()  # the API does not promise order; clients must sort by index
        self._json(
            200,
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            },
        )
        return 200

    def _files_create(self, req: RecordedRequest, fault: Fault | None) -> int:
        content_type = req.headers.get("content-type", "")
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + req.body
        )
        fields: dict[str, bytes] = {}
        filename = ""
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = payload
                if name == "file":
                    filename = str(part.get_param("filename", header="content-disposition") or "")
        if "file" not in fields or "purpose" not in fields:
            self._json(400, _error_body("'file' and 'purpose' are required", None))
            return 400
        with self.api._lock:
            file_id = self.api._new_id("file")
            self.api.files[file_id] = fields["file"]
            self.api.file_purposes[file_id] = fields["purpose"].decode()
        self._json(
            200,
            {
                "id": file_id,
                "object": "file",
                "bytes": len(fields["file"]),
                "created_at": int(time.time()),
                "filename": filename,
                "purpose": fields["purpose"].decode(),
                "status": "processed",
            },
        )
        return 200

    def _files_content(self, req: RecordedRequest, fault: Fault | None) -> int:
        file_id = req.path.split("/")[3]
        content = self.api.files.get(file_id)
        if content is None:
            self._json(404, _error_body(f"No such File object: {file_id}", None))
            return 404
        self._send(200, content, "application/octet-stream")
        return 200

    def _batches_create(self, req: RecordedRequest, fault: Fault | None) -> int:
        payload = req.json if isinstance(req.json, dict) else {}
        file_id = payload.get("input_file_id")
        if file_id not in self.api.files:
            self._json(400, _error_body(f"Invalid input_file_id {file_id!r}", None))
            return 400
        lines = [ln for ln in self.api.files[file_id].splitlines() if ln.strip()]
        with self.api._lock:
            batch = FakeBatch(
                id=self.api._new_id("batch"),
                input_file_id=file_id,
                endpoint=str(payload.get("endpoint")),
                completion_window=str(payload.get("completion_window")),
                metadata=dict(payload.get("metadata") or {}),
                total=len(lines),
            )
            self.api.batches[batch.id] = batch
        self._json(200, batch.to_json())
        return 200

    def _batches_list(self, req: RecordedRequest, fault: Fault | None) -> int:
        limit = int((req.query.get("limit") or ["20"])[0])
        with self.api._lock:
            newest_first = sorted(self.api.batches.values(), key=lambda b: b.id, reverse=True)[:limit]
            data = [b.to_json() for b in newest_first]
        self._json(
            200,
            {
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": False,
            },
        )
        return 200

    def _batches_retrieve(self, req: RecordedRequest, fault: Fault | None) -> int:
        batch_id = req.path.split("/")[3]
        batch = self.api.batches.get(batch_id)
        if batch is None:
            self._json(404, _error_body(f"No batch found with id '{batch_id}'.", None))
            return 404
        self.api._advance_batch(batch)
        with self.api._lock:
            payload = batch.to_json()
        self._json(200, payload)
        return 200
