"""The ``local`` embedding provider: semantic search with no API key, no network and no torch.

docs-mcp-core ships sentence-transformers/all-MiniLM-L6-v2 converted to ONNX with int8 weights
(``models/all-MiniLM-L6-v2/``, about 23 MB; ``scripts/export_local_model.py`` is the recipe and
``NOTICE`` there says what was converted from what). It runs on ONNX Runtime's CPU provider, with
the model's own ``tokenizer.json`` read by the ``tokenizers`` library, and reproduces what
sentence-transformers does with the model: inputs truncated to 256 word pieces, mean pooling of the
last hidden state over the attention mask, then L2 normalisation. Queries and chunks use the same
encoder with no prefix, so one provider serves ``docs-mcp build`` and the search server alike.

The model is loaded on first use, not on construction: a server whose index was built with
``local`` starts as fast as a lexical one and pays the ~0.3 s load on its first search.

How a build's inputs are run. Every input goes through the model on its own (a batch of one, so
no compute is spent on padding), and one worker thread per core runs inputs concurrently, each
ONNX Runtime call on a single thread; inputs are handed out longest first, so the cores finish
together. On the reference 2-core machine this needs about half the CPU time of padded,
length-sorted batches of 64 on two intra-op threads (5.4 against 11.1 CPU seconds for 600 chunks
of the sdk-docs corpus), and a full 10,969-chunk build embeds in about a minute on two idle cores.
A batch of one also makes each vector a function of its own text only: the int8 model quantises
activations with one scale per call, so inputs batched together would nudge each other's vectors
(cosine down to 0.987), and a chunk would not get the vector its query twin gets.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

import numpy as np

from docs_mcp_core.embedding.local_model import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    LoadedModel,
    LocalModel,
    load_model,
    resolve_local_model,
)
from docs_mcp_core.embedding.provider import EmbedProgress, compute_config_fingerprint
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.utf8 import utf8_safe

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_MODELS",
    "LocalEmbeddingProvider",
    "LocalModel",
    "available_cores",
    "resolve_local_model",
]


_PROGRESS_EVERY = 64  # inputs between two progress reports of one call
_RECENT_QUERIES = 256  # single-text results remembered (a query paged through is embedded once)


def available_cores() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class LocalEmbeddingProvider:
    """all-MiniLM-L6-v2 (ONNX, int8) on the CPU: 384-dimensional unit vectors, free and offline.

    Thread-safe: the model loads once under a lock and ONNX Runtime sessions accept concurrent
    runs. ``threads`` is the number of inputs run at once (default: every core the process may use).
    ``on_progress`` (optional) receives an :class:`EmbedProgress`, with an ETA, every 64 inputs of
    a call.
    """

    name = "local"
    cost_per_million_tokens = 0.0

    def __init__(
        self,
        model: str | None = None,
        dimensions: int | None = None,
        *,
        threads: int | None = None,
        on_progress: Callable[[EmbedProgress], None] | None = None,
    ) -> None:
        spec = resolve_local_model(model)
        if dimensions is not None and dimensions != spec.dimensions:
            raise EmbeddingError(
                f"local embedding model '{spec.name}' produces {spec.dimensions}-dimensional vectors; "
                f"--embedding-dimensions {dimensions} cannot be honoured (omit it or set {spec.dimensions})"
            )
        if threads is not None and threads < 1:
            raise EmbeddingError(f"local embedding threads must be a positive integer (got {threads})")
        self.spec = spec
        self.model = spec.name
        self.dimensions = spec.dimensions
        self.max_tokens = spec.max_tokens
        self.threads = threads if threads is not None else available_cores()
        self._on_progress = on_progress
        self._lock = threading.Lock()
        self._held: LoadedModel | None = None  # keeps the process's one copy of the model loaded
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._running: dict[str, Future[np.ndarray]] = {}  # queries being embedded, by text

    # -- provider protocol ---------------------------------------------------------------------

    def config_fingerprint(self) -> str:
        return compute_config_fingerprint(
            {
                "provider": self.name,
                "model": self.model,
                "dimensions": self.dimensions,
                "weights": self.spec.onnx_sha256,
                "max_tokens": self.max_tokens,
                "pooling": "mean-l2",
            }
        )

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first :meth:`embed`)."""
        return self._held is not None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, in input order.

        A call with one text (a search query) is answered from the last 256 such answers when it
        repeats, so following a query's pages or retrying it costs no model run.
        """
        if not texts:
            return []
        if len(texts) == 1 and isinstance(texts[0], str):
            return [self._query_vector(texts[0]).astype(np.float64).tolist()]
        return self.embed_array(texts).astype(np.float64).tolist()

    def _query_vector(self, text: str) -> np.ndarray:
        """``text``'s vector: remembered, being embedded by another thread (waited for: a search
        of an index with chunk vectors and heading vectors asks for its query's on two threads at
        once, and running the model twice cost the search a core), or embedded now."""
        with self._lock:
            vector = self._recent.get(text)
            if vector is not None:
                self._recent.move_to_end(text)
                return vector
            running = self._running.get(text)
            if running is None:
                running = self._running[text] = Future()
                mine = True
            else:
                mine = False
        if not mine:
            return running.result()
        try:
            vector = self.embed_array([text])[0]
        except BaseException as exc:
            with self._lock:
                del self._running[text]
            running.set_exception(exc)
            raise
        with self._lock:
            del self._running[text]
            self._recent[text] = vector
            while len(self._recent) > _RECENT_QUERIES:
                self._recent.popitem(last=False)
        running.set_result(vector)
        return vector

    def embed_array(self, texts: Sequence[str], *, normalize: bool = True) -> np.ndarray:
        """The vectors as a ``(len(texts), dimensions)`` float32 array, in input order.

        ``normalize=False`` returns the mean-pooled vectors before L2 normalisation.
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise EmbeddingError(f"local embedding input {i} is {type(text).__name__}, not a string")
        session, model = self._load()
        started = time.perf_counter()
        try:
            # the tokenizer refuses a lone surrogate (a "\ud800" escape in a client's JSON): one such
            # query turned the heading-path leg off for the server's life
            if len(texts) == 1:  # no tokenizer thread pool for one query (nor a fork warning later)
                token_ids = [model.query_ids(texts[0])]
            else:
                token_ids = [e.ids for e in model.tokenizer.encode_batch([utf8_safe(t) for t in texts])]
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"local embedding model could not tokenise its input: {exc}") from exc

        def run(index: int) -> None:
            out[index] = self._run(session, token_ids[index], normalize)

        workers = min(self.threads, len(texts))
        if workers == 1:
            for done, index in enumerate(range(len(texts)), start=1):
                run(index)
                if done % _PROGRESS_EVERY == 0 or done == len(texts):
                    self._report(done, len(texts), started)
            return out
        longest_first = sorted(range(len(texts)), key=lambda i: -len(token_ids[i]))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docs-mcp-local-embed") as pool:
            pending: set[Future[None]] = {pool.submit(run, i) for i in longest_first}
            done = 0
            reported = 0
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    error = future.exception()
                    if error is not None:
                        for other in pending:
                            other.cancel()
                        raise error
                done += len(finished)
                if done - reported >= _PROGRESS_EVERY or done == len(texts):
                    reported = done
                    self._report(done, len(texts), started)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One text's unit vector (float32), answered from the last 256 such answers when it repeats."""
        return self._query_vector(text)

    def embed_short(
        self,
        texts: Sequence[str],
        *,
        batch: int = 256,
        previous: tuple[Sequence[str], np.ndarray] | None = None,
    ) -> np.ndarray:
        """Unit vectors of many short texts (heading paths: a few dozen word pieces each).

        Texts with the same number of word pieces run through the model together, up to ``batch``
        at a time, so no compute goes to padding and the per-call overhead, which dominates for
        short inputs, is paid once per batch; one worker per core runs batches. The int8 model
        quantises activations with one scale per call, so a vector depends slightly on its batch
        (cosine ≥ 0.98 to the same text run alone); the same texts in the same order give the
        same batches.

        ``previous`` is an earlier call's texts, in its order, and the vectors it returned: a batch
        whose texts are exactly one of that call's batches takes its vectors from there instead of
        running again, which gives the vectors the run would give (a rebuild of an unchanged corpus
        runs nothing; an edit runs only the batches it changed).
        """
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        session, model = self._load()
        tokenizer = model.tokenizer
        started = time.perf_counter()
        ids = _token_ids(tokenizer, texts)
        jobs = _short_batches([len(row) for row in ids], batch)
        done = 0
        if previous is not None and previous[1].shape[1:] == (self.dimensions,):
            known = _batches_of(previous, dict(zip(texts, map(len, ids), strict=True)), tokenizer, batch)
            remaining = []
            for job in jobs:
                found = known.get(tuple(texts[i] for i in job))
                if found is None:
                    remaining.append(job)
                else:
                    out[job] = found
                    done += len(job)
            jobs = remaining
            if done:
                self._report(done, len(texts), started)

        def run(job: list[int]) -> int:
            x = np.array([ids[i] for i in job], dtype=np.int64)
            feeds = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)}
            try:
                hidden = session.run(None, feeds)[0]
            except Exception as exc:
                raise EmbeddingError(f"local embedding model failed to run: {exc}") from exc
            pooled = np.asarray(hidden, dtype=np.float32).mean(axis=1)
            out[job] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            return len(job)

        with ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="docs-mcp-local-embed") as pool:
            for count in pool.map(run, jobs):
                done += count
                self._report(done, len(texts), started)
        return out

    # -- internals -----------------------------------------------------------------------------

    def _run(
        self, session: onnxruntime.InferenceSession, token_ids: Sequence[int], normalize: bool
    ) -> np.ndarray:
        """One input through the model: the mean of its token states, optionally L2-normalised."""
        ids = np.asarray(token_ids, dtype=np.int64).reshape(1, -1)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        try:
            hidden = session.run(None, feeds)[0]
        except Exception as exc:
            raise EmbeddingError(f"local embedding model failed to run: {exc}") from exc
        pooled = np.asarray(hidden, dtype=np.float32)[0].mean(axis=0)
        if not normalize:
            return pooled
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def _report(self, done: int, total: int, started: float) -> None:
        if self._on_progress is None:
            return
        elapsed = time.perf_counter() - started
        eta = (total - done) * elapsed / done if done else None
        self._on_progress(
            EmbedProgress(phase="embedding", done=done, total=total, elapsed_seconds=elapsed, eta_seconds=eta)
        )

    def _load(self) -> tuple[onnxruntime.InferenceSession, LoadedModel]:
        held = self._held
        if held is None:
            with self._lock:
                if self._held is None:
                    self._held = load_model(self.spec)
                held = self._held
        return held.session, held


