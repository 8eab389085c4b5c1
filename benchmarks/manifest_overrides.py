"""Validating a corpus whose manifest has many overrides:
``uv run python benchmarks/manifest_overrides.py [--files N] [--overrides N]``.

Writes a scratch corpus of ``--files`` pages in 50 folders and a root manifest of ``--overrides``
overrides (a folder pattern each, ``guides/topic<i>/**/*.md``, none of which matches a page, the
worst case of the check for overrides that match nothing), then times ``validate_corpus`` on it
in this process at ``--files`` and four times as many pages, and prints the seconds and their
ratio (about 4 when the time is linear in the pages, about 4 times more when every pattern is
run on every page).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from docs_mcp_core.validation import validate_corpus


def _corpus(root: Path, files: int, overrides: int) -> Path:
    patterns = [
        {"pattern": f"guides/topic{i}/**/*.md", "strategy": {"chunk_by": "h3"}} for i in range(overrides)
    ]
    root.mkdir()
    manifest = {"version": "1", "strategy": {"chunk_by": "h2"}, "overrides": patterns}
    (root / ".docs-mcp.json").write_text(json.dumps(manifest), encoding="utf-8")
    for i in range(files):
        folder = root / "guides" / f"t{i % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"p{i}.md").write_text("# T\n\n## A\n\nx\n", encoding="utf-8")
    return root


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time validate on a manifest of many overrides.")
    parser.add_argument("--files", type=int, default=500, help="pages of the smaller corpus (default 500)")
    parser.add_argument("--overrides", type=int, default=20_000, help="overrides (default 20,000)")
    args = parser.parse_args(argv)
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        for scale in (1, 4):
            root = _corpus(Path(scratch) / f"x{scale}", args.files * scale, args.overrides)
            started = time.perf_counter()
            report = validate_corpus(root, workers=1)
            seconds.append(time.perf_counter() - started)
            print(
                f"{args.files * scale:>7,} files, {args.overrides:,} overrides: {seconds[-1]:.2f} s ({report.warnings:,} warnings)"
            )
    print(f"ratio (4x the files): {seconds[1] / seconds[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
