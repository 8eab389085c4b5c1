"""``docs-mcp validate``: check a docs folder before it is indexed (the CI gate).

Prints one line per problem, ``path:line: error|warning: message`` (paths relative to the docs folder),
then ``validated N markdown files, E errors, W warnings``; ``--format json`` prints the same as one
JSON object. Exit status: 0 when there is no error (warnings allowed), 1 when there are errors, 2 on
usage errors (missing or non-directory ``--docs-dir``, unknown ``--format``).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from docs_mcp_cli.errors import reporting
from docs_mcp_cli.params import docs_dir_option, one_of
from docs_mcp_core.validation import validate_corpus


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


def validate(
    docs_dir: Annotated[Path, docs_dir_option("Folder of markdown documentation to check.")],
    format: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            parser=lambda value: OutputFormat(one_of([f.value for f in OutputFormat])(value)),
            metavar="<text|json>",
            help="Output as text lines or as one JSON object.",
        ),
    ] = OutputFormat.text,
    follow_external_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-external-symlinks",
            help="Read files that symbolic links lead to outside --docs-dir (skipped with a warning by default).",
        ),
    ] = False,
) -> None:
    """Check manifests, front matter, hint comments, metadata limits and prompt templates; chunk every file."""
    with reporting("validation"):
        report = validate_corpus(docs_dir, follow_external_symlinks=follow_external_symlinks)
    if format is OutputFormat.json:
        typer.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        for line in report.lines():
            typer.echo(line)
    raise typer.Exit(0 if report.ok else 1)
