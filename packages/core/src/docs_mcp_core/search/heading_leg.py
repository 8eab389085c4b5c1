"""The heading-path leg: sections found by what the names of their page and headings mean.

Why, for documentation in general: a section's meaning sits in the names its authors gave its page
and headings, and generated references reduce a section to an operation id, one sentence and code.
A vector of those few names matches a reader's own words (``earnings``, ``kick off``) against the
names the documentation chose (``payouts``, ``trigger``), where a vector of the whole chunk is
mostly code and the lexical legs need a shared word.

Every row has two short texts, its file's **path words** (``sdks dub python sdks links``: the path
without its extension and without ``docs``, ``readme``, ``index``; identifiers split into words) and
its **heading chain** (``links > create many``: the breadcrumb's headings, identifiers split). Each
distinct text is embedded once with the shipped local model (:mod:`docs_mcp_core.embedding.local`),
and a row's vector is the normalised sum of its path's and its chain's vectors. Embedding the two
apart costs less than half of embedding every row's whole heading path (on the SDK corpus 4,087
paths and 3,565 chains, 99k word pieces, against 10,828 paths of 223k) and ranks as well
(``docs/ranking.md``, "Heading-path vectors").

The vectors are stored factorised (:class:`HeadingVectors`): the path matrix, the chain matrix,
and per row the two indices and the inverse norm of the sum, so a query's similarity to every row
is two small matrix-vector products and a gather. The build embeds the texts
(:func:`embed_heading_texts`, while the table is written) and the vectors go into the derived files
(:mod:`docs_mcp_core.index.derived_files`); an index without them searches without this leg.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from docs_mcp_core.index.derived_files import Part
from docs_mcp_core.ranking import identifier_parts
from docs_mcp_core.search.legs import EMPTY_LEG, Leg
from docs_mcp_core.search.row_catalog import members, smallest_first
from docs_mcp_core.search.vector_matrix import row_dots

if TYPE_CHECKING:  # the clusters are imported when an index has them (over IVF_MIN_PATHS paths)
    from docs_mcp_core.search.heading_clusters import PathClusters

__all__ = [
    "HEADING_TEXT_VERSION",
    "IVF_MIN_PATHS",
    "HeadingLeg",
    "HeadingTexts",
    "HeadingVectors",
    "HeadingVocabulary",
    "Nearest",
    "chain_text",
    "embed_heading_texts",
    "path_text",
]

HEADING_TEXT_VERSION = 1  # bump when path_text or chain_text change: stored vectors are then stale
IVF_MIN_PATHS = 20_000  # under this the exact scan costs less than a millisecond or so (clustered above)
_WORD_RE = re.compile(r"[A-Za-z0-9_.:]+")
_PATH_SPLIT_RE = re.compile(r"[/_\-. ]+")
_PATH_NOISE = frozenset({"md", "mdx", "readme", "index", "docs"})
_CRUMB_SEPARATOR = " > "


class ShortTextEmbedder(Protocol):
    """What embeds the texts: the local provider (:meth:`LocalEmbeddingProvider.embed_short`)."""

    model: str
    dimensions: int

    def embed_short(
        self, texts: Sequence[str], *, previous: tuple[Sequence[str], np.ndarray] | None = None
    ) -> np.ndarray: ...


def _words(text: str) -> str:
    """``text``'s words, compound identifiers split (``createMany`` → ``create many``)."""
    return " ".join(p for token in _WORD_RE.findall(text) for p in identifier_parts(token))


def path_text(filepath: str) -> str:
    """A file's path words: ``sdks/dub/python/docs/sdks/links/README.md`` → ``sdks dub python sdks links``."""
    stem = filepath.rsplit(".", 1)[0] if "." in filepath.rsplit("/", 1)[-1] else filepath
    kept = (w for w in _PATH_SPLIT_RE.split(stem) if w and w.lower() not in _PATH_NOISE)
    return _words(" ".join(kept))


def chain_text(breadcrumb: str) -> str:
    """A row's heading chain: ``file.md > Links > createMany`` → ``links > create many`` ("" for none)."""
    parts = [_words(c) for c in breadcrumb.split(_CRUMB_SEPARATOR)[1:] if c.strip()]
    return _CRUMB_SEPARATOR.join(p for p in parts if p)


