"""Generate ``schemas/docs-mcp.schema.json``, the JSON schema of ``.docs-mcp.json`` manifests.

Editors use the schema to complete and check manifests (``"$schema": "<path or URL of the file>"``).
It is generated from the pydantic model in :mod:`docs_mcp_core.manifest`, so it cannot drift from what
the parser accepts. Regenerate it after changing the model, from the repository root::

    uv run python -m docs_mcp_core.schema_gen            # writes schemas/docs-mcp.schema.json
    uv run python -m docs_mcp_core.schema_gen --check    # exit 1 when the committed file is stale

``tests/test_schema.py`` fails when the committed file differs from the generated one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from docs_mcp_core.manifest import manifest_json_schema

SCHEMA_RELPATH = Path("schemas") / "docs-mcp.schema.json"


def render_schema() -> str:
    """The schema file's exact content: 2-space JSON and a final newline."""
    return json.dumps(manifest_json_schema(), indent=2, ensure_ascii=False) + "\n"


def default_schema_path() -> Path:
    """``schemas/docs-mcp.schema.json`` of the source checkout this module lives in, else of the cwd."""
    root = Path(__file__).resolve().parents[4]
    if (root / "packages" / "core").is_dir() and (root / "pyproject.toml").is_file():
        return root / SCHEMA_RELPATH
    return Path.cwd() / SCHEMA_RELPATH


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs_mcp_core.schema_gen",
        description="Write (or check) the JSON schema of .docs-mcp.json manifests.",
    )
    parser.add_argument(
        "--output", type=Path, default=None, help="schema file (default: schemas/docs-mcp.schema.json)"
    )
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the file is missing or stale"
    )
    args = parser.parse_args(argv)
    path: Path = args.output or default_schema_path()
    expected = render_schema()
    if args.check:
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != expected:
            print(
                f"{path} is {'missing' if current is None else 'out of date'}; "
                "run: uv run python -m docs_mcp_core.schema_gen",
                file=sys.stderr,
            )
            return 1
        print(f"{path} is up to date")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(expected, encoding="utf-8", newline="\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
