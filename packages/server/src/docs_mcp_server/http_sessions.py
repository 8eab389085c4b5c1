"""MCP sessions that one client cannot hoard: each shares the session limit fairly, and an open event
stream alone does not keep a session.

The MCP SDK keeps a session while a request of it is in flight and counts an open ``GET /mcp``
event stream as one, so a client that opened sessions and held each one's stream kept them for
good; once ``--max-sessions`` were open every other client got 503, indefinitely (probe: one
client, 500 sessions with streams; a second client was refused 12,641 times in 10 s).
:class:`SessionBudget` adds two rules on top of the SDK's:

- **A session is idle when it sends nothing.** A session that has sent no request (its event stream
  does not count: this server pushes nothing on it) for ``session_idle_timeout`` seconds is ended;
  its stream ends, its id gets 404 and its client starts a new session, as MCP specifies. Sessions
  are checked every ``timeout / 4`` seconds (at most every 10 s).
- **A newcomer makes room.** A request that would open a session beyond ``max_sessions`` ends one
  first: of the clients (peer addresses) holding the most sessions, the session that has sent
  nothing for the longest time, among those with no request in flight. A client holding many
  sessions therefore loses its own before anyone else loses one, and behind a proxy (every client
  has the proxy's address) the longest idle session goes. When every session has a request in
  flight, a session of a client holding at least two more sessions than the newcomer's is ended
  all the same (its request gets an error), so keeping every session busy (say, with answers it
  never reads, until ``--send-timeout``) does not keep others out either; otherwise the newcomer is
  refused: 503 with ``Retry-After: 1`` and a JSON-RPC error naming the limit.

The SDK's own session limit is set to twice ``max_sessions``: a backstop that the sessions ended
here, while their tasks wind down, never reach.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.types import Message, Scope, Send

from docs_mcp_server.handshake import HANDSHAKE_PROTOCOL_VERSIONS
from docs_mcp_server.http_checks import PROTOCOL_VERSION_HEADER, SESSION_HEADER
from docs_mcp_server.logs import Throttled, log
from docs_mcp_server.options import HttpLimits

REFUSAL_RETRY_SECONDS = 1
_REFUSAL_LOG_SECONDS = 10.0  # at most one warning per this many seconds while sessions are refused
_MAX_CHECK_SECONDS = 10.0


@dataclass
class _Session:
    client: str
    transport: Any  # the SDK's StreamableHTTPServerTransport
    last_request: float  # time.monotonic() of the start or end of its latest request (not GET)
    busy: int = 0  # its requests in flight, its event stream excepted
    streams: int = 0  # its open event streams (GET /mcp)


def session_id(scope: Scope) -> str | None:
    """The ``mcp-session-id`` a request names, or None."""
    value = next((v for k, v in scope.get("headers", []) if k == SESSION_HEADER), None)
    return None if value is None else value.decode("latin-1")


def opens_a_session(scope: Scope, message: Any) -> bool:
    """Whether a screened ``POST /mcp`` could open a session: an ``initialize`` request without a
    session id, in a protocol revision that has sessions."""
    if session_id(scope) is not None or getattr(message, "method", None) != "initialize":
        return False
    version = next((v for k, v in scope.get("headers", []) if k == PROTOCOL_VERSION_HEADER), None)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


class Opening:
    """A slot of the session limit reserved for one opening request, until the session it opens is
    known (its answer carries the session id) or the request ends without opening one."""

    def __init__(self, budget: SessionBudget, client: str) -> None:
        self.budget = budget
        self.client = client
        self.open = True

    async def send(self, send: Send, message: Message) -> None:
        """``send`` for the opening request: registers the session its answer names."""
        if message["type"] == "http.response.start" and self.open:
            sid = next((v for k, v in message.get("headers", []) if k.lower() == SESSION_HEADER), None)
            if message["status"] < 400 and sid is not None:
                self.budget.opened(sid.decode("latin-1"), self.client)
            self.close()
        await send(message)

    def close(self) -> None:
        if self.open:
            self.open = False
            self.budget.reserved -= 1


class SessionBudget:
    """The sessions of one stateful server: who opened each, and when each last sent a request."""

    def __init__(self, limits: HttpLimits, manager: Any) -> None:
        self.limits = limits
        self.manager = manager  # the SDK's StreamableHTTPSessionManager
        self.sessions: dict[str, _Session] = {}
        self.reserved = 0  # opening requests admitted whose session is not registered yet
        self._refusals = Throttled(_REFUSAL_LOG_SECONDS)

    # -- the SDK's sessions ------------------------------------------------------------------------

    def _open_in_sdk(self) -> dict[str, Any]:
        # the manager's registry of sessions (no public accessor in mcp 2.3; pinned by uv.lock and
        # covered by tests/server/test_http_fairness.py)
        return self.manager._server_instances  # pyright: ignore[reportPrivateUsage]

    def _prune(self) -> None:
        """Forget the sessions that have ended otherwise (DELETE, the SDK's own idle rule, a crash)."""
        live = self._open_in_sdk()
        for sid in [sid for sid, s in self.sessions.items() if s.transport.is_terminated or sid not in live]:
            del self.sessions[sid]

    def opened(self, sid: str, client: str) -> None:
        transport = self._open_in_sdk().get(sid)
        if transport is not None and not transport.is_terminated:
            self.sessions[sid] = _Session(client, transport, time.monotonic())

    # -- admission ---------------------------------------------------------------------------------

    async def admit(self, client: str) -> Opening | None:
        """A reserved slot for a session ``client`` asks to open (ending a session to make room when
        all are taken, see :meth:`_victim`), or None when none may be ended."""
        self._prune()
        victim = None
        if len(self.sessions) + self.reserved >= self.limits.max_sessions:
            victim = self._victim(client)
            if victim is None:
                self._warn_refused(client)
                return None
        opening = Opening(self, client)
        self.reserved += 1  # before any await: a concurrent opening sees the slot taken
        if victim is not None:
            sid, session = victim
            del self.sessions[sid]
            held = sum(1 for s in self.sessions.values() if s.client == session.client) + 1
            log(
                logging.INFO,
                "ended a session with a request in flight, of a client holding many more, to admit a new one"
                if session.busy
                else "ended the longest idle session of the client holding the most, to admit a new session",
                client=session.client,
                client_sessions=held,
                idle_seconds=round(time.monotonic() - session.last_request, 1),
                new_client=client,
                max_sessions=self.limits.max_sessions,
            )
            await self._end(session)
        return opening

    def _victim(self, client: str) -> tuple[str, _Session] | None:
        """The session to end for one ``client`` opens: of the clients holding the most sessions,
        the one idle longest among those with no request in flight. When every session has one,
        a session of a client holding at least two more than ``client`` (its request is answered
        with an error: :data:`~docs_mcp_server.http_checks.SESSION_ENDED`), so that a client keeping
        all its sessions busy still cannot keep others out; else None."""
        held = Counter(s.client for s in self.sessions.values())
        candidates = [(sid, s) for sid, s in self.sessions.items() if s.busy == 0]
        if not candidates:
            enough = held[client] + 2
            candidates = [(sid, s) for sid, s in self.sessions.items() if held[s.client] >= enough]
        if not candidates:
            return None
        return min(candidates, key=lambda item: (-held[item[1].client], item[1].last_request))

    def _warn_refused(self, client: str) -> None:
        self._refusals.log(
            logging.WARNING,
            "refusing new sessions: every open session has a request in flight",
            client=client,
            max_sessions=self.limits.max_sessions,
        )

    @staticmethod
    async def _end(session: _Session) -> None:
        """End a session as ``DELETE`` does: its streams end and its id gets 404 from now on."""
        with anyio.CancelScope(shield=True):
            await session.transport.terminate()

    # -- activity ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def request(self, sid: str | None, method: str) -> Iterator[None]:
        """Note a request on session ``sid`` while it is served: a ``GET`` (the event stream) is not
        activity, anything else keeps the session from being idle until it ends."""
        session = self.sessions.get(sid) if sid is not None else None
        if session is None:
            yield
            return
        stream = method == "GET"
        if stream:
            session.streams += 1
        else:
            session.busy += 1
            session.last_request = time.monotonic()
        try:
            yield
        finally:
            if stream:
                session.streams -= 1
            else:
                session.busy -= 1
                session.last_request = time.monotonic()

    # -- the idle rule -----------------------------------------------------------------------------

    def check_seconds(self) -> float:
        """How often sessions are checked for idleness."""
        return min(_MAX_CHECK_SECONDS, self.limits.session_idle_timeout / 4)

    async def end_idle_sessions(self) -> int:
        """End the sessions that have sent no request for the idle timeout; how many were ended."""
        self._prune()
        now = time.monotonic()
        timeout = self.limits.session_idle_timeout
        idle = [
            (sid, s) for sid, s in self.sessions.items() if s.busy == 0 and now - s.last_request >= timeout
        ]
        for sid, session in idle:
            self.sessions.pop(sid, None)
            log(
                logging.INFO,
                "ended a session that sent no request within the idle timeout",
                client=session.client,
                session=sid,
                idle_seconds=round(now - session.last_request, 1),
                event_stream=session.streams > 0,
                session_idle_timeout=timeout,
            )
            await self._end(session)
        return len(idle)

    async def run(self) -> None:
        """Check for idle sessions until cancelled (runs for the server's lifetime)."""
        while True:
            await anyio.sleep(self.check_seconds())
            await self.end_idle_sessions()
