"""Reading the GitHub workflows and checking the commands they run against the real programs.

Workflows cannot run here, so the next best thing: parse each one, split every ``run:`` script into
simple shell commands, and check each ``docs-mcp``/``docs-mcp-server``/``docs-mcp-eval``/``uv``
invocation against the ``--help`` output of the real programs (``uv run <tool>`` included, and
``uv run pytest <args>`` by letting pytest collect exactly those arguments). Used by
``tests/test_workflows.py`` and ``tests/test_docker_recipe.py``.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.support.paths import REPO_ROOT

WORKFLOWS_DIR = REPO_ROOT / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOWS_DIR.glob("*.yml"))
BIN_DIR = Path(sys.executable).parent
REPO_COMMANDS = ("docs-mcp", "docs-mcp-server", "docs-mcp-eval")
HELP_TIMEOUT = 60.0
COLLECT_TIMEOUT = 180.0

_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", ";;"}
_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "time", "exec"}
_SKIPPED_FIRST = {"for", "case", "fi", "done", "esac", "[", "[[", "test", "echo", "export", "set"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GH_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
# `${NAME:+words}` (words only when NAME is set): checked as if NAME were set.
_IF_SET = re.compile(r"\$\{\w+:\+((?:[^{}$]|\$\{\w+\}|\$\w)*)\}")
_FLAG = re.compile(r"(?<![\w-])(--[a-zA-Z0-9][a-zA-Z0-9-]*)")
# An option that takes a value, as help texts show it: `--out <path>` (typer, clap), `--port PORT` and
# `--transport {stdio,http}` (argparse), `--junit-xml=path` (pytest), and a table's value column
# (`--out   DIR   Folder ...`, `--limit  N [1<=x<=50]`, `--filter  KEY=VALUE`: typer with metavars).
# `<bool>` is typer's on/off flag.
_VALUE_OPTION = re.compile(
    r"(--[a-zA-Z0-9][a-zA-Z0-9-]*)(?:(?:\s+|\s*-[a-zA-Z],?\s+)<(?!bool>)[^>]+>"
    r"|[ =](?:[A-Z][A-Z0-9_]*|\{[^}]+\})(?=[\s,\]]|$)|=[a-z][\w-]*"
    r"|[ \t]{2,}(?:-[a-zA-Z][ \t]+)?[A-Z][A-Z0-9_]*(?:=[A-Z][A-Z0-9_]*)?(?=[ \t]{2,}|[ \t]+\[|[ \t]*[│\n]|$))"
)


# --- reading workflows ------------------------------------------------------------------------------


def load_workflow(path: Path) -> dict[Any, Any]:
    document = yaml.safe_load(path.read_text("utf-8"))
    assert isinstance(document, dict), f"{path.name} is not a YAML mapping"
    return document


def triggers(document: dict[Any, Any]) -> Any:
    """The ``on:`` block (YAML 1.1 reads the bare key ``on`` as the boolean true)."""
    return document.get("on", document.get(True))


@dataclass(frozen=True)
class RunStep:
    workflow: str
    job: str
    step: str
    script: str

    @property
    def where(self) -> str:
        return f"{self.workflow}: job {self.job!r}, step {self.step!r}"


def run_steps(path: Path) -> list[RunStep]:
    document = load_workflow(path)
    found: list[RunStep] = []
    for job_id, job in (document.get("jobs") or {}).items():
        for index, step in enumerate(job.get("steps") or []):
            if "run" in step:
                name = step.get("name") or f"#{index + 1}"
                found.append(RunStep(path.name, job_id, name, str(step["run"])))
    return found


# --- reading shell ----------------------------------------------------------------------------------


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script, with leading keywords and assignments removed.

    GitHub expressions (``${{ ... }}``) become the word ``GH_EXPRESSION``; ``${NAME:+words}`` becomes
    its words; quoting is resolved as the shell would; command substitutions stay inside their word
    and are not looked into.
    """
    script = _GH_EXPRESSION.sub("GH_EXPRESSION", script).replace("\\\n", " ")
    script = _IF_SET.sub(lambda m: m.group(1), script)
    commands: list[list[str]] = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in lexer:
            if token in _SEPARATORS:
                commands.append(current)
                current = []
            else:
                current.append(token)
        commands.append(current)
    cleaned: list[list[str]] = []
    for command in commands:
        while command and (command[0] in _KEYWORDS or _ASSIGNMENT.match(command[0])):
            command = command[1:]
        if command and command[0] not in _SKIPPED_FIRST:
            cleaned.append(command)
    return cleaned


