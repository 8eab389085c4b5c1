"""Every exception of docs-mcp-core, in one place.

Every error a user can cause is a :class:`DocsMcpError` whose message names the file, field or value
at fault and says what to do, so command-line front ends can print it without a traceback. Each
also inherits the builtin category that fits (``ValueError`` for bad input), so ``except
ValueError`` still catches it. :class:`MustacheError` (and :class:`MustacheOutputError`), :class:`InvalidPrompt` and :class:`YamlExpansionError` are raised
inside core and turned into an error naming the file (:class:`PromptTemplateError`,
:class:`MetadataError`, a finding). :func:`write_error` turns a full disk, a read-only disk or a
missing permission into a :class:`BuildError`; :func:`resolve_path` a loop of symbolic links or a name too long into an
:class:`UnusablePathError`; :func:`shown` is what a message shows of a value the
caller sent.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from docs_mcp_core.findings import Finding


class DocsMcpError(Exception):
    """Base class for errors with a user-facing message."""

    @property
    def message(self) -> str:
        return str(self)


class ManifestError(DocsMcpError, ValueError):
    """A ``.docs-mcp.json`` manifest (or front matter) is invalid.

    ``front_matter_key`` names the top-level front matter key at fault, when the error is about one,
    so that the message can point at that key's line.
    """

    def __init__(self, message: str, *, front_matter_key: str | None = None) -> None:
        super().__init__(message)
        self.front_matter_key = front_matter_key


class MetadataError(DocsMcpError, ValueError):
    """A ``metadata.json`` document is invalid or unsupported."""


class PromptTemplateError(DocsMcpError, ValueError):
    """A ``*.template.md`` / ``*.template.yaml`` prompt template is invalid."""


class IndexNotFoundError(DocsMcpError):
    """An index directory is missing, incomplete or unreadable."""


class StoreUnreachableError(IndexNotFoundError):
    """An object store did not answer (or refused) a read of a published index's ``metadata.json``:
    nothing is known about what is published there, only that the store cannot be read now."""


class MetadataNotFoundError(MetadataError, IndexNotFoundError):
    """The index folder or its ``metadata.json`` does not exist."""


class StorageError(DocsMcpError):
    """An index location or storage option is unusable; the message names it and the fix."""


class UnusablePathError(DocsMcpError, OSError):
    """A path no folder can be at: its symbolic links lead round a loop, or a name on it is too long
    (:func:`resolve_path`)."""


class DocsDirError(DocsMcpError):
    """The docs folder does not exist or is not a folder."""


class ManifestLeftAloneError(DocsMcpError):
    """A manifest ``fix`` was about to write is left as it is: it changed (or was created) after
    ``fix`` read the folder, so writing would lose that edit, or it is read-only."""


class FindingError(DocsMcpError):
    """A problem that stops one file (or the corpus) from being processed."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.render())
        self.finding = finding

    def __reduce__(self) -> tuple[type[FindingError], tuple[Finding]]:
        return (type(self), (self.finding,))  # picklable: a chunking worker's resolver carries these


class SearchOptionsError(DocsMcpError, ValueError):
    """A search engine option with a value it does not take (an unknown ranking, retriever, ...)."""


class SearchError(DocsMcpError, ValueError):
    """A search or get_doc request that cannot be answered (bad cursor, unknown chunk id, ...).

    The message is exactly the text returned to MCP clients as an ``isError`` result.
    """


class BuildError(DocsMcpError):
    """A build that cannot proceed (invalid corpus, empty corpus, embedding failure)."""


class OutputNotAnIndexError(BuildError):
    """``--out`` holds files that are not a docs-mcp index; a build refuses to replace them."""


class BuildLockedError(BuildError):
    """Another build holds the lock on the output location (``holder`` describes it)."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


class CorpusInvalidError(BuildError):
    """The corpus has errors; ``findings`` lists them (the build wrote nothing)."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        errors = [f for f in findings if f.severity == "error"]
        super().__init__(
            f"the corpus has {len(errors)} error(s); fix them (run `docs-mcp validate` for the full list) "
            "and build again:\n" + "\n".join(f.render() for f in errors[:50])
        )
        self.findings = list(findings)


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


class YamlExpansionError(ValueError):
    """A YAML text whose aliases expand it far beyond its own size, or make it refer to itself."""


class MustacheError(ValueError):
    """A template that cannot be parsed (unclosed tag or section, mismatched close tag, sections
    nested too deep)."""


class MustacheOutputError(MustacheError):
    """A template whose rendered text would exceed the length its caller allows."""


