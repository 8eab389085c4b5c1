"""``docs-mcp fix``: create a root ``.docs-mcp.json`` from heading statistics and repair drift.

Prints a unified diff per manifest it creates or changes, then writes them, or with ``--dry-run``
writes nothing. Prints ``nothing to fix`` when every manifest already fits its documents. Exit
status: 0 on success, 1 when an existing manifest cannot be parsed or changed while fix ran (it is
then left as it is; the other manifests are written), 2 on usage errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docs_mcp_cli.errors import fail, reporting
from docs_mcp_cli.params import docs_dir_option
from docs_mcp_core.errors import ManifestLeftAloneError
from docs_mcp_core.fix import plan_fixes


def fix(
    docs_dir: Annotated[
        Path, docs_dir_option("Folder of markdown documentation whose manifests to create or repair.")
    ],
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show the changes as a diff without writing any file."),
    ] = False,
) -> None:
    """Bootstrap a manifest from heading statistics and propose overrides for files that outgrew theirs."""
    with reporting("fix"):
        try:
            plan = plan_fixes(docs_dir)
        except OSError as exc:
            raise fail(f"cannot read {exc.filename or docs_dir}: {exc.strerror}") from None
    for note in plan.notes:
        typer.echo(f"note: {note}", err=True)
    if plan.empty:
        typer.echo("nothing to fix")
        return
    for change in plan.changes:
        for reason in change.reasons:
            typer.echo(f"# {reason}")
        typer.echo(change.diff(), nl=False)
    if dry_run:
        typer.echo(f"dry run: {len(plan.changes)} manifest(s) would change; nothing written")
        return
    changed: list[str] = []  # manifests edited meanwhile: left as they are, the others written
    with reporting("fix"):
        try:
            for change in plan.changes:
                try:
                    change.write(docs_dir)
                except ManifestLeftAloneError as exc:
                    changed.append(str(exc))
                    continue
                typer.echo(change.summary)
        except OSError as exc:
            raise fail(f"cannot write {exc.filename}: {exc.strerror}") from None
    for message in changed[:-1]:
        typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    if changed:
        raise fail(changed[-1])