# --- asking the programs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Help:
    """What ``<program> [subcommand] --help`` says."""

    ok: bool
    text: str
    flags: frozenset[str] = field(default_factory=frozenset)
    value_flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def usage(self) -> str:
        match = re.search(r"(?is)usage:(.*?)(?:\n\s*\n|$)", self.text)
        return " ".join(match.group(1).split()) if match else ""

    @property
    def has_subcommands(self) -> bool:
        return bool(re.search(r"\bCOMMAND\b|<COMMAND>", self.usage))

    @property
    def positional_slots(self) -> int | None:
        """Positional arguments the usage line allows (None: any number, e.g. ``files...``)."""
        words = self.usage.split()
        index = 0  # skip the program (and subcommand) names
        while index < len(words) and not words[index].startswith(("[", "-", "{", "<")):
            index += 1
        slots, depth = 0, 0
        for word in words[index:]:
            if "..." in word:
                return None
            bare = word.strip("[]")
            if depth == 0 and not bare.startswith("-") and bare not in {"OPTIONS", "options", "COMMAND"}:
                slots += 1  # `base_url`, `{query}`, or an optional `[version]`
            depth += word.count("[") - word.count("]")
        return slots

    @property
    def required_flags(self) -> set[str]:
        """Options typer marks as required (``*  --docs-dir``)."""
        return set(re.findall(r"\*\s+(--[a-z0-9][a-z0-9-]*)", self.text))


def _help_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "PY_COLORS"}}
    env.update({"COLUMNS": "240", "NO_COLOR": "1", "TERM": "dumb", "LANCEDB_LOG": "error"})
    return env


@functools.cache
def get_help(argv: tuple[str, ...]) -> Help:
    done = subprocess.run(
        [*argv, "--help"],
        capture_output=True,
        text=True,
        timeout=HELP_TIMEOUT,
        cwd=REPO_ROOT,
        env=_help_env(),
        stdin=subprocess.DEVNULL,
    )
    text = done.stdout + done.stderr
    return Help(
        ok=done.returncode == 0,
        text=text,
        flags=frozenset(_FLAG.findall(text)),
        value_flags=frozenset(m.group(1) for m in _VALUE_OPTION.finditer(text)),
    )


def _program(name: str) -> str:
    candidate = BIN_DIR / name
    return str(candidate) if candidate.exists() else name


def _is_dynamic(token: str) -> bool:
    return "$" in token or "GH_EXPRESSION" in token or "*" in token or "://" in token


def split_arguments(args: Sequence[str], help_: Help) -> tuple[list[str], list[str]]:
    """Options (names only) and positionals, using the help text to know which options take a value."""
    options: list[str] = []
    positionals: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        if token == "--":
            positionals.extend(args[index + 1 :])
            break
        if token.startswith("--"):
            name = token.split("=", 1)[0]
            options.append(name)
            if "=" not in token and name in help_.value_flags:
                index += 1
        elif token.startswith("-") and len(token) > 1:
            options.append(token)
        else:
            positionals.append(token)
        index += 1
    return options, positionals


