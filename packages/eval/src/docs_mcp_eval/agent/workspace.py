"""The agent's workspace: a folder and four tools to work in it (read, write, list, run a command).

Every path the agent gives is resolved inside the workspace folder: absolute paths elsewhere, ``..``
escapes and symlinks that lead outside are refused (symlinks the scenario itself placed with
``links`` may be followed to their targets). Commands run with ``sh -c`` in the workspace, in their
own process group, with a time limit, and without the provider API keys in their environment. This
confines what a well-meaning agent touches; it is not an operating-system sandbox, so run untrusted
models in a container.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs_mcp_eval.agent.shell import run_shell
from docs_mcp_eval.errors import PathOutsideWorkspace

READ_FILE = "read_file"
WRITE_FILE = "write_file"
LIST_FILES = "list_files"
RUN_COMMAND = "run_command"
WORKSPACE_TOOLS = (READ_FILE, WRITE_FILE, LIST_FILES, RUN_COMMAND)

DEFAULT_COMMAND_TIMEOUT_S = 120.0
MAX_READ_CHARS = 100_000
MAX_LISTED = 500
_SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"})
_HIDDEN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")
_FILE_LANGS: Mapping[str, str] = {
    "ts": "typescript",
    "tsx": "typescript",
    "js": "javascript",
    "jsx": "javascript",
    "py": "python",
    "go": "go",
    "rs": "rust",
    "rb": "ruby",
    "java": "java",
    "json": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "sh": "bash",
    "md": "markdown",
}
MAX_RECORDED_FILE_CHARS = 5_000


@dataclass(frozen=True)
class ToolSpec:
    """A tool as offered to the model: name, description and JSON schema of its arguments."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolOutcome:
    text: str
    is_error: bool = False


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