class HeadingTexts:
    """The distinct path and chain texts of a build's chunks, collected as they stream past."""

    def __init__(self) -> None:
        self.paths: dict[str, None] = {}
        self.chains: dict[str, None] = {}
        self._seen_files: set[str] = set()

    def add(self, filepath: str, breadcrumb: str) -> None:
        if filepath not in self._seen_files:
            self._seen_files.add(filepath)
            self.paths.setdefault(path_text(filepath) or filepath)
        chain = chain_text(breadcrumb)
        if chain:
            self.chains.setdefault(chain)

    def __len__(self) -> int:
        return len(self.paths) + len(self.chains)


@dataclass
class HeadingVocabulary:
    """The embedded texts: one unit vector per distinct path text and per distinct chain text."""

    paths: dict[str, int]
    path_vectors: np.ndarray
    chains: dict[str, int]
    chain_vectors: np.ndarray
    model: str


def embed_heading_texts(
    texts: HeadingTexts, embedder: ShortTextEmbedder, previous: HeadingVocabulary | None = None
) -> HeadingVocabulary:
    """Embed every distinct text once, in a fixed order (the same corpus gives the same batches);
    batches a ``previous`` build embedded alike take its vectors instead of running again."""
    paths, chains = sorted(texts.paths), sorted(texts.chains)
    earlier = None
    if previous is not None and previous.model == embedder.model:
        if list(previous.paths) == paths and list(previous.chains) == chains:
            return previous  # the same texts: the same batches, the same vectors
        earlier = (
            [*previous.paths, *previous.chains],
            np.vstack([previous.path_vectors, previous.chain_vectors]),
        )
    vectors = embedder.embed_short([*paths, *chains], previous=earlier)
    return HeadingVocabulary(
        {t: i for i, t in enumerate(paths)},
        np.ascontiguousarray(vectors[: len(paths)], dtype=np.float32),
        {t: i for i, t in enumerate(chains)},
        np.ascontiguousarray(vectors[len(paths) :], dtype=np.float32),
        embedder.model,
    )


