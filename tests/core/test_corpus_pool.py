"""chunk_corpus_parallel: same results as one process, in input order, problems per file."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

from docs_mcp_core.chunking import Chunk
from docs_mcp_core.corpus import Finding, FindingError, PreparedFile
from docs_mcp_core.corpus_pool import MIN_FILES_FOR_POOL, ChunkedFile, chunk_corpus_parallel
from docs_mcp_core.validation import inspect_prepared_file


def make_corpus(root: Path, n: int) -> list[str]:
    (root / ".docs-mcp.json").write_text(json.dumps({"version": "1", "metadata": {"language": "go"}}))
    (root / "sub").mkdir()
    (root / "sub" / ".docs-mcp.json").write_text(json.dumps({"version": "1", "strategy": {"chunk_by": "h3"}}))
    files: list[str] = []
    for i in range(n):
        rel = f"sub/f{i:03}.md" if i % 3 == 0 else f"f{i:03}.md"
        body = f"# Doc {i}\n\n## Part A\n\ntext {i}\n\n### Deep\n\nmore\n\n## Part B\n\nend\n"
        (root / rel).write_text(body, encoding="utf-8")
        files.append(rel)
    (root / "f007.md").write_bytes(b"# bad\n\n\xff\n")
    (root / "f008.md").write_text("<!-- mcp_bogus -->\n")
    return files


def summarize(results: list[tuple[str, ChunkedFile | FindingError]]) -> list[object]:
    out: list[object] = []
    for rel, result in results:
        if isinstance(result, FindingError):
            out.append((rel, "error", result.finding))
        else:
            out.append(
                (
                    rel,
                    [c.to_dict() for c in result.chunks],
                    result.strategy,
                    result.metadata,
                    result.manifest_path,
                    result.fingerprint,
                    result.size_bytes,
                    result.findings,
                )
            )
    return out


def test_parallel_equals_sequential_and_keeps_order(tmp_path: Path) -> None:
    files = make_corpus(tmp_path, MIN_FILES_FOR_POOL + 10)
    sequential = list(chunk_corpus_parallel(tmp_path, files, workers=1, inspect=inspect_prepared_file))
    parallel = list(
        chunk_corpus_parallel(tmp_path, files, workers=2, inspect=inspect_prepared_file, batch_size=7)
    )
    assert [rel for rel, _r in parallel] == files
    assert summarize(parallel) == summarize(sequential)

    by_rel = dict(parallel)
    bad = by_rel["f007.md"]
    assert isinstance(bad, FindingError) and bad.finding.line == 3
    deep = by_rel["sub/f000.md"]
    assert isinstance(deep, ChunkedFile)
    assert deep.manifest_path == "sub/.docs-mcp.json" and deep.strategy.chunk_by == "h3"
    assert [c.chunk_id for c in deep.chunks] == ["sub/f000.md#_preamble", "sub/f000.md#doc-0/part-a/deep"]
    top = by_rel["f001.md"]
    assert isinstance(top, ChunkedFile) and top.metadata == {"language": "go"} and top.chunk_count == 3
    flagged = by_rel["f008.md"]
    assert isinstance(flagged, ChunkedFile)
    assert [(f.line, f.severity) for f in flagged.findings] == [(1, "error")]


def test_counts_only(tmp_path: Path) -> None:
    files = make_corpus(tmp_path, 4)
    results = dict(chunk_corpus_parallel(tmp_path, files, keep_chunks=False))
    first = results["sub/f000.md"]
    assert isinstance(first, ChunkedFile) and first.chunks == [] and first.chunk_count == 2


def die_in_worker(prepared: PreparedFile, chunks: list[Chunk]) -> list[Finding]:
    """An inspector that kills the worker process on one file (as an out-of-memory kill would)."""
    if prepared.relpath == "f040.md" and multiprocessing.parent_process() is not None:
        os._exit(3)
    return []


def test_a_killed_worker_does_not_hang_and_every_file_is_still_returned(tmp_path: Path) -> None:
    files = make_corpus(tmp_path, MIN_FILES_FOR_POOL + 10)
    results = list(chunk_corpus_parallel(tmp_path, files, workers=2, inspect=die_in_worker, batch_size=8))
    assert [rel for rel, _r in results] == files
    assert isinstance(dict(results)["f040.md"], ChunkedFile)
