"""The documentation stays true to the programs it describes.

* Every ``--flag`` written after ``docs-mcp``, ``docs-mcp-server`` or ``docs-mcp-eval`` in a code block
  or inline code span of ``docs/*.md`` and ``README.md`` exists in the ``--help`` of that program's
  (sub)command, asked of the real console scripts.
* ``docs/cli.md`` lists, for every command, exactly the flags its ``--help`` shows, and the default
  of every flag whose ``--help`` shows ``[default: X]``.
* The input schemas ``docs/tools.md`` shows for ``search_docs`` and ``get_doc`` are those the server
  lists for ``examples/docs`` (a description the page shortens with ``...`` is compared up to there).
* Every relative link between documentation files (and into the repository) resolves, anchors
  included.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.integration  # starts processes or listens on ports

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS_DIR = REPO_ROOT / "docs"
DOC_FILES = [*sorted(DOCS_DIR.glob("*.md")), REPO_ROOT / "README.md"]
CLI_REFERENCE = DOCS_DIR / "cli.md"
BIN_DIR = Path(sys.executable).parent
PROGRAMS = ("docs-mcp", "docs-mcp-server", "docs-mcp-eval")
HELP_TIMEOUT = 60.0

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_FLAG = re.compile(r"--[A-Za-z0-9][\w-]*")
# A flag as the first thing on a line of --help output: typer's rich boxes ("│ *  --docs-dir  <dir>"),
# click's and argparse's plain lists ("  -h, --help", "  --index-dir INDEX_DIR").
_HELP_OPTION_LINE = re.compile(r"^[\s│|*]*(?:-[A-Za-z],?\s+)?(--[A-Za-z0-9][\w-]*(?:, --[A-Za-z0-9][\w-]*)*)")
_HELP_COMMAND_LINE = re.compile(r"^[\s│|]*([a-z][a-z0-9-]*)\s{2,}\S")
_SEPARATORS = {"&&", "||", ";", "|", "&", "then", "do"}
_TRIM = "\"'`[](){},;:"
_COMMENT = re.compile(r"(?:^|\s)#[^\"']*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


# --- the programs' own help ------------------------------------------------------------------------


def _executable(program: str) -> str:
    beside = BIN_DIR / program
    if beside.is_file():
        return str(beside)
    found = shutil.which(program)
    assert found is not None, f"{program} is not installed next to {sys.executable} nor on PATH"
    return found


@functools.cache
def help_text(program: str, subcommand: str | None = None) -> str:
    """``<program> [<subcommand>] --help`` of the installed console script, wide and uncoloured."""
    argv = [_executable(program), *([subcommand] if subcommand else []), "--help"]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "LANCEDB_LOG": "error"}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=HELP_TIMEOUT, env=env, check=False)
    assert proc.returncode == 0, f"{shlex.join(argv)} exited {proc.returncode}:\n{proc.stderr}"
    return proc.stdout


def help_flags(program: str, subcommand: str | None = None) -> frozenset[str]:
    """The long options a (sub)command's ``--help`` lists."""
    flags = set()
    for line in help_text(program, subcommand).splitlines():
        match = _HELP_OPTION_LINE.match(line)
        if match:
            flags.update(match.group(1).split(", "))  # aliases: "--version, --about"
    assert "--help" in flags, f"could not read the options of {program} {subcommand or ''} --help"
    return frozenset(flags)


@functools.cache
def subcommands(program: str) -> frozenset[str]:
    """The commands listed under "Commands" in a program's top-level help (none for argparse ones)."""
    lines = help_text(program, None).splitlines()
    start = next((i for i, line in enumerate(lines) if "Commands" in line), None)
    if start is None:
        return frozenset()
    names: set[str] = set()
    for line in lines[start + 1 :]:
        if "╰" in line or not line.strip():
            break
        match = _HELP_COMMAND_LINE.match(line)
        if match:
            names.add(match.group(1))
    return frozenset(names)


