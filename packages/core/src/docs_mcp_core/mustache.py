"""A small Mustache renderer for prompt templates, with HTML escaping switched off.

Prompt templates are plain text sent to a language model, so ``{{x}}``, ``{{{x}}}`` and ``{{& x}}``
all insert the value verbatim. Supported: variables with dotted names (``{{user.name}}``) and the
implicit iterator ``{{.}}``; sections ``{{#x}}...{{/x}}`` that render once for a truthy value, once
per item for a list, and with a mapping pushed onto the lookup stack; inverted sections
``{{^x}}...{{/x}}``; comments ``{{! ... }}``; delimiter changes ``{{=<% %>=}}``; partials
``{{> name}}`` render as nothing (templates have no partials). Sections nest at most 100 deep. Tags
alone on their line (sections, comments, partials, delimiter changes) remove that whole line, as the
Mustache spec says. Missing names render as an empty string; truthiness follows JavaScript, like the
original mustache.js.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from docs_mcp_core.errors import MustacheError, MustacheOutputError

_STANDALONE_KINDS = frozenset("#^/!>=")
MAX_SECTION_DEPTH = 100  # sections inside sections; rendering recurses once per level


@dataclass
class _Tag:
    kind: str  # "name" (variable), "&" (unescaped variable), or one of "#^/!>="
    name: str
    start: int
    end: int
    line: int


@dataclass
class _Section:
    name: str
    inverted: bool
    children: list[_Node] = field(default_factory=list)


_Node = str | _Tag | _Section


def _scan(template: str) -> list[_Tag]:
    """Find every tag, following delimiter changes. Lines are counted as the scan goes (counting
    from the start for each tag took a template of 200,000 tags on one line 30 s)."""
    tags: list[_Tag] = []
    otag, ctag = "{{", "}}"
    pos = 0
    line, counted = 1, 0  # the line number at offset ``counted``
    while (start := template.find(otag, pos)) >= 0:
        i = start + len(otag)
        kind, close = "name", ctag
        if template.startswith("{", i):
            kind, close, i = "&", "}" + ctag, i + 1
        elif template[i : i + 1] in ("#", "^", "/", "!", ">", "&", "="):
            kind, i = template[i], i + 1
            if kind == "=":
                close = "=" + ctag
        end = template.find(close, i)
        line, counted = line + template.count("\n", counted, start), start
        if end < 0:
            raise MustacheError(f"Unclosed tag '{otag}' at line {line}")
        name = template[i:end].strip()
        if kind == "=":
            parts = name.split()
            if len(parts) != 2:
                raise MustacheError(f"Invalid delimiter change '{name}' at line {line}")
            otag, ctag = parts
        tags.append(_Tag(kind, name, start, end + len(close), line))
        pos = end + len(close)
    return tags


def _widen_standalone(template: str, tag: _Tag) -> None:
    """Stretch a standalone tag (only spaces and tabs around it on its line) over its whole line so
    rendering drops the line. Only the blanks next to the tag are read: slicing the rest of its line
    for each tag took a template of 200,000 section tags on one line 90 s."""
    line_start = tag.start
    while line_start > 0 and template[line_start - 1] in " \t":
        line_start -= 1
    if line_start > 0 and template[line_start - 1] != "\n":
        return
    line_end = tag.end
    while line_end < len(template) and template[line_end] in " \t\r":
        line_end += 1
    if line_end < len(template):
        if template[line_end] != "\n":
            return
        line_end += 1
    tag.start, tag.end = line_start, line_end


def parse(template: str) -> list[_Node]:
    """Parse ``template`` into a tree; raises :class:`MustacheError` for malformed templates."""
    tags = _scan(template)
    for tag in tags:
        if tag.kind in _STANDALONE_KINDS:
            _widen_standalone(template, tag)
    root: list[_Node] = []
    stack: list[tuple[_Section, _Tag]] = []
    pos = 0
    for tag in tags:
        target = stack[-1][0].children if stack else root
        if tag.start > pos:
            target.append(template[pos : tag.start])
        pos = tag.end
        if tag.kind in ("#", "^"):
            if len(stack) == MAX_SECTION_DEPTH:  # 3,000 levels failed each rendering: RecursionError
                raise MustacheError(
                    f"Section '{tag.name}' at line {tag.line} is nested {MAX_SECTION_DEPTH + 1} sections deep; "
                    f"at most {MAX_SECTION_DEPTH} are allowed"
                )
            section = _Section(tag.name, inverted=tag.kind == "^")
            target.append(section)
            stack.append((section, tag))
        elif tag.kind == "/":
            if not stack:
                raise MustacheError(f"Unopened section '{tag.name}' at line {tag.line}")
            opened, opened_tag = stack.pop()
            if opened.name != tag.name:
                raise MustacheError(
                    f"Unclosed section '{opened.name}' (line {opened_tag.line}): "
                    f"found '{{{{/{tag.name}}}}}' at line {tag.line}"
                )
        elif tag.kind in ("name", "&"):
            target.append(tag)
    if stack:
        opened, opened_tag = stack[-1]
        raise MustacheError(f"Unclosed section '{opened.name}' at line {opened_tag.line}")
    if pos < len(template):
        root.append(template[pos:])
    return root


_MISSING = object()


def _child(value: Any, part: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(part, _MISSING)  # pyright: ignore[reportUnknownMemberType]
    if isinstance(value, Sequence) and not isinstance(value, str) and part.isdigit():
        index = int(part)
        return value[index] if index < len(value) else _MISSING
    return _MISSING


def _lookup(stack: list[Any], name: str) -> Any:
    if name == ".":
        return stack[-1]
    first, *rest = name.split(".")
    for context in reversed(stack):
        value = _child(context, first)
        if value is not _MISSING:
            for part in rest:
                value = _child(value, part)
                if value is _MISSING:
                    return None
            return value
    return None


def _truthy(value: Any) -> bool:
    """JavaScript truthiness: ``None``, ``False``, ``0`` and ``""`` are false; containers are true."""
    if value is None or value is False or value == "":
        return False
    return not (isinstance(value, int | float) and value == 0)


def _to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | tuple):
        return ",".join(_to_text(item) for item in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


class _Output:
    """The rendered pieces, and how many characters may still be added."""

    __slots__ = ("limit", "parts", "room")

    def __init__(self, limit: int | None) -> None:
        self.parts: list[str] = []
        self.limit = limit
        self.room = limit

    def append(self, text: str) -> None:
        if self.room is not None and self.limit is not None:
            self.room -= len(text)
            if self.room < 0:
                raise MustacheOutputError(f"the rendered text would be longer than {self.limit:,} characters")
        self.parts.append(text)


def _render(nodes: list[_Node], stack: list[Any], out: _Output) -> None:
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, _Tag):
            out.append(_to_text(_lookup(stack, node.name)))
        else:
            value = _lookup(stack, node.name)
            is_list = isinstance(value, list | tuple)
            if node.inverted:
                if not _truthy(value) or (is_list and not value):
                    _render(node.children, stack, out)
            elif is_list:
                for item in value:  # pyright: ignore[reportUnknownVariableType]
                    _render(node.children, [*stack, item], out)
            elif _truthy(value):
                _render(node.children, stack if value is True else [*stack, value], out)


def render(template: str, view: Mapping[str, Any], *, limit: int | None = None) -> str:
    """Render ``template`` against ``view`` without escaping; missing names become ``""``. With
    ``limit``, a text longer than that many characters raises :class:`MustacheOutputError` before
    it is made."""
    out = _Output(limit)
    _render(parse(template), [view], out)
    return "".join(out.parts)
