"""What the stdio wire reads of a line without parsing it all, and whether a write can block."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import select
import stat
import struct
import termios
from typing import Any

_F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", None)  # Linux only


# possessive: a backtracking group kept a frame per character of the id (a 4 MB id: +557 MB)
_RESPONSE_PREFIX = re.compile(r'^\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]++|\\.)*+"),"(?:result|error)"')


def id_key(value: Any) -> tuple[str, Any]:
    """A request id as the MCP SDK tells requests apart: a string that ``int()`` reads (``"7"``) is
    that integer, as the SDK's dispatcher keys its requests in flight and finds the one a
    ``notifications/cancelled`` names (``mcp.shared.dispatcher.coerce_request_id``, the same call).
    Keyed by type alone, a request ``7`` cancelled as ``"7"`` was cancelled by the SDK and never
    answered, yet stayed in flight here for good: its id was refused ever after."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):  # not an integer, or one of over 4,300 digits
            value = int(value)
    return (type(value).__name__, value)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def early_message(raw: bytes) -> Any:
    """``raw`` parsed for an early answer, or ``None`` when the SDK must see it: a line that is not
    JSON is answered as malformed once the SDK runs, and so is one with an unpaired surrogate escape
    (``\\ud800``), which Python's parser reads but the SDK's refuses. Answered early, such a string
    could not be written out as UTF-8, and the failed write ended the session. The line is read as
    UTF-8, as the SDK reads it: :func:`json.loads` of bytes skips a byte-order mark (and reads
    UTF-16), so an ``initialize`` after a mark was answered early and then refused by the SDK."""
    if _SURROGATE_ESCAPE.search(raw):
        return None  # a paired one (an escaped emoji) is answered by the SDK, as well
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        return None


def response_id(text: str) -> tuple[str, Any] | None:
    """The id of a JSON-RPC response (``None`` for requests and notifications), read cheaply."""
    match = _RESPONSE_PREFIX.match(text)
    if match is not None:
        return id_key(json.loads(match.group(1)))
    if '"id"' not in text:
        return None
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(message, dict) and "id" in message and ("result" in message or "error" in message):
        return id_key(message["id"])
    return None


def takes_at_once(fd: int, size: int) -> bool:
    """Whether writing ``size`` bytes to ``fd`` cannot block: a file; an empty pipe that holds them;
    any pipe or socket with room, for no more than a pipe writes at once."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return True
    if stat.S_ISFIFO(mode):
        with contextlib.suppress(OSError):
            unread = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
            if unread == 0 and _F_GETPIPE_SZ is not None and size <= fcntl.fcntl(fd, _F_GETPIPE_SZ):
                return True
    if size > select.PIPE_BUF:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return bool(poller.poll(0))
