"""Structured logging to stderr: JSON lines by default, a compact human format on request.

stdout belongs to the MCP protocol (stdio transport), so every log record, including those of the
MCP SDK and uvicorn, goes to stderr. Records look like LogTape's JSON Lines output used by the
original server: ``{"@timestamp", "level", "logger", "message", "properties"}``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import IO, Any

LOGGER_NAME = "docs_mcp_server"
CATEGORY = "app"
TRACE = 5
LEVELS: dict[str, int] = {
    "trace": TRACE,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "fatal": logging.CRITICAL,
}
_LEVEL_LABELS = {TRACE: "TRACE", logging.WARNING: "WARN", logging.CRITICAL: "FATAL"}

logging.addLevelName(TRACE, "TRACE")

logger = logging.getLogger(LOGGER_NAME)


def parse_level(value: str, source: str = "--log-level") -> int:
    """Map a level name to a :mod:`logging` level; unknown names raise ``ValueError`` naming the valid ones."""
    name = value.strip().lower()
    level = LEVELS.get("warning" if name == "warn" else name)
    if level is None:
        raise ValueError(f"{source} must be one of: {', '.join(LEVELS)} (got {value!r})")
    return level


def _label(levelno: int) -> str:
    return _LEVEL_LABELS.get(levelno) or logging.getLevelName(levelno)


def _properties(record: logging.LogRecord) -> dict[str, Any]:
    props = getattr(record, "properties", None)
    data: dict[str, Any] = dict(props) if isinstance(props, Mapping) else {}
    if record.name != LOGGER_NAME:
        data.setdefault("source", record.name)
    if record.exc_info and record.exc_info[1] is not None:
        data["error"] = repr(record.exc_info[1])
    return data


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        entry = {
            "@timestamp": stamp.replace("+00:00", "Z"),
            "level": _label(record.levelno),
            "logger": CATEGORY,
            "message": record.getMessage(),
            "properties": _properties(record),
        }
        return json.dumps(entry, ensure_ascii=False, default=str)


class PrettyFormatter(logging.Formatter):
    """``12:00:00.123 INFO  app: message key=value`` for people watching a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        clock = datetime.fromtimestamp(record.created).strftime("%H:%M:%S.%f")[:-3]
        props = " ".join(f"{k}={json.dumps(v, default=str)}" for k, v in _properties(record).items())
        line = f"{clock} {_label(record.levelno):<5} {CATEGORY}: {record.getMessage()}"
        return f"{line} {props}" if props else line


def configure_logging(
    level: int = logging.INFO, *, pretty: bool = False, stream: IO[str] | None = None
) -> None:
    """Send this package's records (at ``level``) and third-party warnings to stderr."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(PrettyFormatter() if pretty else JsonLinesFormatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False
    # The SDK and uvicorn log through the root logger; keep their chatter at warning and above
    # unless debugging, and never let them write to stdout.
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(level, logging.WARNING) if level > logging.DEBUG else level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp"):
        third_party = logging.getLogger(name)
        third_party.handlers[:] = []
        third_party.propagate = True
    logging.getLogger("uvicorn.access").disabled = True
    sdk_http = logging.getLogger("mcp.server.streamable_http")
    sdk_http.filters[:] = [f for f in sdk_http.filters if not isinstance(f, _SessionEndedFilter)]
    sdk_http.addFilter(_SessionEndedFilter())


class _SessionEndedFilter(logging.Filter):
    """Drops the SDK's "SSE response error" for a request whose session was closed while it was in
    flight (a ``ClosedResourceError``, alone or grouped): a client that ends its session is no
    server error, and the HTTP layer logs that request as a warning when it finishes its answer."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if record.msg != "SSE response error" or error is None:
            return True
        import anyio

        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        return not isinstance(error, anyio.ClosedResourceError)


def log(level: int, message: str, **properties: Any) -> None:
    """Log ``message`` with structured ``properties`` on the server's logger."""
    if logger.isEnabledFor(level):
        logger.log(level, message, extra={"properties": properties})


class Throttled:
    """A log line for an event that may repeat in a flood (refused sessions or connections), written
    at most once every ``seconds``: one line per event would write thousands a second."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._last = float("-inf")  # time.monotonic() of the last line written

    def due(self) -> bool:
        """Whether a line may be written now (and, if so, counts from now)."""
        now = time.monotonic()
        if now - self._last < self.seconds:
            return False
        self._last = now
        return True

    def log(self, level: int, message: str, **properties: Any) -> None:
        """:func:`log` ``message`` if a line is :meth:`due`."""
        if self.due():
            log(level, message, **properties)