SHORT_BATCH_CELLS = 256 * 32 * 32
"""Attention cells (texts times word pieces squared) of one batch of short texts: what its attention
holds grows so, and 256 texts at the model's 256 word pieces held hundreds of megabytes per layer (a
page of 5,000 long headings took 3.5 GB to build, now 0.5 GB; 4 such texts run together). Texts of
up to 32 word pieces still run 256 at a time, and every evaluation corpus's heading texts (48 word
pieces at most) in the batches an earlier build ran."""


def _token_ids(tokenizer: tokenizers.Tokenizer, texts: Sequence[str]) -> list[list[int]]:
    try:
        return [e.ids for e in tokenizer.encode_batch([utf8_safe(t) for t in texts])]
    except Exception as exc:
        raise EmbeddingError(f"local embedding model could not tokenise its input: {exc}") from exc


def _short_batches(lengths: Sequence[int], batch: int) -> list[list[int]]:
    """:meth:`LocalEmbeddingProvider.embed_short`'s batches: the indices of equal lengths, in input
    order, ``batch`` at a time (at most :data:`SHORT_BATCH_CELLS` attention cells), shortest first."""
    by_length: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        by_length.setdefault(length, []).append(index)
    jobs: list[list[int]] = []
    for length, group in sorted(by_length.items()):
        size = max(1, min(batch, SHORT_BATCH_CELLS // max(length * length, 1)))
        jobs.extend(group[s : s + size] for s in range(0, len(group), size))
    return jobs


def _batches_of(
    previous: tuple[Sequence[str], np.ndarray],
    lengths: dict[str, int],
    tokenizer: tokenizers.Tokenizer,
    batch: int,
) -> dict[tuple[str, ...], np.ndarray]:
    """An earlier :meth:`~LocalEmbeddingProvider.embed_short` call's batches, by their texts, with
    their vectors (``lengths`` holds the word-piece counts known already)."""
    texts, vectors = previous
    if len(texts) != len(vectors):
        return {}
    unknown = [t for t in dict.fromkeys(texts) if t not in lengths]
    lengths = {**lengths, **dict(zip(unknown, map(len, _token_ids(tokenizer, unknown)), strict=True))}
    jobs = _short_batches([lengths[t] for t in texts], batch)
    return {tuple(texts[i] for i in job): vectors[job] for job in jobs}
