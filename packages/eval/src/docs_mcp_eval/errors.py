"""The harness's error vocabulary: every failure a user can cause, with a message to print as is.

The command line turns any :class:`EvalError` into one clear message on stderr and a non-zero exit code,
never a traceback. Two exceptions of ``agent-eval`` stay inside a run and are not :class:`EvalError`:
:class:`ProviderFailure` (one model request failed; the scenario fails or is skipped, the run goes on)
and :class:`PathOutsideWorkspace` (an agent's tool call named a path outside its workspace; the agent
is told so).
"""

from __future__ import annotations


class EvalError(Exception):
    """Base class: a failure with a message meant for the person running the harness."""

    @property
    def message(self) -> str:
        return str(self)


class CaseFileError(EvalError, ValueError):
    """A case file is missing, is not JSON, or a case in it is malformed."""


class BaselineError(EvalError, ValueError):
    """A ``--baseline`` file cannot be read as an eval result."""


class ServerStartError(EvalError):
    """The MCP server could not be started or did not complete the MCP handshake."""


class ServerProtocolError(EvalError):
    """The server is running but does not behave as a docs server (missing tools, bad results)."""


class BuildCommandError(EvalError):
    """The optional index build command could not be run or failed."""


class ScenarioFileError(EvalError, ValueError):
    """An agent scenario file is missing, is not YAML, or a scenario in it is malformed."""


class AgentProviderError(EvalError):
    """The model provider cannot be used at all: no credentials, key rejected, unknown model."""


class WorkspaceError(EvalError):
    """An agent workspace folder cannot be prepared (or belongs to something else)."""


class ProviderFailure(Exception):
    """One request failed for good; ``infrastructure`` tells whether the scenario counts as skipped."""

    def __init__(self, message: str, *, infrastructure: bool) -> None:
        super().__init__(message)
        self.message = message
        self.infrastructure = infrastructure


class PathOutsideWorkspace(ValueError):
    """A path an agent's tool call named lies outside its workspace (or is read-only)."""


def json_limit(exc: RecursionError | ValueError, *, advice: bool = True) -> str:
    """What a case or baseline file's JSON (or a server's answer) exceeds when :func:`json.loads`
    fails on valid syntax (``advice``: and how an author fixes it), as
    ``docs_mcp_core.errors.json_limit`` says it: the harness needs no docs-mcp package."""
    if isinstance(exc, RecursionError):
        return "it nests arrays or objects too deeply to read" + ("; flatten it" if advice else "")
    return "it holds a number too long to read (over 4,300 digits)" + ("; shorten it" if advice else "")