class CommandChecker:
    """Checks shell commands against the programs they name; collects problems as text."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.checked: list[list[str]] = []

    def check(self, command: Sequence[str], where: str) -> None:
        if not command:
            return
        if command[0] in REPO_COMMANDS:
            self.checked.append(list(command))
            self._check_cli([_program(command[0])], list(command[1:]), where, command[0])
        elif command[0] == "uv":
            self.checked.append(list(command))
            self._check_uv(list(command[1:]), where)

    def _problem(self, where: str, text: str) -> None:
        self.problems.append(f"{where}: {text}")

    def _check_flags(self, options: Sequence[str], help_: Help, where: str, shown: str) -> None:
        for option in options:
            if option.startswith("--") and option not in help_.flags:
                self._problem(where, f"`{shown}` has no option {option}")

    def _check_cli(self, program: list[str], args: list[str], where: str, shown: str) -> None:
        help_ = get_help(tuple(program))
        if not help_.ok:
            self._problem(where, f"`{shown} --help` fails:\n{help_.text}")
            return
        if help_.has_subcommands:
            options, positionals = split_arguments(args, help_)
            if not positionals:
                if not {"--help", "--version", "-h"} & set(options):
                    self._problem(where, f"`{shown}` needs a subcommand")
                return
            sub = positionals[0]
            sub_help = get_help((*program, sub))
            if not sub_help.ok:
                self._problem(where, f"`{shown}` has no subcommand {sub!r}")
                return
            rest = list(args)
            rest.remove(sub)
            self._check_cli_arguments(rest, sub_help, where, f"{shown} {sub}")
        else:
            self._check_cli_arguments(args, help_, where, shown)

    def _check_cli_arguments(self, args: list[str], help_: Help, where: str, shown: str) -> None:
        options, positionals = split_arguments(args, help_)
        self._check_flags(options, help_, where, shown)
        if {"--help", "-h"} & set(options):
            return
        missing = help_.required_flags - set(options)
        if missing:
            self._problem(where, f"`{shown}` misses required {', '.join(sorted(missing))}")
        slots = help_.positional_slots
        if slots is not None and len(positionals) > slots:
            self._problem(where, f"`{shown}` takes {slots} positional argument(s), got {positionals}")

    def _check_uv(self, args: list[str], where: str) -> None:
        if not args:
            return
        path = ["uv", args[0]]
        rest = args[1:]
        if args[0] in {"pip", "tool", "python", "cache", "self"} and rest:
            path, rest = [*path, rest[0]], rest[1:]
        help_ = get_help(tuple(path))
        shown = " ".join(path)
        if not help_.ok:
            self._problem(where, f"`{shown}` is not a uv command")
            return
        if path[1] != "run":
            options, _ = split_arguments(rest, help_)
            self._check_flags(options, help_, where, shown)
            return
        # uv run [uv options] <target> [target args]
        index = 0
        while index < len(rest) and rest[index].startswith("-"):
            name = rest[index].split("=", 1)[0]
            self._check_flags([name], help_, where, shown)
            index += 2 if ("=" not in rest[index] and name in help_.value_flags) else 1
        if index >= len(rest):
            self._problem(where, "`uv run` without a command")
            return
        self._check_target(rest[index], rest[index + 1 :], where)

    def _check_target(self, target: str, args: list[str], where: str) -> None:
        if target in REPO_COMMANDS:
            self._check_cli([_program(target)], args, where, target)
        elif target.endswith(".py"):
            script = REPO_ROOT / target
            if not script.is_file():
                self._problem(where, f"`uv run {target}`: no such file")
                return
            self._check_cli_arguments(args, get_help((sys.executable, str(script))), where, target)
        elif target == "pytest":
            self._check_pytest(args, where)
        elif target == "python" and args[:1] == ["-m"] and len(args) > 1:
            # python -m MODULE [args]: the module runs in the project environment, with its own flags
            help_ = get_help((str(BIN_DIR / "python"), "-m", args[1]))
            if not help_.ok:
                self._problem(where, f"`python -m {args[1]}` does not run in the project environment")
                return
            options, _ = split_arguments(args[2:], help_)
            self._check_flags(options, help_, where, f"python -m {args[1]}")
        else:
            program = BIN_DIR / target
            if not program.exists():
                self._problem(
                    where, f"`uv run {target}`: {target} is not installed in the project environment"
                )
                return
            help_ = get_help((str(program),))
            options, positionals = split_arguments(args, help_)
            if positionals and not (REPO_ROOT / positionals[0]).exists() and not _is_dynamic(positionals[0]):
                sub_help = get_help((str(program), positionals[0]))  # a subcommand, e.g. `ruff check`
                if not sub_help.ok:
                    self._problem(where, f"`{target} {positionals[0]}` is neither a path nor a subcommand")
                    return
                help_ = Help(True, help_.text + sub_help.text, help_.flags | sub_help.flags)
            self._check_flags(options, help_, where, target)

    def _check_pytest(self, args: list[str], where: str) -> None:
        expanded: list[str] = []
        for arg in args:
            matches = sorted(str(p.relative_to(REPO_ROOT)) for p in REPO_ROOT.glob(arg)) if "*" in arg else []
            if "*" in arg and not matches:
                self._problem(where, f"`pytest {arg}` matches no file")
            expanded.extend(matches or [arg])
        done = _collect(tuple(expanded))
        # Exit 2 with import errors in test modules is those modules' failure, reported by their own run;
        # what matters here is that the paths and options are valid (usage errors exit 4, nothing found 5).
        if done[0] != 0 and not (done[0] == 2 and "during collection" in done[1]):
            self._problem(
                where, f"`pytest {' '.join(args)}` does not collect (exit {done[0]}):\n{done[1][-2000:]}"
            )


@functools.cache
def _collect(args: tuple[str, ...]) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args, "-n", "0"],
        capture_output=True,
        text=True,
        timeout=COLLECT_TIMEOUT,
        cwd=REPO_ROOT,
        env=_help_env(),
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr


def pytest_paths(path: Path) -> set[str]:
    """Paths given to pytest by a workflow, globs expanded."""
    found: set[str] = set()
    for step in run_steps(path):
        for command in shell_commands(step.script):
            if command[:2] == ["uv", "run"] and "pytest" in command:
                for arg in command[command.index("pytest") + 1 :]:
                    if not arg.startswith("-"):
                        found.update(str(p.relative_to(REPO_ROOT)) for p in REPO_ROOT.glob(arg))
    return found