class Workspace:
    """One scenario's folder and the tools that act on it."""

    def __init__(
        self,
        root: Path,
        *,
        link_targets: Iterable[Path] = (),
        command_timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root.resolve()
        self._allowed = [self.root, *(p.resolve() for p in link_targets)]
        self.command_timeout_s = command_timeout_s
        base = dict(os.environ if env is None else env)
        self.command_env = {k: v for k, v in base.items() if k not in _HIDDEN_ENV}
        self.written: list[str] = []
        """Workspace-relative paths the agent wrote, in first-write order."""

    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                READ_FILE,
                "Read a text file of the workspace (the current directory). Paths are relative to it.",
                _schema({"path": {"type": "string", "description": "File path, e.g. solution.py"}}, ["path"]),
            ),
            ToolSpec(
                WRITE_FILE,
                "Create or overwrite a text file in the workspace with the given content "
                "(missing parent folders are created).",
                _schema(
                    {
                        "path": {"type": "string", "description": "File path relative to the workspace"},
                        "content": {"type": "string", "description": "The complete new file content"},
                    },
                    ["path", "content"],
                ),
            ),
            ToolSpec(
                LIST_FILES,
                "List the files under a folder of the workspace (recursively; dependency folders such as "
                "node_modules are not descended into).",
                _schema({"path": {"type": "string", "description": "Folder, default '.'"}}, []),
            ),
            ToolSpec(
                RUN_COMMAND,
                "Run a shell command (sh -c) in the workspace and return its exit code and combined "
                f"output. Commands are stopped after timeout_seconds (default {self.command_timeout_s:g}).",
                _schema(
                    {
                        "command": {"type": "string", "description": "The shell command line"},
                        "timeout_seconds": {
                            "type": "number",
                            "description": f"Time limit, at most {self.command_timeout_s:g}",
                        },
                    },
                    ["command"],
                ),
            ),
        ]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        try:
            match name:
                case "read_file":
                    return self._read(_text_arg(arguments, "path"))
                case "write_file":
                    return self._write(
                        _text_arg(arguments, "path"), _text_arg(arguments, "content", empty=True)
                    )
                case "list_files":
                    return self._list(str(arguments.get("path") or "."))
                case "run_command":
                    return await self._run(_text_arg(arguments, "command"), arguments.get("timeout_seconds"))
                case _:
                    return ToolOutcome(f"unknown workspace tool {name!r}", is_error=True)
        except (PathOutsideWorkspace, ValueError) as exc:
            return ToolOutcome(str(exc), is_error=True)
        except OSError as exc:
            return ToolOutcome(f"{exc.strerror or exc}", is_error=True)

    def resolve(self, raw: str, *, writing: bool = False) -> Path:
        """The path for ``raw``; raises :class:`PathOutsideWorkspace` for anything outside.

        Linked sources (``links``) can be read through their symlinks but never written.
        """
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        normalized = Path(os.path.normpath(candidate))
        if not normalized.is_relative_to(self.root):
            raise PathOutsideWorkspace(f"{raw!r} is outside the workspace; use a path relative to it")
        real = normalized.resolve()
        if writing and not real.is_relative_to(self.root):
            raise PathOutsideWorkspace(f"{raw!r} is a linked file or leads outside the workspace: read-only")
        if not any(real.is_relative_to(allowed) for allowed in self._allowed):
            raise PathOutsideWorkspace(f"{raw!r} leads outside the workspace (through a symlink)")
        return normalized

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def recorded_files(self) -> list[dict[str, str]]:
        """The files the agent wrote, as they are now (first 5,000 characters each), for the result."""
        files: list[dict[str, str]] = []
        for relative in self.written:
            try:
                content = (self.root / relative).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # written, then deleted or replaced by a folder
            entry = {"path": relative, "content": content[:MAX_RECORDED_FILE_CHARS]}
            extension = Path(relative).suffix.lstrip(".")
            if extension:
                entry["lang"] = _FILE_LANGS.get(extension, extension)
            files.append(entry)
        return files

    def _read(self, raw: str) -> ToolOutcome:
        path = self.resolve(raw)
        if path.is_dir():
            return ToolOutcome(f"{raw!r} is a folder; use list_files", is_error=True)
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > MAX_READ_CHARS:
            text = text[:MAX_READ_CHARS] + f"\n[... cut at {MAX_READ_CHARS} characters ...]"
        return ToolOutcome(text)

    def _write(self, raw: str, content: str) -> ToolOutcome:
        path = self.resolve(raw, writing=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        relative = self.relative(path)
        if relative not in self.written:
            self.written.append(relative)
        return ToolOutcome(f"wrote {len(content.encode('utf-8'))} bytes to {relative}")

    def _list(self, raw: str) -> ToolOutcome:
        folder = self.resolve(raw)
        if not folder.is_dir():
            return ToolOutcome(f"{raw!r} is not a folder", is_error=True)
        entries: list[str] = []
        skipped: set[str] = set()
        for current, dirs, files in os.walk(folder):
            here = Path(current)
            kept = []
            for name in sorted(dirs):
                if name in _SKIPPED_DIRS:
                    skipped.add(name)
                    entries.append(self.relative(here / name) + "/")
                else:
                    kept.append(name)
            dirs[:] = kept
            entries.extend(self.relative(here / name) for name in sorted(files))
            if len(entries) > MAX_LISTED:
                break
        entries.sort()
        lines = entries[:MAX_LISTED] or ["(empty)"]
        if len(entries) > MAX_LISTED:
            lines.append(f"[... more than {MAX_LISTED} entries ...]")
        if skipped:
            lines.append(f"(contents of {', '.join(sorted(skipped))} not listed)")
        return ToolOutcome("\n".join(lines))

    async def _run(self, command: str, timeout: Any) -> ToolOutcome:
        limit = self.command_timeout_s
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            limit = min(float(timeout), self.command_timeout_s)
        outcome = await run_shell(command, cwd=self.root, env=self.command_env, timeout_s=limit)
        if outcome.timed_out:
            return ToolOutcome(f"timed out after {limit:g} s (stopped)\n{outcome.output}", is_error=True)
        return ToolOutcome(
            f"exit code {outcome.exit_code}\n{outcome.output}", is_error=outcome.exit_code != 0
        )


def _text_arg(arguments: Mapping[str, Any], key: str, *, empty: bool = False) -> str:
    value = arguments.get(key)
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ValueError(f"missing or invalid {key!r} argument (expected a string)")
    return value
