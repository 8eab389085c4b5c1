"""Credentials on HTTP requests: what guards ``/mcp`` (``--auth-token``, and the playground's password
sent as a bearer credential) and the playground's login.

A bearer credential is compared in constant time, in UTF-8 or Latin-1 (as browsers send it); wrong
guesses are counted per client address in a sliding window (:class:`LoginThrottle`), so one address
cannot try passwords without limit. :mod:`docs_mcp_server.http` decides with these who may use
``/mcp``; :mod:`docs_mcp_server.playground` uses them for its login page.
"""

from __future__ import annotations

import hmac
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from starlette.types import Scope

__all__ = [
    "LOGIN_ATTEMPTS",
    "LOGIN_WINDOW_SECONDS",
    "LoginThrottle",
    "bearer_credential",
    "client_address",
    "secret_matches",
]

LOGIN_ATTEMPTS = 10  # wrong passwords per client address ...
LOGIN_WINDOW_SECONDS = 60.0  # ... within this window, then 429 until the oldest one expires
_TRACKED_CLIENTS = 10_000


def bearer_credential(scope: Scope) -> bytes | None:
    """The credential of an ``Authorization: Bearer <credential>`` header, as the bytes sent."""
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, credential = value.partition(b" ")
            return credential.strip(b" \t") if scheme.lower() == b"bearer" else None
    return None


def secret_matches(sent: bytes, secret: str) -> bool:
    """Whether the header bytes ``sent`` are ``secret``, compared in constant time.

    Clients send the secret's UTF-8 bytes (curl, most HTTP libraries given bytes); browsers send
    characters up to U+00FF as one byte each (Latin-1), so that encoding is accepted too.
    """
    utf8 = hmac.compare_digest(sent, secret.encode("utf-8", "surrogateescape"))
    try:
        latin1 = secret.encode("latin-1")
    except UnicodeEncodeError:
        return utf8
    return hmac.compare_digest(sent, latin1) or utf8


class LoginThrottle:
    """Wrong passwords per client address in a sliding window (bounded memory)."""

    def __init__(
        self,
        attempts: int = LOGIN_ATTEMPTS,
        window_seconds: float = LOGIN_WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.attempts = attempts
        self.window = window_seconds
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, client: str, now: float) -> deque[float] | None:
        failures = self._failures.get(client)
        if failures is None:
            return None
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[client]
            return None
        return failures

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        now = self._clock()
        failures = self._recent(client, now)
        if failures is None or len(failures) < self.attempts:
            return 0.0
        return max(0.0, failures[0] + self.window - now)

    def failed(self, client: str) -> None:
        now = self._clock()
        failures = self._recent(client, now)
        if failures is None:
            failures = self._failures[client] = deque(maxlen=self.attempts)
            while len(self._failures) > _TRACKED_CLIENTS:
                self._failures.popitem(last=False)
        failures.append(now)

    def succeeded(self, client: str) -> None:
        self._failures.pop(client, None)


def client_address(scope: Scope) -> str:
    """The request's client address (``unknown`` when the server does not know it)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"
