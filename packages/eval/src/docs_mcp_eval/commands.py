"""What a run starts and how it drives it: command lines (server, build), the run's settings
(:class:`RunConfig`), and running and timing the optional build command.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from docs_mcp_eval.errors import BuildCommandError, EvalError

Scope = Literal["chunk", "section", "parent"]


SCOPES: tuple[Scope, ...] = get_args(Scope)


def not_found(command: str) -> str:
    """``command not found: 'x'``, with where it is when it is installed beside this Python but not on
    PATH (an environment used without being activated), else a question about PATH."""
    beside = Path(sys.executable).parent / command
    if os.sep not in command and beside.is_file() and os.access(beside, os.X_OK):
        where = f"it is not on PATH, but installed beside this Python: give its path, {str(beside)!r}"
        return f"command not found: {command!r} ({where}, or activate that environment)"
    return f"command not found: {command!r} (is it installed, and on PATH?)"


@dataclass(frozen=True, kw_only=True)
class CommandSpec:
    """A program to run: argv, working directory and extra environment variables.

    The child sees this process's whole environment with ``env`` on top (the MCP SDK alone would pass
    only HOME, LOGNAME, PATH, SHELL, TERM and USER, which loses e.g. ``OPENAI_API_KEY``).
    """

    command: str
    args: Sequence[str] = ()
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(
        cls,
        command_line: str,
        extra_args: Sequence[str] = (),
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandSpec:
        """Split a shell-style command line (``"docs-mcp-server --index-dir idx"``) with :mod:`shlex`."""
        try:
            argv = shlex.split(command_line)
        except ValueError as exc:
            raise EvalError(f"cannot parse command {command_line!r}: {exc}") from None
        if not argv:
            raise EvalError("the command is empty")
        return cls(command=argv[0], args=(*argv[1:], *extra_args), cwd=cwd, env=dict(env or {}))

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    def display(self) -> str:
        return shlex.join(self.argv)

    def child_env(self) -> dict[str, str]:
        return {**os.environ, **self.env}


DEFAULT_WARMUP_QUERIES = 3
"""Untimed searches before measuring, unless told otherwise: the first search of a freshly started
server pays for opening its index (seconds), which would otherwise be reported as the p95."""


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """How to reach the server and how to drive it."""

    server: CommandSpec
    build: CommandSpec | None = None
    tool_prefix: str | None = None
    warmup_queries: int = DEFAULT_WARMUP_QUERIES
    startup_timeout_s: float = 60.0
    """Bound on spawning the server and completing the MCP handshake."""
    request_timeout_s: float = 120.0
    """Bound on each MCP request (tools/list, search_docs, get_doc)."""
    build_timeout_s: float | None = None
    """Bound on the build command; ``None`` waits as long as it takes (embedding builds can be long)."""
    max_tokens: int | None = None
    """``max_tokens`` sent to ``search_docs`` and ``get_doc`` when their schemas declare it."""
    scope: Scope = "chunk"
    """``scope`` sent to ``get_doc`` when its schema declares that value (``chunk``: never sent)."""


def run_build(spec: CommandSpec, timeout_s: float | None = None) -> float:
    """Run the build command to completion and return its wall time in milliseconds.

    Its stdout goes to our stderr so the report on stdout stays clean; its stderr is passed through.
    """
    started = time.perf_counter()
    try:
        completed = subprocess.run(
            spec.argv,
            cwd=spec.cwd,
            env=spec.child_env(),
            stdin=subprocess.DEVNULL,
            stdout=2,
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise BuildCommandError(f"build {not_found(spec.command)}, in {spec.display()}") from None
    except PermissionError:
        raise BuildCommandError(f"build command is not executable: {spec.command!r}") from None
    except subprocess.TimeoutExpired:
        raise BuildCommandError(
            f"build command did not finish within {timeout_s:g} s: {spec.display()}"
        ) from None
    except OSError as exc:
        raise BuildCommandError(f"cannot run build command {spec.display()}: {exc}") from None
    elapsed_ms = (time.perf_counter() - started) * 1000
    if completed.returncode != 0:
        how = (
            f"signal {-completed.returncode}"
            if completed.returncode < 0
            else f"exit code {completed.returncode}"
        )
        raise BuildCommandError(f"Build command failed with {how}: {spec.display()}")
    return elapsed_ms
