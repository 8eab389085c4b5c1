"""Options whose value is one of a fixed set, refused with a plain message.

typer checks a ``Literal`` option itself but words the refusal as a validation library does
(``Invalid value for '--scope': Value error, 'x' is not one of ...``). The parser here refuses the
same values under the same usage error, exit status 2, saying ``'x' is not one of 'a', 'b'.``
(docs-mcp's command line has the same parser: the two packages do not depend on each other).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import typer

__all__ = ["one_of"]


def one_of(choices: Sequence[str], *, any_case: bool = False) -> Callable[[str], str]:
    """The parser of an option whose value is one of ``choices`` (``any_case``: written in any case)."""

    def parse(value: str) -> str:
        if any_case and value.lower() in choices:
            return value.lower()
        if value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(map(repr, choices))}.")
        return value

    return parse
