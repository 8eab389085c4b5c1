"""Chunking a whole corpus on several cores.

Parsing markdown is pure Python and dominates the cost of ``validate`` and ``build`` on large
corpora, so files are handed to a pool of worker processes in small batches. Every worker starts
with a copy of the caller's :class:`~docs_mcp_core.corpus.ManifestResolver` (the manifests the
caller has read are not read again) and sends back plain, picklable results. Results come back in the order of the input list, so the output of a
parallel run is identical to a sequential one.

A problem with one file never stops the run: it comes back as a :class:`FindingError` for that file
(unreadable file, invalid UTF-8, bad front matter, broken manifest, or any unexpected failure of the
chunker), and the caller decides whether that is fatal.

Workers die with the process that started them, however it ends (even ``kill -9``): on Linux the
kernel sends them SIGKILL when it exits (``PR_SET_PDEATHSIG``), and everywhere a thread in each
worker exits it as soon as the pipe from its parent closes. Workers ignore SIGINT: on Ctrl-C the
parent stops the run. When the caller stops early or an exception interrupts the run, the parent
does not wait for the batches in progress.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

from docs_mcp_core.chunking import Chunk, Strategy
from docs_mcp_core.corpus import ManifestResolver, PreparedFile, prepare_file
from docs_mcp_core.errors import FindingError
from docs_mcp_core.findings import Finding

DEFAULT_WORKERS = 2
# Below this many files a pool costs more (process start-up, imports) than it saves.
MIN_FILES_FOR_POOL = 64

Inspector = Callable[[PreparedFile, list[Chunk]], list[Finding]]
"""Extra per-file checks run inside the worker, after chunking. Must be a module-level function."""


@dataclass(slots=True)
class ChunkedFile:
    """What chunking one file produced (everything ``validate`` and ``build`` need, picklable)."""

    relpath: str
    chunks: list[Chunk]  # empty when the caller asked not to keep them
    chunk_count: int
    strategy: Strategy
    metadata: dict[str, str]
    title: str | None
    fingerprint: str  # chunk-cache key (strategy, metadata, source)
    manifest_path: str | None  # the governing .docs-mcp.json, relative to the docs dir
    size_bytes: int  # UTF-8 size of the source
    findings: list[Finding] = field(default_factory=list)  # from the inspector, if any


_Outcome = tuple[str, "ChunkedFile | Finding"]

# per-worker state, set by _init_worker
_worker_docs_dir: Path | None = None
_worker_resolver: ManifestResolver | None = None


def chunk_one(
    docs_dir: Path,
    relpath: str,
    resolver: ManifestResolver,
    *,
    keep_chunks: bool = True,
    inspect: Inspector | None = None,
) -> ChunkedFile | Finding:
    """Prepare and chunk one file; any problem is returned as a :class:`Finding` (never raised)."""
    try:
        prepared = prepare_file(docs_dir, relpath, resolver)
        chunks = prepared.chunks()
        findings = inspect(prepared, chunks) if inspect is not None else []
        return ChunkedFile(
            relpath=relpath,
            chunks=chunks if keep_chunks else [],
            chunk_count=len(chunks),
            strategy=prepared.config.strategy,
            metadata=dict(prepared.config.metadata),
            title=prepared.config.title,
            fingerprint=prepared.fingerprint(),
            manifest_path=prepared.manifest.path if prepared.manifest is not None else None,
            size_bytes=len(prepared.markdown.encode("utf-8")),
            findings=findings,
        )
    except FindingError as exc:
        return exc.finding
    except Exception as exc:  # noqa: BLE001 - a chunker bug must not abort a whole corpus run
        return Finding(relpath, None, "error", f"cannot chunk this file: {type(exc).__name__}: {exc}")


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _init_worker(docs_dir: str, parent_pid: int, resolver: ManifestResolver | None) -> None:
    global _worker_docs_dir, _worker_resolver
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_docs_dir = Path(docs_dir)
    _worker_resolver = resolver if resolver is not None else ManifestResolver(_worker_docs_dir)


def die_with_parent(parent_pid: int) -> None:
    """Make this worker process exit as soon as its parent (``parent_pid``) is gone.

    Linux sends the signal when the parent thread that started the worker ends; pools are started
    and used from one thread, so that is when the run is over anyway.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watcher below suffices
            pass
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)
    parent = multiprocessing.parent_process()
    if parent is not None and parent.sentinel is not None:
        sentinel = parent.sentinel

        def watch() -> None:
            multiprocessing.connection.wait([sentinel])  # returns when the parent's end closes
            os._exit(1)

        threading.Thread(target=watch, name="docs-mcp-parent-watch", daemon=True).start()