class HeadingVectors:
    """Every row's heading-path vector, factorised (see the module's docstring)."""

    def __init__(
        self,
        paths: np.ndarray,
        chains: np.ndarray,
        row_path: np.ndarray,
        row_chain: np.ndarray,
        row_scale: np.ndarray,
        model: str,
        clusters: PathClusters | None = None,
    ) -> None:
        self.paths = paths  # (P, d) unit vectors
        self.chains = chains  # (C + 1, d): the last row zeros, for rows without headings
        self.row_path = row_path  # (N,) int32
        self.row_chain = row_chain  # (N,) int32, C for none
        self.row_scale = row_scale  # (N,) float32: 1 / |path vector + chain vector|
        self.model = model
        self.clusters = clusters  # above IVF_MIN_PATHS paths (module heading_clusters)

    @classmethod
    def assemble(
        cls, vocabulary: HeadingVocabulary, filepaths: Sequence[str], breadcrumbs: Sequence[str]
    ) -> HeadingVectors:
        """The rows' vectors, in the order of ``filepaths`` / ``breadcrumbs`` (catalog order)."""
        dims = vocabulary.path_vectors.shape[1] if len(vocabulary.path_vectors) else 0
        none = len(vocabulary.chains)
        chains = np.vstack([vocabulary.chain_vectors.reshape(-1, dims), np.zeros((1, dims), np.float32)])
        by_file: dict[str, int] = {}
        row_path = np.empty(len(filepaths), dtype=np.int32)
        row_chain = np.empty(len(filepaths), dtype=np.int32)
        for i, (filepath, breadcrumb) in enumerate(zip(filepaths, breadcrumbs, strict=True)):
            at = by_file.get(filepath)
            if at is None:
                at = by_file[filepath] = vocabulary.paths[path_text(filepath) or filepath]
            row_path[i] = at
            row_chain[i] = vocabulary.chains.get(chain_text(breadcrumb), none)
        row_scale = _row_scale(vocabulary.path_vectors, chains, row_path, row_chain)
        paths = vocabulary.path_vectors
        clusters = None
        if len(paths) >= IVF_MIN_PATHS:  # the paths are then stored cluster by cluster
            from docs_mcp_core.search.heading_clusters import PathClusters

            clusters, paths, row_path = PathClusters.build(paths, row_path, row_chain, len(chains))
        return cls(paths, chains, row_path, row_chain, row_scale, vocabulary.model, clusters)

    def to_part(self) -> Part:
        arrays = {
            "paths": self.paths,
            "chains": self.chains,
            "row_path": self.row_path,
            "row_chain": self.row_chain,
            "row_scale": self.row_scale,
            **(self.clusters.to_arrays() if self.clusters is not None else {}),
        }
        return Part(arrays, {"model": self.model, "text_version": HEADING_TEXT_VERSION})

    @classmethod
    def from_part(cls, part: Part, model: str) -> HeadingVectors | None:
        """The stored vectors, or None when they were made by another model or text version."""
        meta: dict[str, Any] = part.meta
        if meta.get("model") != model or meta.get("text_version") != HEADING_TEXT_VERSION:
            return None
        a = part.arrays
        clusters = None
        if any(name.startswith("ivf.") for name in a):  # (a smaller index has none: not imported)
            from docs_mcp_core.search.heading_clusters import PathClusters

            clusters = PathClusters.from_arrays(a)
        if clusters is None and "ivf.offsets" in a:  # an earlier layout: its paths' order is not kept
            return None
        return cls(a["paths"], a["chains"], a["row_path"], a["row_chain"], a["row_scale"], model, clusters)

    def __len__(self) -> int:
        return int(self.row_path.shape[0])

    def vocabulary_paths(self) -> np.ndarray:
        """The path vectors in the order their texts were embedded (sorted), which a build that
        reuses them reads; the clusters store them cluster by cluster."""
        if self.clusters is None:
            return self.paths
        ordered = np.empty_like(self.paths)
        ordered[self.clusters.path_ids] = self.paths
        return ordered

    def similarity(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of the unit vector ``query`` to every row's heading path."""
        q = np.asarray(query, dtype=np.float32)
        by_path = row_dots(self.paths, q)
        by_chain = row_dots(self.chains, q)
        return (by_path[self.row_path] + by_chain[self.row_chain]) * self.row_scale

    def nearest(self, query: np.ndarray, mask: np.ndarray | None, limit: int) -> Leg:
        """The ``limit`` rows whose heading path is nearest ``query`` among those ``mask`` keeps:
        exactly, or among the clusters' candidate rows in an index that has them."""
        if limit <= 0 or not len(self):
            return EMPTY_LEG
        rows, similarity = self._scored(np.asarray(query, dtype=np.float32), mask, limit)
        positions = smallest_first(-similarity, rows, limit)
        return positions, similarity[np.searchsorted(rows, positions)].astype(np.float64)

    def _scored(self, q: np.ndarray, mask: np.ndarray | None, limit: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows scored (ascending) and their similarity, the values :meth:`similarity` gives."""
        by_chain = row_dots(self.chains, q)
        if self.clusters is not None:  # only the candidates' rows and paths are scored
            found = self.clusters.candidates(q, by_chain, mask, limit)
            rows = found.rows.astype(np.intp)  # (NumPy indexes with int32 three times slower)
            row_path = self.row_path[rows]
            by_path = self.clusters.path_similarity(self.paths, q, row_path)
            return rows, (by_path + by_chain[self.row_chain[rows]]) * self.row_scale[rows]
        by_path = row_dots(self.paths, q)
        if mask is None:
            rows = np.arange(len(self))
            return rows, (by_path[self.row_path] + by_chain[self.row_chain]) * self.row_scale
        rows = np.flatnonzero(mask)  # only the rows the filter keeps are gathered
        return rows, (by_path[self.row_path[rows]] + by_chain[self.row_chain[rows]]) * self.row_scale[rows]


class Nearest:
    """What the leg's thread found for one query: its embedding, and its ``depth`` nearest rows."""

    __slots__ = ("depth", "embedding", "rows")

    def __init__(self, embedding: np.ndarray, depth: int, rows: Leg) -> None:
        self.embedding = embedding
        self.depth = depth
        self.rows = rows


class QueryEmbedder(Protocol):
    """What embeds a query for the leg: the local provider (:meth:`LocalEmbeddingProvider.embed_query`)."""

    model: str

    def embed_query(self, text: str) -> np.ndarray: ...


class HeadingLeg:
    """The leg at search time: the query's embedding, started before the lexical legs score so it
    runs on another core meanwhile, then the rows nearest it.

    A failure to embed (the model cannot load) never fails a search: the request gets no heading
    rows and one warning is logged for the engine's life.
    """

    DEPTH = 100  # rows the leg ranks: deeper, a heading path's similarity says little
    # A row no other leg found joins only this near the query: a heading path somewhat like the
    # query orders what the lexical legs found, but is no evidence on its own (a query about
    # something the docs do not cover gets no results, not the hundred least unlike sections).
    NEW_ROW_SIMILARITY = 0.25
    LOAD_WAIT_SECONDS = 10.0  # how long a warm-up waits for the model (see wait_loaded)

    def __init__(
        self, vectors: HeadingVectors, embedder: QueryEmbedder, on_warning: Callable[[str], None]
    ) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self._warn = on_warning
        self._failed = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="docs-mcp-heading")
        self._preloaded: Future[np.ndarray | None] | None = None

    def preload(self) -> None:
        """Load the model in the background (the first search then finds it loaded, or waits less)."""
        self._preloaded = self._pool.submit(self._embed, "")

    def wait_loaded(self) -> None:
        """Wait (at most :attr:`LOAD_WAIT_SECONDS`) for :meth:`preload` to finish. A server warms its
        engine up before it imports the MCP SDK: the first search then no longer loads the model meanwhile."""
        if self._preloaded is not None:
            with contextlib.suppress(TimeoutError):
                self._preloaded.result(self.LOAD_WAIT_SECONDS)

    def start(self, text: str, mask: np.ndarray | None, fetch: int) -> Future[Nearest | None] | None:
        """The query's embedding and the rows nearest it that ``mask`` keeps, as a future (None once
        the model failed). Both are computed on the leg's thread while the lexical legs score on
        the caller's: the two products with the path and chain matrices (about 1 ms a search on
        ``sdk-docs``, most of it reading the 12 MB of matrices) release the interpreter's lock, so
        they cost the search nothing when another core is free."""
        return None if self._failed else self._pool.submit(self._nearest, text, mask, self._depth(fetch))

    def _depth(self, fetch: int) -> int:
        return min(fetch, self.DEPTH)

    def _nearest(self, text: str, mask: np.ndarray | None, depth: int) -> Nearest | None:
        embedding = self._embed(text)
        if embedding is None:
            return None
        return Nearest(embedding, depth, self.vectors.nearest(embedding, mask, depth))

    def _embed(self, text: str) -> np.ndarray | None:
        try:
            return self.embedder.embed_query(text)
        except Exception as exc:  # noqa: BLE001 - the leg is an addition; searches go on without it
            if not self._failed:
                self._failed = True
                self._warn(f"heading-path search disabled, the local model cannot embed queries: {exc}")
            return None

    def finish(
        self, started: Nearest | None, mask: np.ndarray | None, fetch: int, found: Sequence[np.ndarray]
    ) -> Leg:
        """The leg's rows for what :meth:`start` found (ranked again if ``fetch`` asks for another
        depth); ``found``: the other legs' rows."""
        if started is None:
            return EMPTY_LEG
        depth = self._depth(fetch)
        if started.depth == depth:
            positions, similarity = started.rows
        else:
            positions, similarity = self.vectors.nearest(started.embedding, mask, depth)
        weak = similarity < self.NEW_ROW_SIMILARITY
        if weak.any():
            elsewhere = np.concatenate(list(found)) if found else np.empty(0, dtype=np.int64)
            keep = ~weak | members(positions, elsewhere)
            positions, similarity = positions[keep], similarity[keep]
        return positions, similarity

    def close(self) -> None:
        self._pool.shutdown(wait=False)


_SCALE_BLOCK = 8_192  # rows summed at a time: 12 MB of float32 at 384 dimensions


def _row_scale(
    paths: np.ndarray, chains: np.ndarray, row_path: np.ndarray, row_chain: np.ndarray
) -> np.ndarray:
    """``1 / |paths[row_path] + chains[row_chain]|`` per row, a block of rows at a time (each row's
    norm is the same bits whatever block it is in): the whole sum at once held three arrays of
    every row's vector (505 MB at ten times ``sdk-docs``), the build's peak memory."""
    scale = np.empty(len(row_path), dtype=np.float32)
    for start in range(0, len(row_path), _SCALE_BLOCK):
        end = start + _SCALE_BLOCK
        summed = paths[row_path[start:end]] + chains[row_chain[start:end]]
        norms = np.linalg.norm(summed, axis=1)
        scale[start:end] = (1.0 / np.maximum(norms, 1e-12)).astype(np.float32)
    return scale
