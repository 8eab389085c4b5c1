"""A vector per section of its heading path, fused as its own leg: quality and cost (not adopted).

    uv run python benchmarks/heading_vectors.py --index-dir DIR --cases FILE [--cases FILE ...]
    uv run python benchmarks/heading_vectors.py --index-dir DIR --cases FILE --cost --docs-dir DOCS

The experiment of issue #30's "How": each section's heading path (its file's path words, then its
page title and headings, identifiers split into words: ``guides integration gitlab: using uv in git
lab ci cd > caching``, ten to twenty tokens) is embedded once per distinct text with the shipped
local model (all-MiniLM-L6-v2, ONNX int8); a query is embedded with the same model, and the rows
nearest it (cosine, under the request's filters) add ``weight × 61 / (60 + rank)`` to their score,
as the vector leg does. The index is a lexical one (``--embedding-provider none``); the leg is
attached to the opened engine, so nothing in the index changes.

Prints MRR@5, top-5 share and MRR@5 per category without and with the leg for every case file.
``--last-two`` embeds a section's last two headings only (no path words), ``--batched`` runs texts
of equal token length together instead of one at a time. ``--cost`` instead prints what the leg
would cost a default build and a search, measured in one run with A and B interleaved (medians): a
lexical build of ``--docs-dir`` against the same build plus embedding its heading paths, a search
in process against the same search plus embedding the query and ranking the heading vectors, and
the model's load before the first answer.

``docs/ranking.md`` ("Measured and not adopted") keeps the figures: the leg lifts every tuning set
and holds on the check halves, but costs a build several times the lexical build's time.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from docs_mcp_core.embedding.local import LocalEmbeddingProvider
from docs_mcp_core.ranking import identifier_parts
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search import ranker as ranker_module
from docs_mcp_core.search.legs import Leg, Prefilter
from docs_mcp_core.search.query import Query
from docs_mcp_core.search.ranker import RRF_K, RankingWeights
from docs_mcp_core.search.row_catalog import scan_in_row_order, smallest_first
from docs_mcp_eval.cases import load_cases
from docs_mcp_eval.metrics import category_breakdown, facet_precision, mrr_at_k

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import run_case

WEIGHT = 0.5  # the vector leg's: the nearest heading path adds half the best lexical score
DEPTH = 100  # heading paths a search ranks
_WORD_RE = re.compile(r"[A-Za-z0-9_.:]+")
_PATH_SPLIT_RE = re.compile(r"[/_\-. ]+")
_PATH_NOISE = frozenset({"md", "mdx", "readme", "index", "docs"})


def words(text: str) -> str:
    """``text``'s words, compound identifiers split (``createMany`` → ``create many``)."""
    return " ".join(p for tok in _WORD_RE.findall(text) for p in identifier_parts(tok))


def heading_path(filepath: str, breadcrumb: str, *, last_two: bool = False) -> str:
    """A section's path words and headings: ``sdks dub python sdks links: links > create many``
    (``last_two``: its last two headings only, ``links > create many``, or the path words when it
    has none)."""
    stem = filepath.rsplit(".", 1)[0]
    path = words(" ".join(w for w in _PATH_SPLIT_RE.split(stem) if w and w.lower() not in _PATH_NOISE))
    heads = [words(c) for c in breadcrumb.split(" > ")[1:] if c.strip()]
    if last_two:
        return " > ".join(heads[-2:]) or path
    return f"{path}: {' > '.join(heads)}".strip(": ")


def heading_texts(engine: SearchEngine, *, last_two: bool = False) -> list[str]:
    """Every row's heading path, in catalog order."""
    table = engine._table  # pyright: ignore[reportPrivateUsage]
    data = scan_in_row_order(table, ["filepath", "breadcrumb"])
    return [
        heading_path(f, b, last_two=last_two)
        for f, b in zip(
            data.column("filepath").to_pylist(), data.column("breadcrumb").to_pylist(), strict=True
        )
    ]


