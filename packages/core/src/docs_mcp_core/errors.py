"""Exceptions shared by the docs-mcp packages.

Every error a user can cause carries a message that names the file, field or value at fault and says
what to do, so command-line front ends can print it without a traceback.
"""

from __future__ import annotations

import errno
import os
import re


class DocsMcpError(Exception):
    """Base class for errors with a user-facing message."""

    @property
    def message(self) -> str:
        return str(self)


class ManifestError(DocsMcpError, ValueError):
    """A ``.docs-mcp.json`` manifest (or front matter) is invalid."""


class MetadataError(DocsMcpError, ValueError):
    """A ``metadata.json`` document is invalid or unsupported."""


class PromptTemplateError(DocsMcpError, ValueError):
    """A ``*.template.md`` / ``*.template.yaml`` prompt template is invalid."""


class IndexNotFoundError(DocsMcpError):
    """An index directory is missing, incomplete or unreadable."""


class SearchError(DocsMcpError, ValueError):
    """A search or get_doc request that cannot be answered (bad cursor, unknown chunk id, ...).

    The message is exactly the text returned to MCP clients as an ``isError`` result.
    """


class BuildError(DocsMcpError):
    """A build that cannot proceed (invalid corpus, empty corpus, embedding failure)."""


class EmbeddingError(DocsMcpError):
    """An embedding provider failed (bad key, unknown model, dimension mismatch, outage)."""


class OpenAIRequestError(EmbeddingError):
    """An OpenAI API call failed for good (after any retries).

    ``status`` is the HTTP status, or ``None`` for a timeout or connection failure; ``transient`` says
    whether the failure is of a kind that may go away on its own (rate limit, 5xx, network).
    """

    def __init__(self, message: str, *, status: int | None, transient: bool) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient


_NO_ROOM = {  # error number -> (what happened, what to do)
    errno.ENOSPC: ("the disk is full", "free space on it, or build into a folder on another disk (--out)"),
    errno.EDQUOT: (
        "the disk quota is used up",
        "free space within the quota or have it raised, or build into a folder on another disk (--out)",
    ),
    errno.EFBIG: (
        "a file would exceed the size limit for files",
        "raise the limit (ulimit -f), or build into a folder on a disk that allows larger files (--out)",
    ),
}
_NATIVE_OS_ERROR = re.compile(r"\(os error (\d+)\)")  # how Rust libraries (LanceDB) quote errno


def no_room_error(exc: BaseException, where: str | os.PathLike[str]) -> BuildError | None:
    """A :class:`BuildError` naming the file and what to do when ``exc`` means no room to write.

    Covers a full disk, an exhausted quota and the file-size limit, raised by Python (``OSError``)
    or by native code that only quotes the error number in its message. ``where`` is named when
    the error does not carry a file name. ``None`` for any other error.
    """
    code = exc.errno if isinstance(exc, OSError) else None
    if code is None:
        found = _NATIVE_OS_ERROR.search(str(exc))
        code = int(found.group(1)) if found else None
    if code not in _NO_ROOM:
        return None
    target = exc.filename if isinstance(exc, OSError) and exc.filename else where
    what, advice = _NO_ROOM[code]
    return BuildError(f"cannot write {os.fsdecode(target)}: {what} ({os.strerror(code)}); {advice}")
