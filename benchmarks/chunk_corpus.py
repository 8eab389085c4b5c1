"""Chunking throughput on a real corpus: ``uv run python benchmarks/chunk_corpus.py DIR [--workers N]``.

Walks ``DIR`` like ``build`` does, resolves every file's manifest, parses and chunks it on a pool of
worker processes (``docs_mcp_core.corpus_pool``), and prints files, chunks, megabytes of markdown,
throughput and wall time. Wall time covers everything from the directory walk to the last chunk
received in this process (chunks are sent back, as ``build`` needs them).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from docs_mcp_core.corpus_pool import DEFAULT_WORKERS, ChunkedFile, chunk_corpus_parallel
from docs_mcp_core.corpus_walk import walk_corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure how fast a markdown corpus is chunked.")
    parser.add_argument(
        "docs_dir", type=Path, help="folder of markdown files (with .docs-mcp.json manifests)"
    )
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="worker processes (default 2)")
    args = parser.parse_args(argv)
    docs_dir: Path = args.docs_dir
    if not docs_dir.is_dir():
        print(f"error: {docs_dir} is not a directory", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2

    start = time.perf_counter()
    files = walk_corpus(docs_dir).markdown
    chunks = 0
    size = 0
    failed: list[str] = []
    for _rel, result in chunk_corpus_parallel(docs_dir, files, args.workers):
        if isinstance(result, ChunkedFile):
            chunks += len(result.chunks)
            size += result.size_bytes
        else:
            failed.append(result.finding.render())
    wall = time.perf_counter() - start

    megabytes = size / 1_000_000
    print(f"files:    {len(files)}")
    print(f"chunks:   {chunks}")
    print(f"MB:       {megabytes:.2f}")
    print(f"MB/s:     {megabytes / wall if wall else 0.0:.2f}")
    print(f"wall:     {wall:.2f} s ({args.workers} worker{'s' if args.workers != 1 else ''})")
    for line in failed:
        print(f"failed:   {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