def embed_distinct(
    texts: list[str], embedder: LocalEmbeddingProvider, *, batched: bool = False
) -> np.ndarray:
    """One unit vector per row, each distinct text embedded once (``batched``: texts of equal
    token length run together, :func:`embed_equal_lengths`)."""
    distinct = sorted(set(texts))
    vectors = embed_equal_lengths(distinct, embedder) if batched else embedder.embed_array(distinct)
    at = {t: i for i, t in enumerate(distinct)}
    return vectors[[at[t] for t in texts]]


def embed_equal_lengths(texts: list[str], embedder: LocalEmbeddingProvider) -> np.ndarray:
    """The model's unit vectors of ``texts``, run in batches of up to 256 texts of the same token
    length (no padding), on two threads: short texts cost the model less per input together."""
    session, tokenizer = embedder._load()  # pyright: ignore[reportPrivateUsage]
    ids = [e.ids for e in tokenizer.encode_batch(texts)]
    by_length: dict[int, list[int]] = {}
    for i, row in enumerate(ids):
        by_length.setdefault(len(row), []).append(i)
    jobs = [group[s : s + 256] for group in by_length.values() for s in range(0, len(group), 256)]
    out = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)

    def run(job: list[int]) -> None:
        x = np.array([ids[i] for i in job], dtype=np.int64)
        feeds = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)}
        pooled = np.asarray(session.run(None, feeds)[0], dtype=np.float32).mean(axis=1)
        out[job] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(run, jobs))
    return out


def nearest(matrix: np.ndarray, query: np.ndarray, prefilter: Prefilter, fetch: int) -> Leg:
    """The ``fetch`` rows whose heading path is nearest ``query`` among those the filters keep."""
    similarity = matrix @ query
    candidates = np.flatnonzero(prefilter.mask) if prefilter.mask is not None else np.arange(len(matrix))
    positions = smallest_first(-similarity[candidates], candidates, fetch)
    return positions, similarity[positions].astype(np.float64)


def _heading_contribution(leg: Leg, weights: RankingWeights) -> np.ndarray:
    return WEIGHT * (RRF_K + 1) / (RRF_K + np.arange(1, len(leg[0]) + 1, dtype=np.float64))


def attach(engine: SearchEngine, matrix: np.ndarray, embedder: LocalEmbeddingProvider) -> None:
    """Give ``engine``'s default ranking the heading leg (after its own legs, in fusion order)."""
    retrieval = engine._retrieval  # pyright: ignore[reportPrivateUsage]
    own = retrieval.legs

    async def legs(query: Query, prefilter: Prefilter, fetch: int) -> dict[str, Leg]:
        found = await own(query, prefilter, fetch)
        vector = embedder.embed_array([query.text])[0]
        found["heading"] = nearest(matrix, vector, prefilter, min(fetch, DEPTH))
        return found

    retrieval.legs = legs  # type: ignore[method-assign]
    ranker_module.DEFAULT_CONTRIBUTIONS["heading"] = _heading_contribution


def quality(
    index_dir: Path,
    case_files: list[Path],
    embedder: LocalEmbeddingProvider,
    *,
    last_two: bool,
    batched: bool,
) -> None:
    for label in ("default", "+ heading-path vectors"):
        engine = SearchEngine.open(index_dir, options=SearchOptions())
        if label != "default":
            started = time.perf_counter()
            texts = heading_texts(engine, last_two=last_two)
            matrix = embed_distinct(texts, embedder, batched=batched)
            print(
                f"\n{len(texts):,} rows, {len(set(texts)):,} distinct heading paths, embedded in "
                f"{time.perf_counter() - started:.1f} s (e.g. {texts[len(texts) // 3]!r})"
            )
            attach(engine, matrix, embedder)
        for path in case_files:
            ranked = [run_case(engine, case) for case in load_cases(path)]
            leaks = sum(len(c.leaked_chunk_ids) for c in ranked)
            cells = " ".join(f"{r.category} {r.mrr_at_5:.2f}" for r in category_breakdown(ranked))
            print(
                f"{label:<24} {path.name:<36} MRR@5 {mrr_at_k(ranked):.3f} top-5 "
                f"{facet_precision(ranked):.2f} leaks {leaks} | {cells}"
            )
        engine.close()
        ranker_module.DEFAULT_CONTRIBUTIONS.pop("heading", None)


