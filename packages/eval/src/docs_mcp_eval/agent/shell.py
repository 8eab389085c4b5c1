"""Running ``sh -c`` commands with a time limit: scenario setup, script assertions, the agent's commands.

The command runs in its own session (process group) with stdin closed and stderr merged into stdout.
When the time limit passes, the whole group is killed, so a command that started background children
(a dev server, ``sleep`` in a pipeline) cannot keep the harness waiting. Output beyond ``max_output``
characters is cut, keeping the start and the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process

DEFAULT_MAX_OUTPUT = 20_000
_REAP_TIMEOUT_S = 5.0
_GRACE_S = 1.0


@dataclass(frozen=True)
class ShellOutcome:
    exit_code: int | None
    """``None`` when the command was killed at the time limit."""
    output: str
    timed_out: bool
    truncated: bool


async def run_shell(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    max_output: int = DEFAULT_MAX_OUTPUT,
) -> ShellOutcome:
    """Run ``sh -c command`` in ``cwd``; never raises for a failing or hanging command."""
    try:
        process = await anyio.open_process(
            ["sh", "-c", command],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return ShellOutcome(exit_code=127, output=f"cannot run sh: {exc}", timed_out=False, truncated=False)
    collected = bytearray()
    total = 0
    timed_out = False
    drained = anyio.Event()

    async def read_output() -> None:
        nonlocal total
        assert process.stdout is not None
        try:
            async for chunk in process.stdout:
                total += len(chunk)
                room = max_output * 4 - len(collected)
                if room > 0:
                    collected.extend(chunk[:room])
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            drained.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read_output)
        try:
            with anyio.move_on_after(timeout_s) as scope:
                await process.wait()
            timed_out = scope.cancelled_caught
            if not timed_out:
                # background children may still hold the pipe: give them a moment, then stop them
                with anyio.move_on_after(_GRACE_S):
                    await drained.wait()
        finally:
            await _kill_group(process)
            with anyio.move_on_after(_GRACE_S, shield=True):
                await drained.wait()
            group.cancel_scope.cancel()
    text = collected.decode("utf-8", errors="replace")
    truncated = total > len(collected) or len(text) > max_output
    if len(text) > max_output:
        half = max_output // 2
        text = f"{text[:half]}\n[... output cut ...]\n{text[-half:]}"
    elif truncated:
        text += "\n[... output cut ...]"
    return ShellOutcome(
        exit_code=None if timed_out else process.returncode,
        output=text,
        timed_out=timed_out,
        truncated=truncated,
    )


async def _kill_group(process: Process) -> None:
    """Kill the command's whole process group (children included) and reap the shell."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with anyio.move_on_after(_REAP_TIMEOUT_S, shield=True):
        await process.wait()
    with contextlib.suppress(Exception):
        await process.aclose()