@pytest.fixture(scope="module", autouse=True)
def _prefetch_help() -> None:
    """Ask every (sub)command for its help in parallel: the test then reads cached answers."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        list(pool.map(subcommands, PROGRAMS))
        targets = [(program, sub) for program in PROGRAMS for sub in subcommands(program)]
        list(pool.map(lambda target: help_text(*target), targets))


# --- command lines in the documentation --------------------------------------------------------------


@dataclass(frozen=True)
class FlagUse:
    """A flag written after a program name in the docs."""

    file: str
    line: int
    program: str
    subcommand: str | None
    flag: str

    @property
    def command(self) -> str:
        return f"{self.program} {self.subcommand}" if self.subcommand else self.program


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a code block opened with ``fence`` (same character, at least as long)."""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    return indent <= 3 and len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def classify_lines(text: str) -> list[tuple[int, str, bool]]:
    """``(line number, line, inside a fenced code block)``; fence lines count as code."""
    out: list[tuple[int, str, bool]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if fence is None:
            match = _FENCE.match(line)
            if match:
                fence = match.group(1)
            out.append((number, line, fence is not None))
        else:
            if _closes(line, fence):
                fence = None
            out.append((number, line, True))
    return out


def code_snippets(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every logical line in fenced code blocks and every inline code span.

    Backslash continuations are joined, and so are lines of a command whose quoted argument spans
    several lines.
    """
    block: list[tuple[int, str]] = []
    for number, line, in_code in classify_lines(text):
        if in_code:
            block.append((number, line))
            continue
        if block:
            yield from _logical_lines(_fenced_body(block))
            block = []
        for span in _INLINE_CODE.finditer(line):
            yield number, span.group(2)
    if block:
        yield from _logical_lines(_fenced_body(block))


def _fenced_body(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines of consecutive code blocks without their fence lines."""
    body: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in block:
        if fence is None:
            match = _FENCE.match(line)
            fence = match.group(1) if match else None
            continue
        if _closes(line, fence):
            fence = None
            continue
        body.append((number, line))
    return body


def _balanced(text: str) -> bool:
    try:
        shlex.split(_COMMENT.sub("", text))
    except ValueError:
        return False
    return True


_MAX_JOINED_LINES = 12


def _logical_lines(block: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    i = 0
    while i < len(block):
        number, text = block[i]
        i += 1
        while i < len(block) and text.endswith("\\"):
            text = text[:-1] + " " + block[i][1].strip()
            i += 1
        if not _balanced(text) and any(_program_of(word) for word in text.split()):
            # a quoted argument spanning lines: join until the quotes balance (or give up)
            joined, j = text, i
            while j < len(block) and j - i < _MAX_JOINED_LINES and not _balanced(joined):
                joined += "\n" + block[j][1]
                j += 1
            if _balanced(joined):
                text, i = joined, j
        yield number, text


def _tokens(text: str) -> list[str]:
    """Shell-like words of a command line, trailing comments removed; JSON-ish text tokenised loosely."""
    text = _COMMENT.sub("", text)
    try:
        lexer = shlex.shlex(text, posix=True)
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:
        return re.findall(r"[^\s\"',\[\]{}]+", text)


def _program_of(token: str) -> str | None:
    word = token.strip(_TRIM)
    for program in PROGRAMS:
        if word == program or word.endswith(f"bin/{program}"):
            return program
    return None


def flag_uses(file: str, number: int, text: str) -> Iterator[FlagUse]:
    """Every flag given to one of the programs in a command line (nested quoted commands included)."""
    tokens = _tokens(text)
    current: str | None = None
    subcommand: str | None = None
    first = False
    for raw in tokens:
        if " " in raw.strip() and any(_program_of(word) for word in raw.split()):
            yield from flag_uses(file, number, raw)  # e.g. --server-command "docs-mcp-server --index-dir x"
            first = False
            continue
        program = _program_of(raw)
        if program is not None:
            current, subcommand, first = program, None, True
            continue
        if current is None:
            continue
        token = raw.strip(_TRIM)
        if raw in _SEPARATORS:
            current = None
            continue
        if first:
            first = False
            if token in subcommands(current):
                subcommand = token
                continue
            if current == "docs-mcp-eval" and token.startswith("--") and token not in ("--help", "--version"):
                subcommand = "run"  # `docs-mcp-eval --cases ...` means `run`, as in the original
        match = _FLAG.match(token)
        if match and token.startswith("--"):
            yield FlagUse(file, number, current, subcommand, match.group(0))


def documented_flag_uses(path: Path) -> list[FlagUse]:
    name = path.relative_to(REPO_ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    return [use for number, snippet in code_snippets(text) for use in flag_uses(name, number, snippet)]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_documented_flags_exist(path: Path) -> None:
    assert path.is_file(), f"{path} is missing"
    wrong = [
        f"{use.file}:{use.line}: `{use.command}` has no {use.flag} (see `{use.command} --help`)"
        for use in documented_flag_uses(path)
        if use.flag not in help_flags(use.program, use.subcommand)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_docs_show_command_lines_for_every_program() -> None:
    """Guards the parser above: if it stopped finding command lines, the check would pass vacuously."""
    uses = [use for path in DOC_FILES for use in documented_flag_uses(path)]
    commands = {use.command for use in uses}
    expected = {
        "docs-mcp build",
        "docs-mcp search",
        "docs-mcp validate",
        "docs-mcp-server",
        "docs-mcp-eval run",
    }
    assert expected <= commands, f"no documented command line found for {sorted(expected - commands)}"
    assert len(uses) >= 50, f"only {len(uses)} documented flags found"


def test_flag_parser_reads_nested_and_json_command_lines() -> None:
    line = (
        'uv run docs-mcp-eval run --cases c.json --server-command "docs-mcp-server --index-dir ./idx"'
        " --out run.json  # then --baseline"
    )
    uses = {(u.command, u.flag) for u in flag_uses("x.md", 1, line)}
    assert uses == {
        ("docs-mcp-eval run", "--cases"),
        ("docs-mcp-eval run", "--server-command"),
        ("docs-mcp-server", "--index-dir"),
        ("docs-mcp-eval run", "--out"),
    }
    json_line = '"args": ["run", "--directory", "/path/to/docs-mcp", "docs-mcp-server", "--index-dir", "/i"]'
    assert [(u.command, u.flag) for u in flag_uses("x.md", 1, json_line)] == [
        ("docs-mcp-server", "--index-dir")
    ]
    assert [u.flag for u in flag_uses("x.md", 1, "docs-mcp build --nope && ls --all")] == ["--nope"]


# --- the CLI reference --------------------------------------------------------------------------------


def reference_sections() -> dict[str, set[str]]:
    """``{"docs-mcp build": {flags in the first column of its tables}, ...}`` from docs/cli.md."""
    sections: dict[str, set[str]] = {}
    for command, cells in reference_rows():
        sections.setdefault(command, set()).update(_FLAG.findall(cells[0]) if cells else ())
    return sections


def reference_defaults() -> dict[tuple[str, str], str]:
    """``{("docs-mcp build", "--workers"): "2 (1 on a one-core machine)", ...}``: each flag's default
    column in docs/cli.md, backticks removed."""
    defaults: dict[tuple[str, str], str] = {}
    for command, cells in reference_rows():
        flags = _FLAG.findall(cells[0]) if len(cells) > 1 else []
        if flags:
            defaults[(command, flags[0])] = cells[1].replace("`", "").strip()
    return defaults


def reference_rows() -> list[tuple[str, list[str]]]:
    """``(command, cells)`` of every table row of docs/cli.md's command sections (a section with no
    table gives ``(command, [])``).

    A section is a heading whose whole text is a command in backticks; it ends at the next heading.
    """
    rows: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    current: str | None = None
    for _number, line, in_code in classify_lines(CLI_REFERENCE.read_text(encoding="utf-8")):
        if in_code:
            continue
        heading = _HEADING.match(line)
        if heading:
            title = heading.group(2).strip()
            words = title.strip("`").split()
            is_command = title.startswith("`") and title.endswith("`") and bool(words)
            current = " ".join(words) if is_command and words[0] in PROGRAMS else None
            if current is not None:
                assert current not in seen, f"docs/cli.md has two sections for `{current}`"
                seen.add(current)
                rows.append((current, []))
            continue
        if current is not None and line.startswith("|"):
            rows.append((current, [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]))
    return rows


def all_commands() -> list[tuple[str, str | None]]:
    commands: list[tuple[str, str | None]] = [(program, None) for program in PROGRAMS]
    commands += [(program, sub) for program in PROGRAMS for sub in sorted(subcommands(program))]
    return commands


def test_cli_reference_matches_help() -> None:
    sections = reference_sections()
    problems: list[str] = []
    for program, sub in all_commands():
        name = f"{program} {sub}" if sub else program
        if name not in sections:
            problems.append(f"docs/cli.md has no section `{name}`")
            continue
        shown = help_flags(program, sub) - {"--help"}
        listed = sections[name]
        if shown - listed:
            problems.append(
                f"`{name}`: --help shows {sorted(shown - listed)}, docs/cli.md does not list them"
            )
        if listed - shown:
            problems.append(
                f"`{name}`: docs/cli.md lists {sorted(listed - shown)}, --help does not show them"
            )
    unknown = set(sections) - {f"{p} {s}" if s else p for p, s in all_commands()}
    problems += [f"docs/cli.md documents `{name}`, which is not a command" for name in sorted(unknown)]
    assert not problems, "\n".join(problems)


_HELP_DEFAULT = re.compile(r"\[default: ([^\]]+)\]")


def help_defaults(program: str, subcommand: str | None) -> dict[str, str]:
    """The ``[default: X]`` typer's ``--help`` shows per option (help wrapped onto the lines below an
    option's own line counts as its own)."""
    texts: dict[str, str] = {}
    flag: str | None = None
    for line in help_text(program, subcommand).splitlines():
        match = _HELP_OPTION_LINE.match(line)
        if match:
            flag = str(match.group(1)).split(", ")[0]
            texts[flag] = line
        elif flag is not None and line.strip().startswith("│"):
            texts[flag] += " " + line
        else:
            flag = None
    found = {
        name: _HELP_DEFAULT.search(" ".join(text.replace("│", " ").split())) for name, text in texts.items()
    }
    return {name: shown.group(1).strip() for name, shown in found.items() if shown}


def _same_default(documented: str, shown: str) -> bool:
    try:
        return float(documented) == float(shown)  # 600 and 600.0
    except ValueError:
        return documented == shown


def test_cli_reference_defaults_match_help() -> None:
    """Where a typer command's --help shows ``[default: X]``, docs/cli.md's default column says X."""
    documented = reference_defaults()
    problems = [
        f"`{name}` {flag}: docs/cli.md says {documented.get((name, flag))!r}, --help [default: {shown}]"
        for program, sub in all_commands()
        for name in [f"{program} {sub}" if sub else program]
        for flag, shown in help_defaults(program, sub).items()
        if not _same_default(documented.get((name, flag), ""), shown)
    ]
    assert not problems, "\n".join(problems)


_VALUE = r"([A-Z][A-Z_=,]*|\{[^}]+\}|<[^>]+>)(?=\s|$)"  # upper case, or the choices: {a,b} <a|b>
_HELP_VALUES = (
    re.compile(r"^  (--[a-z][a-z-]*) " + _VALUE, re.MULTILINE),  # argparse: "  --auth-token TOKEN"
    re.compile(r"^│[\s*]+(--[a-z][a-z-]*)\s+(?:-[a-z]\s+)?" + _VALUE, re.MULTILINE),  # typer's boxes
)


def test_help_names_each_value_as_the_reference_does() -> None:
    """Every program's ``--help`` names an option's value as docs/cli.md does (``--auth-token TOKEN``,
    ``--index-dir DIR``), not as argparse or typer make it up (``AUTH_TOKEN``, ``<str>``)."""
    reference = CLI_REFERENCE.read_text(encoding="utf-8")
    problems: list[str] = []
    for program, sub in all_commands():
        text = help_text(program, sub)
        shown = [found for pattern in _HELP_VALUES for found in pattern.findall(text)]
        assert shown or sub is None, f"no option values read from {program} {sub} --help"
        for flag, value in shown:
            documented = re.sub(r"[,|]", r"\\|", value.strip("{}<>")) if value[0] in "{<" else value
            if f"`{flag} {documented}`" not in reference:
                name = f"{program} {sub}" if sub else program
                problems.append(
                    f"`{name} --help` shows `{flag} {value}`, docs/cli.md has no `{flag} {documented}`"
                )
    assert not problems, "\n".join(problems)


def test_help_parser_reads_every_program() -> None:
    assert {"--docs-dir", "--out", "--workers"} <= help_flags("docs-mcp", "build")
    assert {"--index-dir", "--transport", "--log-pretty", "--about"} <= help_flags("docs-mcp-server")
    assert "--index-dir" not in help_flags("docs-mcp-eval", "benchmark")  # named in a description only
    assert subcommands("docs-mcp") >= {"validate", "fix", "build", "search", "get"}
    assert subcommands("docs-mcp-eval") >= {"run", "benchmark"}
    assert subcommands("docs-mcp-server") == frozenset()
    assert help_defaults("docs-mcp", "build")["--embedding-provider"] == "headings"  # on a wrapped line
    assert help_defaults("docs-mcp-eval", "agent-eval")["--max-budget-usd"] == "4.0"


# --- the tools' schemas ------------------------------------------------------------------------------

TOOLS_PAGE = DOCS_DIR / "tools.md"
_JSON_FENCE = re.compile(r"^```json\n(.*?)^```", re.MULTILINE | re.DOTALL)


def documented_schema_blocks(heading: str) -> list[str]:
    """The ```json blocks of tools.md's section ``heading`` (up to the next heading of its level)."""
    text = TOOLS_PAGE.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    end = text.find("\n### ", start + 1)
    return _JSON_FENCE.findall(text[start : end if end >= 0 else len(text)])


def _listed_schemas(index_dir: Path) -> dict[str, dict[str, Any]]:
    from mcp import Client

    from docs_mcp_server import create_app

    async def listed() -> dict[str, dict[str, Any]]:
        async with Client(create_app(index_dir).server) as client:
            return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}

    return anyio.run(listed)


def schema_differences(documented: dict[str, Any], listed: dict[str, Any], where: str) -> list[str]:
    """What the page's schema says that the listed one does not: keys, values, property order; a
    description ending in ``...`` only has to start the listed one."""
    problems: list[str] = []
    for key, value in documented.items():
        if key == "properties":
            continue
        if listed.get(key) != value:
            problems.append(f"{where}: {key} is {value!r} on the page, {listed.get(key)!r} listed")
    shown, actual = documented.get("properties", {}), listed.get("properties", {})
    if list(shown) != [name for name in actual if name in shown]:
        problems.append(f"{where}: properties in the order {list(shown)}, listed {list(actual)}")
    problems += [
        f"{where}: property {name!r} is listed, not on the page" for name in actual if name not in shown
    ]
    for name, spec in shown.items():
        if name not in actual:
            problems.append(f"{where}: property {name!r} is not listed")
            continue
        for key, value in spec.items():
            got = actual[name].get(key)
            if key == "description" and isinstance(value, str) and value.endswith("..."):
                ok = isinstance(got, str) and got.startswith(value[:-3].rstrip())
            else:
                ok = got == value
            if not ok:
                problems.append(f"{where}: {name}.{key} is {value!r} on the page, {got!r} listed")
        missing = sorted(set(actual[name]) - set(spec))
        if missing:
            problems.append(f"{where}: {name} is listed with {missing}, which the page leaves out")
    return problems


def test_tools_page_shows_the_input_schemas_the_server_lists(built_index: Path) -> None:
    listed = _listed_schemas(built_index)
    search_blocks = documented_schema_blocks("### `search_docs` input")
    get_doc_blocks = documented_schema_blocks("### `get_doc` input")
    assert len(search_blocks) == 2 and len(get_doc_blocks) == 1, "tools.md's schema blocks moved"
    search = json.loads(search_blocks[0])
    optional = json.loads("{" + search_blocks[1] + "}")  # "max_tokens": {...}, "facets": {...}
    search_listed = dict(listed["search_docs"])
    extra = {name: search_listed["properties"][name] for name in optional}
    search_listed["properties"] = {k: v for k, v in search_listed["properties"].items() if k not in optional}
    problems = schema_differences(search, search_listed, "search_docs")
    problems += schema_differences(
        {"properties": optional}, {"properties": extra}, "search_docs (optional arguments)"
    )
    problems += schema_differences(json.loads(get_doc_blocks[0]), listed["get_doc"], "get_doc")
    assert list(listed["search_docs"]["properties"])[-2:] == list(optional), (
        "the optional arguments come last"
    )
    assert not problems, "\n".join(problems)


# --- links ----------------------------------------------------------------------------------------------


def _strip_code(text: str) -> str:
    return "\n".join(
        "" if in_code else _INLINE_CODE.sub("", line) for _n, line, in_code in classify_lines(text)
    )


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: inline markup dropped, lower case, punctuation removed, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _number, line, in_code in classify_lines(path.read_text(encoding="utf-8")):
        heading = None if in_code else _HEADING.match(line)
        if heading:
            base = github_anchor(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def test_github_anchor() -> None:
    assert github_anchor("`search_docs` input") == "search_docs-input"
    assert github_anchor("`metadata.json` and the LanceDB table") == "metadatajson-and-the-lancedb-table"
    assert github_anchor("Builds, caches and safety") == "builds-caches-and-safety"


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    broken: list[str] = []
    for target in _LINK.findall(_strip_code(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # http:, https:, mailto:
        file_part, _, fragment = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: {resolved} does not exist")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading with anchor #{fragment} in {resolved.name}")
    assert not broken, f"{path.relative_to(REPO_ROOT)}:\n" + "\n".join(broken)
