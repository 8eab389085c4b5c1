"""Options several commands share, declared once so that they read and fail the same way."""

from __future__ import annotations

from typing import Any

import typer

from docs_mcp_cli.errors import usage_error

__all__ = ["docs_dir_option", "index_dir_option", "key_value_pairs"]


def docs_dir_option(help: str) -> Any:
    """``--docs-dir``: a folder that must exist (typer reports anything else as a usage error)."""
    return typer.Option("--docs-dir", exists=True, file_okay=False, dir_okay=True, help=help)


def index_dir_option() -> Any:
    return typer.Option("--index-dir", help="Folder written by `docs-mcp build`.")


def key_value_pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` items of a repeatable option, keys and values trimmed; usage error otherwise."""
    pairs: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise usage_error(f"expects KEY=VALUE, got '{item}'", option)
        pairs[key.strip()] = value.strip()
    return pairs
