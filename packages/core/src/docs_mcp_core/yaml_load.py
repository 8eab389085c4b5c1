"""YAML as authors write it in front matter and prompt templates, read without blowing up.

``yaml.safe_load`` follows aliases as references: a few lines of aliases of aliases stand for
billions of values, and every later step (validation, an error message's repr, JSON) walks the
expansion. :func:`load_yaml` refuses such a document, and one nested deeper than the parser can
follow, with :class:`~docs_mcp_core.errors.YamlExpansionError`. A key given twice in one mapping
is a :class:`yaml.YAMLError` at the second: YAML keeps the last value without a word. A character
YAML does not allow is a :class:`yaml.MarkedYAMLError` at its line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from docs_mcp_core.errors import YamlExpansionError, shown

__all__ = ["load_yaml"]


def load_yaml(text: str, *, first_line: int = 1) -> Any:
    """``yaml.safe_load``, refusing documents that only aliases make large.

    An alias (``*name``) stands for a whole earlier value, so a few lines of aliases of aliases
    can expand to billions of values, and every later step (validation, error messages, JSON)
    walks the expansion. A document may expand to about its own size; beyond that, or when a
    value contains itself, or when it is nested deeper than the parser can follow, this raises
    :class:`YamlExpansionError`. Invalid YAML raises :class:`yaml.YAMLError` as usual, and so does
    a key given twice in one mapping (its message names the first's line, ``text`` starting at
    line ``first_line`` of its file).
    """
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:  # the reader checks every character before parsing
        raise _not_allowed(text, exc) from None
    loader.first_line = first_line
    try:
        data = loader.get_single_data()
    except RecursionError:
        raise YamlExpansionError("it is nested too deeply to read; flatten it") from None
    finally:
        loader.dispose()
    problem = _expansion_problem(data, 2 * len(text) + 1000)
    if problem is not None:
        raise YamlExpansionError(problem)
    return data


def _not_allowed(text: str, exc: yaml.reader.ReaderError) -> yaml.MarkedYAMLError:
    """A character YAML does not allow (a control character, U+FFFE ...), as an error marked at its
    line like any other: PyYAML's gives only its offset in the text, so messages named the front
    matter's first line, or no line and ``in "<unicode string>", position 96``."""
    line = text.count("\n", 0, exc.position)
    column = exc.position - text.rfind("\n", 0, exc.position) - 1
    code = exc.character if isinstance(exc.character, int) else ord(exc.character)
    problem = (
        f"the character U+{code:04X} is not allowed in YAML; remove it, or write it as \\u{code:04x} "
        "inside double quotes"
    )
    return yaml.MarkedYAMLError(
        problem=problem, problem_mark=yaml.Mark(exc.name, exc.position, line, column, None, 0)
    )


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with integers read in time linear in their length, or refused at their
    line: YAML 1.1 reads ``1:30`` as 90 (base 60) with a loop over growing integers (400,000 parts
    took 59 s, in time growing with the square of their number), and Python refuses over 4,300
    decimal digits with advice to the programmer (``sys.set_int_max_str_digits``); and a key given
    twice in one mapping refused at the second (js-yaml, the original's reader, refuses it too)."""

    first_line = 1  # of the text in its file, for the line a message names

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        lines: dict[Any, int] = {}  # each key: its line in the text
        for key_node, _ in node.value:  # the mapping's own keys: a merge (<<) may be overridden
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node)  # kept: the mapping's construction reuses it
            try:
                first = lines.get(key)
            except TypeError:  # unhashable: the construction refuses it
                continue
            if first is not None:
                problem = (
                    f"the key '{shown(key)}' is given twice in one mapping (first at line "
                    f"{first + self.first_line}); remove one of them"
                )
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            lines[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


_MERGE = "tag:yaml.org,2002:merge"
_MAX_BASE60_PARTS = 100  # 190:20:30 has 3
_MAX_DIGITS = 4_300  # Python's own limit on converting a decimal string


def _number_problem(value: str, *, digits: bool) -> str | None:
    if (parts := value.count(":") + 1) > _MAX_BASE60_PARTS:  # a base-60 float's overflowed too
        return f"a base-60 number (such as 1:30) of {parts:,} parts is too long to read"
    if digits and (count := sum(c.isdigit() for c in value)) > _MAX_DIGITS:
        return f"a number of {count:,} digits is too long to read (at most {_MAX_DIGITS:,})"
    return None


def _construct_number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float:
    integer = node.tag.endswith(":int")
    problem = _number_problem(str(loader.construct_scalar(node)), digits=integer)
    if problem is not None:
        raise yaml.constructor.ConstructorError(
            None, None, f"{problem}; quote it to write it as text", node.start_mark
        )
    return loader.construct_yaml_int(node) if integer else loader.construct_yaml_float(node)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_number)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_number)


def _expansion_problem(data: Any, limit: int) -> str | None:
    """Why ``data``, counted as a tree, is too large or cyclic; ``None`` when it is fine.

    Shared values are sized once and counted at every reference, so this takes time linear in the
    number of distinct values, not in the size of the expansion.
    """
    if not isinstance(data, (list, dict)):
        return None
    too_many = f"YAML aliases (*name) expand it to more than {limit:,} values; write the values out instead"
    sizes: dict[int, int] = {}
    stack: list[list[Any]] = [[data, _children(data), 1]]
    on_path = {id(data)}
    while stack:
        frame = stack[-1]
        for child in frame[1]:
            if isinstance(child, (list, dict)):
                known = sizes.get(id(child))
                if known is None:
                    if id(child) in on_path:
                        return (
                            "a YAML alias (*name) makes a value contain itself; write the values out instead"
                        )
                    on_path.add(id(child))
                    stack.append([child, _children(child), 1])
                    break
                frame[2] += known
            else:
                frame[2] += 1
            if frame[2] > limit:
                return too_many
        else:
            stack.pop()
            on_path.discard(id(frame[0]))
            sizes[id(frame[0])] = frame[2]
            if stack:
                stack[-1][2] += frame[2]
                if stack[-1][2] > limit:
                    return too_many
    return None


def _children(value: list[Any] | dict[Any, Any]) -> Iterator[Any]:
    if isinstance(value, list):
        yield from value
    else:
        for key, item in value.items():
            yield key
            yield item
