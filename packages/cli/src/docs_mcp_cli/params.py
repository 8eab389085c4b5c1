"""Options several commands share, declared once so that they read and fail the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

from docs_mcp_cli.errors import usage_error

__all__ = [
    "STORAGE_OPTION_HELP",
    "docs_dir_option",
    "index_dir_option",
    "key_value_pairs",
    "location",
    "one_of",
    "storage_option_option",
]

STORAGE_OPTION_HELP = (
    "Object-store setting for an s3:// location (endpoint, region, access_key_id, secret_access_key, "
    "session_token, allow_http); repeatable. Default: the AWS_* environment variables."
)


def one_of(choices: Sequence[str]) -> Callable[[str], str]:
    """The parser of an option whose value is one of ``choices``: typer's own check of a
    ``Literal`` words its message as a validation library does (``Value error, 'x' is not one
    of ...``); this one says ``'x' is not one of 'a', 'b'.`` under the same usage error."""

    def parse(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(map(repr, choices))}.")
        return value

    return parse


def docs_dir_option(help: str) -> Any:
    """``--docs-dir``: a folder that must exist (typer reports anything else as a usage error)."""
    return typer.Option("--docs-dir", metavar="DIR", exists=True, file_okay=False, dir_okay=True, help=help)


def index_dir_option() -> Any:
    return typer.Option(
        "--index-dir",
        metavar="DIR",
        help="Folder written by `docs-mcp build`, or an object-store URI (s3://bucket/prefix).",
    )


def storage_option_option() -> Any:
    """``--storage-option KEY=VALUE`` (repeatable), for an ``s3://`` ``--out`` or ``--index-dir``."""
    return typer.Option("--storage-option", metavar="KEY=VALUE", help=STORAGE_OPTION_HELP)


def location(
    value: str, storage_option: list[str] | None, flag: str
) -> tuple[Path | str, dict[str, str] | None]:
    """``flag``'s value and the ``--storage-option`` items as an index location; usage error otherwise."""
    from docs_mcp_core.errors import StorageError
    from docs_mcp_core.index.location import parse_location

    try:
        return parse_location(value, storage_option)
    except StorageError as exc:
        raise usage_error(str(exc), "--storage-option" if "--storage-option" in str(exc) else flag) from None


def key_value_pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` items of a repeatable option, keys and values trimmed; usage error otherwise,
    and for a key given twice (its last value would be used alone, without a word)."""
    pairs: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise usage_error(f"expects KEY=VALUE, got '{item}'", option)
        if pairs.get(key, value) != value:
            raise usage_error(
                f"'{key}' is given twice ({pairs[key]}, then {value}); a search filters each key on one "
                "value: give it once",
                option,
            )
        pairs[key] = value
    return pairs
