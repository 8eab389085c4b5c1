"""The checks of one markdown file, run inside the chunking workers (see :mod:`.validation`).

Beyond what reading, parsing and chunking a file already enforce: a file no manifest governs, an
empty file, a byte-order mark (dropped before parsing), unknown ``mcp_*`` front matter keys, two chunks the original would give one id (see
:mod:`.chunking`), and every HTML comment directive
``<!-- mcp_... -->`` (:func:`directive_findings`; the rules are in :mod:`.validation`'s docstring).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal

from markdown_it import MarkdownIt

from docs_mcp_core.chunking import CHUNK_BY_VALUES, MAX_HEADING_LENGTH, MAX_SLUG_LENGTH, Chunk
from docs_mcp_core.corpus import BOM_WARNING, PreparedFile
from docs_mcp_core.errors import json_limit, quoted
from docs_mcp_core.findings import Finding
from docs_mcp_core.manifest import hint_comments, lone_surrogate
from docs_mcp_core.ordering import sort_key

__all__ = ["HINT_DIRECTIVE", "KNOWN_FRONT_MATTER_DIRECTIVES", "directive_findings", "inspect_prepared_file"]

KNOWN_FRONT_MATTER_DIRECTIVES = ("mcp_chunking_hint", "mcp_metadata", "mcp_strategy")
HINT_DIRECTIVE = "mcp_chunking_hint"
_DIRECTIVE_RE = re.compile(r"<!--\s*(mcp_[A-Za-z0-9_-]*)")


def inspect_prepared_file(prepared: PreparedFile, chunks: list[Chunk]) -> list[Finding]:
    """Checks of one parsed file beyond what preparing and chunking it already enforce."""
    findings: list[Finding] = []
    rel = prepared.relpath
    if prepared.manifest is None:
        chunk_by = prepared.config.strategy.chunk_by
        if chunk_by == "h2" and not _file_sets_strategy(prepared):
            message = "no manifest found; using default strategy 'h2'"
        else:
            message = f"no manifest found; using strategy '{chunk_by}' set in the file"
        findings.append(Finding(rel, None, "warning", message))
    if prepared.bom:
        findings.append(Finding(rel, None, "warning", BOM_WARNING))
    if not prepared.markdown.strip():
        findings.append(Finding(rel, None, "warning", "file is empty; it is indexed as one empty chunk"))
    findings.extend(_front_matter_findings(prepared))
    for c in prepared.id_collisions:
        findings.append(
            Finding(
                rel,
                c.line,
                "warning",
                f"this chunk's id would be '{c.original_id}' like the chunk at line {c.first_line}; "
                f"it is '{c.chunk_id}' instead (rename a heading to choose the ids yourself)",
            )
        )
    if "mcp_" in prepared.markdown:
        findings.extend(directive_findings(rel, prepared.markdown, prepared.front_matter))
    findings.extend(_long_heading_findings(prepared))
    return findings


def _long_heading_findings(prepared: PreparedFile) -> list[Finding]:
    found: list[Finding] = []
    for node in prepared.parsed.nodes:
        if node.kind == "heading" and (size := len(node.heading_text.strip())) > MAX_HEADING_LENGTH:
            message = (
                f"this heading is {size:,} characters long: its chunk's id keeps the first {MAX_SLUG_LENGTH} "
                f"characters of its slug and its name the first {MAX_HEADING_LENGTH:,}; shorten it (a "
                "paragraph directly above a --- or === line is read as a heading: put a blank line between)"
            )
            found.append(Finding(prepared.relpath, node.first_line + 1, "warning", message))
    return found


def _file_sets_strategy(prepared: PreparedFile) -> bool:
    fm = prepared.front_matter or {}
    return fm.get("mcp_strategy") is not None or fm.get("mcp_chunking_hint") is not None


def _front_matter_findings(prepared: PreparedFile) -> list[Finding]:
    fm = prepared.front_matter
    if not fm:
        return []
    findings: list[Finding] = []
    unknown = [k for k in fm if k.startswith("mcp_") and k not in KNOWN_FRONT_MATTER_DIRECTIVES]
    lines = prepared.parsed.front_matter_key_lines(unknown)
    for key in unknown:
        findings.append(
            Finding(
                prepared.relpath,
                lines.get(key),
                "warning",
                f"unknown front matter key '{key}' is ignored{_did_you_mean(key, KNOWN_FRONT_MATTER_DIRECTIVES)}"
                f" (known: {', '.join(KNOWN_FRONT_MATTER_DIRECTIVES)})",
            )
        )
    title = fm.get("title")
    if title is not None and not (isinstance(title, str) and title.strip()):
        findings.append(
            Finding(
                prepared.relpath,
                prepared.parsed.front_matter_key_line("title"),
                "warning",
                f"front matter title must be a non-empty string (got {quoted(title)}); it is "
                "ignored and the file's first heading is its title"
                + (
                    ""
                    if isinstance(title, str | list | dict)
                    else " (quote it in the YAML to keep it as text)"
                ),
            )
        )
    if isinstance(title, str) and (bad := lone_surrogate(title, "front matter title")) is not None:
        line = prepared.parsed.front_matter_key_line("title")
        message = f"{bad}; it is ignored and the file's first heading is its title"
        findings.append(Finding(prepared.relpath, line, "warning", message))
    elif isinstance(title, str) and (size := len(title.strip())) > MAX_HEADING_LENGTH:
        findings.append(
            Finding(
                prepared.relpath,
                prepared.parsed.front_matter_key_line("title"),
                "warning",
                f"front matter title is {size:,} characters long: the index keeps its first "
                f"{MAX_HEADING_LENGTH:,}, as of a heading; shorten it",
            )
        )
    if fm.get("mcp_strategy") is not None and fm.get("mcp_chunking_hint") is not None:
        findings.append(
            Finding(
                prepared.relpath,
                prepared.parsed.front_matter_key_line("mcp_chunking_hint"),
                "warning",
                "front matter sets both mcp_strategy and mcp_chunking_hint; mcp_chunking_hint is ignored",
            )
        )
    return findings


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.disable("inline")
    return md


def _code_lines(markdown: str) -> set[int]:
    """0-based lines covered by fenced or indented code blocks, at any nesting depth."""
    lines: set[int] = set()
    for tok in _block_parser().parse(markdown):
        if tok.type in ("fence", "code_block") and tok.map is not None:
            lines.update(range(tok.map[0], tok.map[1]))
    return lines


class _Cursor:
    """Line number and inline-code state at increasing offsets of a text, in one pass overall."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line = 0  # 0-based line of pos
        self.line_start = 0
        self.ticks = 0  # backticks between line_start and pos

    def advance(self, pos: int) -> None:
        text = self.text
        newlines = text.count("\n", self.pos, pos)
        if newlines:
            self.line += newlines
            self.line_start = text.rfind("\n", self.pos, pos) + 1
            self.ticks = text.count("`", self.line_start, pos)
        else:
            self.ticks += text.count("`", self.pos, pos)
        self.pos = pos

    @property
    def in_inline_code(self) -> bool:
        return self.ticks % 2 == 1


