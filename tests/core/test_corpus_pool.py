"""chunk_corpus_parallel: same results as one process, in input order, problems per file."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from docs_mcp_core.chunking import Chunk
from docs_mcp_core.corpus import PreparedFile
from docs_mcp_core.corpus_pool import MIN_FILES_FOR_POOL, ChunkedFile, chunk_corpus_parallel
from docs_mcp_core.errors import FindingError
from docs_mcp_core.file_checks import inspect_prepared_file
from docs_mcp_core.findings import Finding


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


@pytest.mark.integration
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


@pytest.mark.integration
def test_a_killed_worker_does_not_hang_and_every_file_is_still_returned(tmp_path: Path) -> None:
    files = make_corpus(tmp_path, MIN_FILES_FOR_POOL + 10)
    results = list(chunk_corpus_parallel(tmp_path, files, workers=2, inspect=die_in_worker, batch_size=8))
    assert [rel for rel, _r in results] == files
    assert isinstance(dict(results)["f040.md"], ChunkedFile)


# ── workers die with their parent ──────────────────────────────────────────────────────────────

_STALLED_RUN = r"""
import os, sys, threading
from pathlib import Path
from docs_mcp_core.corpus_pool import chunk_corpus_parallel

def stall(prepared, chunks):  # a worker busy with a file that never ends
    os.write(1, f"{os.getpid()}\n".encode())  # one write: the two workers' lines never mix
    threading.Event().wait()
    return []

if sys.argv[2] == "without-prctl":  # as on systems other than Linux: only the parent watch
    sys.platform = "elsewhere"
docs = Path(sys.argv[1])
files = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
assert len(files) > 64
for _ in chunk_corpus_parallel(docs, files, workers=2, inspect=stall, batch_size=1):
    pass
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _wait_until_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = {pid for pid in pids if _alive(pid)}
        if not alive:
            return alive
        time.sleep(0.05)  # polling /proc; the deadline bounds the wait
    return {pid for pid in pids if _alive(pid)}


@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.parametrize("mode", ["with-prctl", "without-prctl"])
def test_workers_die_when_their_parent_is_killed(tmp_path: Path, mode: str) -> None:
    make_corpus(tmp_path, MIN_FILES_FOR_POOL + 10)
    parent = subprocess.Popen(
        [sys.executable, "-c", _STALLED_RUN, str(tmp_path), mode], stdout=subprocess.PIPE, text=True
    )
    workers: set[int] = set()
    try:
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(ln) for ln in parent.stdout or []], daemon=True)
        reader.start()
        while len(workers) < 2:
            workers.add(int(lines.get(timeout=60)))  # both workers are busy with a file
        parent.kill()
        parent.wait(timeout=30)
        left = _wait_until_gone(workers, 10)
        assert not left, f"workers {sorted(left)} outlived their parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=30)
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