class InvalidPrompt(ValueError):
    """A prompt-shape rule broken at ``path`` (a tuple of keys and indices into the document)."""

    def __init__(self, path: tuple[str | int, ...], problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem

    @property
    def where(self) -> str:
        return format_path(self.path)


SHOWN_CHARS = 200  # of a value a message repeats back to whoever sent it


def shown(value: object) -> str:
    """``value`` as an error message repeats it: whole up to :data:`SHOWN_CHARS` characters, else
    its start and how long it was (a megabyte-long chunk id is not worth sending back)."""
    text = str(value)
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"


def quoted(value: object) -> str:
    """``value`` as JSON, as a message about a manifest or front matter quotes it; what JSON has no
    form for (a YAML date, time, set or binary string, as a value or as a key) as its text. Quoted
    with ``json.dumps`` alone, a front-matter ``metadata: {updated: 2026-01-01}`` failed its file
    with ``TypeError: Object of type date is not JSON serializable`` and no line or key."""
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return json.dumps(_keys_as_text(value), default=str)
    except (TypeError, ValueError, RecursionError):
        return shown(repr(value))


def _keys_as_text(value: object) -> object:
    if isinstance(value, dict):
        return {
            key if key is None or isinstance(key, (str, int, float, bool)) else str(key): _keys_as_text(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_keys_as_text(item) for item in value]
    return value


def format_path(path: tuple[str | int, ...]) -> str:
    """``("arguments", 0, "name")`` -> ``arguments[0].name``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


_CANNOT_WRITE = {  # error number -> (what happened, what to do)
    errno.ENOSPC: ("the disk is full", "free space on it, or build into a folder on another disk (--out)"),
    errno.EDQUOT: (
        "the disk quota is used up",
        "free space within the quota or have it raised, or build into a folder on another disk (--out)",
    ),
    errno.EFBIG: (
        "a file would exceed the size limit for files",
        "raise the limit (ulimit -f), or build into a folder on a disk that allows larger files (--out)",
    ),
    errno.EROFS: ("the disk is mounted read-only", "build into a folder on a writable disk (--out)"),
    errno.EACCES: (
        "permission denied",
        "build into a folder you may write to (--out), or give this user write access to it",
    ),
    errno.EPERM: (
        "the operation is not permitted",
        "build into a folder you may write to (--out), or give this user write access to it",
    ),
    errno.ENOTDIR: (
        "a folder on its path is a file",
        "choose an --out whose parent folders are folders",
    ),
    errno.ENAMETOOLONG: ("a name on its path is too long", "choose an --out with shorter names"),
}
_NATIVE_OS_ERROR = re.compile(r"\(os error (\d+)\)")  # how Rust libraries (LanceDB) quote errno


def write_error(exc: BaseException, where: str | os.PathLike[str]) -> BuildError | None:
    """A :class:`BuildError` naming the file and what to do when ``exc`` means the build cannot write.

    Covers a full disk, an exhausted quota, the file-size limit, a read-only disk, a missing
    permission and a path through a file, raised by Python (``OSError``) or by native code that
    only quotes the error number in its message. ``where`` is named when the error does not carry
    a file name. ``None`` for any other error.
    """
    code = exc.errno if isinstance(exc, OSError) else None
    if code is None:
        found = _NATIVE_OS_ERROR.search(str(exc))
        code = int(found.group(1)) if found else None
    if code not in _CANNOT_WRITE:
        return None
    target = exc.filename if isinstance(exc, OSError) and exc.filename else where
    what, advice = _CANNOT_WRITE[code]
    return BuildError(f"cannot write {os.fsdecode(target)}: {what} ({os.strerror(code)}); {advice}")


def resolve_path(path: str | os.PathLike[str], what: str, advice: str = "point it at a folder") -> Path:
    """``path`` made absolute with its symbolic links followed; an :class:`UnusablePathError` naming
    it as ``what`` (``--cache-dir``, ``index directory``) when they lead round a loop (with
    ``advice``) or a name on it is too long for the file system. Python 3.11's :meth:`Path.resolve`
    raises ``RuntimeError`` for a loop (later versions return the path as it is), and ``is_dir``
    raises for a name too long: either ended the server's start in a traceback and commands in
    "failed unexpectedly"."""
    shown_path = shown(os.fsdecode(path))
    loop = UnusablePathError(f"{what} '{shown_path}' leads round a loop of symbolic links; {advice}")
    try:
        resolved = Path(path).resolve()
    except RuntimeError:
        raise loop from None
    try:
        resolved.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise loop from None
        if exc.errno == errno.ENAMETOOLONG:
            raise UnusablePathError(
                f"{what} '{shown_path}': a name on its path is too long (File name too long); "
                "choose a path with shorter names"
            ) from None
    return resolved


def json_limit(exc: RecursionError | ValueError, *, advice: bool = True) -> str:
    """What a file's JSON exceeds, when :func:`json.loads` fails on valid syntax (``advice``: and
    how an author fixes it)."""
    if isinstance(exc, RecursionError):
        return "it nests arrays or objects too deeply to read" + ("; flatten it" if advice else "")
    return "it holds a number too long to read (over 4,300 digits)" + ("; shorten it" if advice else "")


class DuplicateKeyError(ValueError):
    """A manifest object that gives one key twice: rewriting it would keep only the last value."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key