def directive_findings(
    relpath: str, markdown: str, front_matter: Mapping[str, Any] | None = None
) -> list[Finding]:
    """Check every ``<!-- mcp_... -->`` comment of one file (see the module docstring for the rules)."""
    matches = list(_DIRECTIVE_RE.finditer(markdown))
    if not matches:
        return []
    code_lines = _code_lines(markdown)
    hints = hint_comments(markdown)
    first_hint_pos = next(iter(hints), -1)
    first_hint_line = markdown.count("\n", 0, first_hint_pos) + 1 if hints else 0
    fm = front_matter or {}
    fm_strategy_key = next((k for k in ("mcp_strategy", "mcp_chunking_hint") if fm.get(k) is not None), None)
    findings: list[Finding] = []
    cursor = _Cursor(markdown)
    for match in matches:
        pos = match.start()
        cursor.advance(pos)
        line0 = cursor.line
        in_block = line0 in code_lines
        in_code = in_block or cursor.in_inline_code
        where = "code block" if in_block else "inline code"
        name = match.group(1)
        is_first = pos == first_hint_pos

        def report(severity: Literal["error", "warning"], message: str, *, line: int = line0 + 1) -> None:
            findings.append(Finding(relpath, line, severity, message))

        if name != HINT_DIRECTIVE:
            if not in_code:
                report(
                    "error",
                    f"unknown directive '{name}' in an HTML comment{_did_you_mean(name, [HINT_DIRECTIVE])};"
                    f" the only comment directive is {HINT_DIRECTIVE}"
                    + (
                        " (metadata and strategies belong in front matter or .docs-mcp.json)"
                        if name in ("mcp_metadata", "mcp_strategy")
                        else ""
                    ),
                )
            continue
        if in_code and not is_first:
            continue  # an example in code with no effect on chunking
        for severity, message in _hint_findings(
            hints.get(pos),
            is_first=is_first,
            first_hint_line=first_hint_line,
            overridden_by=fm_strategy_key,
            in_code=where if in_code else None,
        ):
            report(severity, message)
    return findings


def _hint_findings(
    hint: str | None, *, is_first: bool, first_hint_line: int, overridden_by: str | None, in_code: str | None
) -> list[tuple[Literal["error", "warning"], str]]:
    """The problems of one chunking hint (``hint`` is its JSON text, ``None`` when it does not have
    the hint's shape): its JSON, its ``chunk_by``, and whether it takes effect (only the first hint
    of a file does, unless front matter sets the strategy: ``overridden_by`` names that key).
    ``in_code`` says where it sits when it is inside code."""
    if hint is None:
        return [
            (
                "error",
                'malformed chunking hint; write it as <!-- mcp_chunking_hint: {"chunk_by": "h3"} --> '
                "(a JSON object without nested braces)",
            )
        ]
    no_effect = "; no chunking hint applies to this file" if is_first else ""
    try:
        data = json.loads(hint)
    except json.JSONDecodeError as exc:
        return [("error", f"chunking hint is not valid JSON: {exc.msg}{no_effect}")]
    except (RecursionError, ValueError) as exc:
        return [("error", f"chunking hint cannot be read: {json_limit(exc)}{no_effect}")]
    chunk_by = data.get("chunk_by") if isinstance(data, dict) else None
    if chunk_by not in CHUNK_BY_VALUES:
        got = json.dumps(chunk_by) if isinstance(data, dict) and "chunk_by" in data else "nothing"
        return [
            (
                "error",
                f"chunking hint chunk_by must be one of: {', '.join(CHUNK_BY_VALUES)} (got {got}){no_effect}",
            )
        ]
    assert isinstance(data, dict)
    found: list[tuple[Literal["error", "warning"], str]] = []
    extra = sorted((str(k) for k in data if k != "chunk_by"), key=sort_key)
    if extra:
        found.append(("warning", f"only chunk_by is read from a chunking hint; ignoring {', '.join(extra)}"))
    if not is_first:
        found.append(
            (
                "warning",
                f"only the first chunking hint of a file applies (line {first_hint_line}); this one is ignored",
            )
        )
    elif overridden_by is not None:
        found.append(
            ("warning", f"front matter {overridden_by} overrides this chunking hint; it has no effect")
        )
    elif in_code is not None:
        found.append(
            (
                "warning",
                f"chunking hint inside {in_code}; it still applies to the whole file (chunk_by {chunk_by})",
            )
        )
    return found