def _run_batch(args: tuple[list[str], bool, Inspector | None]) -> list[_Outcome]:
    relpaths, keep_chunks, inspect = args
    assert _worker_docs_dir is not None and _worker_resolver is not None
    return [
        (rel, chunk_one(_worker_docs_dir, rel, _worker_resolver, keep_chunks=keep_chunks, inspect=inspect))
        for rel in relpaths
    ]


def _as_result(outcome: ChunkedFile | Finding) -> ChunkedFile | FindingError:
    return FindingError(outcome) if isinstance(outcome, Finding) else outcome


def default_start_method() -> str:
    """``fork`` where available (no re-import of ``__main__``, no interpreter start-up), else ``spawn``.

    Workers only parse and chunk markdown (pure Python), so forking a process that also runs native
    threads is safe for what the children do.
    """
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


def chunk_corpus_parallel(
    docs_dir: Path,
    files: Sequence[str],
    workers: int = DEFAULT_WORKERS,
    *,
    keep_chunks: bool = True,
    inspect: Inspector | None = None,
    batch_size: int | None = None,
    start_method: str | None = None,
    resolver: ManifestResolver | None = None,
) -> Iterator[tuple[str, ChunkedFile | FindingError]]:
    """Chunk ``files`` (corpus-relative POSIX paths) and yield ``(relpath, result)`` in input order.

    ``result`` is a :class:`ChunkedFile`, or a :class:`FindingError` describing why the file could
    not be chunked. With ``workers <= 1`` or fewer than :data:`MIN_FILES_FOR_POOL` files everything
    runs in this process. ``inspect`` runs extra checks on each prepared file inside the worker (it
    must be picklable, i.e. a module-level function). ``keep_chunks=False`` sends back counts only,
    which is cheaper when the chunks themselves are not needed. Workers are started with
    ``start_method`` (default :func:`default_start_method`). If the pool breaks (a worker killed,
    e.g. out of memory), the files not yet returned are chunked in this process instead.
    ``resolver`` is the corpus's :class:`ManifestResolver`, handed to every worker so that manifests
    are read once per command (a new one is made when it is not given).
    """
    docs_dir = Path(docs_dir)
    resolver = resolver if resolver is not None else ManifestResolver(docs_dir)
    if workers <= 1 or len(files) < MIN_FILES_FOR_POOL:
        yield from _sequential(docs_dir, files, keep_chunks, inspect, resolver)
        return

    size = batch_size or max(4, min(64, len(files) // (workers * 8) or 1))
    batches = [(list(files[i : i + size]), keep_chunks, inspect) for i in range(0, len(files), size)]
    ctx = multiprocessing.get_context(start_method or default_start_method())
    done = 0
    executor = ProcessPoolExecutor(
        workers,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(str(docs_dir), os.getpid(), resolver),
    )
    finished = False
    try:
        for outcomes in executor.map(_run_batch, batches):
            for rel, outcome in outcomes:
                yield rel, _as_result(outcome)
            done += 1
        finished = True
    except BrokenProcessPool:
        remaining = [rel for batch, _keep, _inspect in batches[done:] for rel in batch]
        yield from _sequential(docs_dir, remaining, keep_chunks, inspect, resolver)
        finished = True
    finally:
        # stopped early (the caller closed the generator, an interrupt, an error): do not wait
        # for the batches in progress; idle workers exit, busy ones after their batch
        executor.shutdown(wait=finished, cancel_futures=True)


def _sequential(
    docs_dir: Path,
    files: Sequence[str],
    keep_chunks: bool,
    inspect: Inspector | None,
    resolver: ManifestResolver,
) -> Iterator[tuple[str, ChunkedFile | FindingError]]:
    for rel in files:
        yield rel, _as_result(chunk_one(docs_dir, rel, resolver, keep_chunks=keep_chunks, inspect=inspect))
