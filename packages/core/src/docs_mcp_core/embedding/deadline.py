"""A whole embeddings request within its timeout and a size bound, however the API answers.

The HTTP client's timeouts bound each network read, not a request: an API that sends its answer
one byte at a time, each within the read timeout, would hold a build, or a query, for as long as it
likes, and one that sends a 500 MB answer would be read to the end. The SDK's client is therefore
given a network layer (:func:`http_client`) whose reads and writes, inside :func:`request_budget`,
never wait past the request's deadline and fail once the answer exceeds its byte bound. Such a
request asks for an uncompressed answer, and a compressed one is refused: 800 KB of gzip inflate
to 800 MB, past any bound on the bytes received. Outside such a block (the Batch API's uploads and
downloads) requests behave as usual. ``httpx2`` and
``httpcore2`` come with the ``openai`` SDK, whose HTTP layer they are.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

__all__ = ["UnusableAnswer", "http_client", "request_budget", "unusable_answer"]


class UnusableAnswer(httpcore2.ReadError):
    """The answer to a request exceeded the bytes its :func:`request_budget` allows, or came
    compressed."""


@dataclass
class _Budget:
    deadline: float
    max_bytes: int
    received: int = 0


_local = threading.local()  # the budget of the request this thread is making, if any


@contextmanager
def request_budget(seconds: float, max_bytes: int) -> Iterator[None]:
    """Requests made by this thread inside the block end within ``seconds`` (a timeout error) and
    read at most ``max_bytes`` (:class:`UnusableAnswer`), counted from the block's start."""
    saved = getattr(_local, "budget", None)
    _local.budget = _Budget(time.monotonic() + seconds, max_bytes)
    try:
        yield
    finally:
        _local.budget = saved


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of this thread's budget (raising ``error`` when none is)."""
    budget: _Budget | None = getattr(_local, "budget", None)
    if budget is None:
        return timeout
    left = budget.deadline - time.monotonic()
    if left <= 0:
        raise error("the request's time is up")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))
        budget: _Budget | None = getattr(_local, "budget", None)
        if budget is not None:
            budget.received += len(data)
            if budget.received > budget.max_bytes:
                raise UnusableAnswer(
                    f"it exceeded {budget.max_bytes:,} bytes, far more than its vectors need"
                )
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore2.ConnectTimeout))
        return _Stream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        timeout = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        timeout = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _ask_uncompressed(request: httpx2.Request) -> None:
    if getattr(_local, "budget", None) is not None:
        request.headers["Accept-Encoding"] = "identity"


def _refuse_compressed(response: httpx2.Response) -> None:
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if getattr(_local, "budget", None) is not None and encoding not in ("", "identity"):
        reason = f"it came compressed ({encoding}), which was not asked for, so its size has no bound"
        raise httpx2.DecodingError(reason, request=response.request) from UnusableAnswer(reason)


def http_client(timeout: float) -> httpx2.Client:
    """An HTTP client for the SDK, as the SDK would make it (redirects followed), whose requests
    keep to :func:`request_budget`. A proxy from the environment is used as usual, without it."""
    transport = httpx2.HTTPTransport()
    pool = transport._pool  # pyright: ignore[reportPrivateUsage]
    pool._network_backend = _Backend(pool._network_backend)  # pyright: ignore[reportPrivateUsage]
    hooks: dict[str, list[Any]] = {"request": [_ask_uncompressed], "response": [_refuse_compressed]}
    return httpx2.Client(transport=transport, timeout=timeout, follow_redirects=True, event_hooks=hooks)


def unusable_answer(exc: BaseException) -> UnusableAnswer | None:
    """The :class:`UnusableAnswer` among the causes of ``exc`` (the SDK wraps it twice), if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, UnusableAnswer):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