def _build_seconds(docs_dir: Path) -> float:
    out = Path(tempfile.mkdtemp(prefix="heading-vectors-"))
    try:
        started = time.perf_counter()
        subprocess.run(
            [
                "docs-mcp",
                "build",
                "--docs-dir",
                str(docs_dir),
                "--out",
                str(out / "idx"),
                "--embedding-provider",
                "none",
            ],
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - started
    finally:
        shutil.rmtree(out, ignore_errors=True)


def cost(
    index_dir: Path, docs_dir: Path, case_files: list[Path], pairs: int, *, last_two: bool, batched: bool
) -> None:
    """Build and search cost of the leg against the lexical default, A and B interleaved."""
    engine = SearchEngine.open(index_dir, options=SearchOptions())
    texts = heading_texts(engine, last_two=last_two)
    builds: list[float] = []
    embeds: list[float] = []
    loads: list[float] = []
    matrix = np.empty((0, 0), dtype=np.float32)
    for _ in range(max(1, pairs)):
        builds.append(_build_seconds(docs_dir))
        fresh = LocalEmbeddingProvider()
        started = time.perf_counter()
        fresh.embed_array(["load"])
        loads.append(time.perf_counter() - started)
        started = time.perf_counter()
        matrix = embed_distinct(texts, fresh, batched=batched)
        embeds.append(time.perf_counter() - started)
    build, embed = statistics.median(builds), statistics.median(embeds)
    print(
        f"\nbuild (lexical) {build:.1f} s, heading paths embedded {embed:.1f} s: ratio {(build + embed) / build:.2f}x"
    )
    print(f"model load before the first embedding {statistics.median(loads):.2f} s")
    embedder = LocalEmbeddingProvider()
    queries = [c.query for path in case_files for c in load_cases(path)]
    engine.warm()
    plain: list[float] = []
    with_leg: list[float] = []
    for query in queries:
        started = time.perf_counter()
        engine.search(query, limit=5)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        engine.search(query, limit=5)
        nearest(matrix, embedder.embed_array([query])[0], Prefilter(None, 1.0, None), DEPTH)
        with_leg.append(time.perf_counter() - started)
    a, b = statistics.median(plain) * 1e3, statistics.median(with_leg) * 1e3
    print(f"search p50 in process {a:.2f} ms, with the heading leg {b:.2f} ms: ratio {b / a:.2f}x")
    engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Heading-path vectors as a leg of the default ranking.")
    parser.add_argument("--index-dir", type=Path, required=True, help="a lexical index (docs-mcp build)")
    parser.add_argument("--cases", type=Path, action="append", required=True, help="case file (repeatable)")
    parser.add_argument("--cost", action="store_true", help="also measure build and search cost")
    parser.add_argument("--docs-dir", type=Path, help="the corpus the index was built from (for --cost)")
    parser.add_argument("--pairs", type=int, default=3, help="interleaved build pairs for --cost")
    parser.add_argument("--last-two", action="store_true", help="embed a section's last two headings only")
    parser.add_argument("--batched", action="store_true", help="run texts of equal token length together")
    args = parser.parse_args(argv)
    if args.cost:
        if args.docs_dir is None:
            parser.error("--cost needs --docs-dir")
        cost(
            args.index_dir,
            args.docs_dir,
            args.cases,
            args.pairs,
            last_two=args.last_two,
            batched=args.batched,
        )
        return 0
    quality(
        args.index_dir, args.cases, LocalEmbeddingProvider(), last_two=args.last_two, batched=args.batched
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
