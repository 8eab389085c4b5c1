"""Leave-one-out ablation of the default ranking's signals, per category.

    uv run python benchmarks/ablation.py --index-dir DIR --cases FILE [--cases FILE ...]

Runs every case file (same procedure as ``benchmarks/quality.py``) with the default ranking, then
once more with each signal switched off, and prints MRR@5 overall and per category for every row.
A signal earns its place when removing it lowers the figures on a set nobody tuned on (the check
halves under ``evals/``); ``docs/ranking.md`` keeps the table.

Signals switched off here: the spelling leg, the path field, the phrase leg, the vector leg (when
the index has vectors), taxonomy cues, static priors, query-term coverage, the byte-identical
collapse, the intent signals (topic introduction, action verbs, data-model damping for action
queries and for descriptions, short forms), compounds, contrasts, narrower neighbours (``, not
just X``), inverse operations, contrast neighbours, one environment variable, the object of the
action, every one at once, the plain operation, type definitions, parts of a split section, subsections of an operation, the
sibling-section choice, page openings, small words and the option leg. The
identifier-aware heading and text fields are build-time columns and cannot be switched off without
another index; the ``original`` row shows the recipe without any signal. ``--only LABEL`` (repeatable,
a row's label without its ``- ``) runs the default and those rows alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

import numpy as np

from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.search import engine as engine_module
from docs_mcp_core.search import query as query_module
from docs_mcp_core.search import ranker as ranker_module
from docs_mcp_core.search import retrieval as retrieval_module
from docs_mcp_core.search.intent import UNDO_GROUP, IntentIndex
from docs_mcp_core.search.ranker import RankingWeights
from docs_mcp_eval.cases import EvalCase, load_cases
from docs_mcp_eval.metrics import category_breakdown, facet_precision, mrr_at_k

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quality import run_case


@contextmanager
def weights(**overrides: float) -> Iterator[None]:
    """Engines opened inside get ``RankingWeights`` with ``overrides`` (fields read at open)."""
    original = getattr(engine_module, "RankingWeights")  # noqa: B009  (not re-exported)
    setattr(engine_module, "RankingWeights", partial(RankingWeights, **overrides))  # noqa: B010
    try:
        yield
    finally:
        setattr(engine_module, "RankingWeights", original)  # noqa: B010


@contextmanager
def no_coverage() -> Iterator[None]:
    original = ranker_module.coverage_factor  # pyright: ignore[reportPrivateImportUsage]
    ranker_module.coverage_factor = lambda text, terms, undo=False: 1.0  # type: ignore[assignment]
    try:
        yield
    finally:
        ranker_module.coverage_factor = original  # pyright: ignore[reportPrivateImportUsage]


@contextmanager
def no_contrasts() -> Iterator[None]:
    original = query_module.drop_contrasts
    query_module.drop_contrasts = lambda text: text
    try:
        yield
    finally:
        query_module.drop_contrasts = original


@contextmanager
def no_narrower() -> Iterator[None]:
    """``, not just X`` clauses stay in the query, as before narrower neighbours were read."""
    original = query_module._CONTRAST_RE  # pyright: ignore[reportPrivateUsage]
    query_module._CONTRAST_RE = query_module.contrast_pattern(narrower=False)  # pyright: ignore[reportPrivateUsage]
    try:
        yield
    finally:
        query_module._CONTRAST_RE = original  # pyright: ignore[reportPrivateUsage]


@contextmanager
def no_inverses() -> Iterator[None]:
    joins, wanted = retrieval_module.inverse_joins, IntentIndex.wanted  # pyright: ignore[reportPrivateImportUsage]
    retrieval_module.inverse_joins = lambda words, fields, mask: []  # type: ignore[assignment]
    IntentIndex.wanted = lambda self, verbs, terms: verbs & ~UNDO_GROUP  # type: ignore[method-assign]
    try:
        yield
    finally:
        retrieval_module.inverse_joins = joins  # pyright: ignore[reportPrivateImportUsage]
        IntentIndex.wanted = wanted  # type: ignore[method-assign]


def _no_priors(engine: SearchEngine) -> None:
    catalog = engine._catalog  # pyright: ignore[reportPrivateUsage]
    object.__setattr__(catalog, "prior", np.ones_like(catalog.prior))


def _no_short_forms(engine: SearchEngine) -> None:
    engine._retrieval.prefixes = None  # pyright: ignore[reportPrivateUsage]


def _no_compounds(engine: SearchEngine) -> None:
    engine._retrieval.compounds = None  # pyright: ignore[reportPrivateUsage]


def _no_collapse(engine: SearchEngine) -> None:
    engine._ranker._dedup = False  # pyright: ignore[reportPrivateUsage]


@dataclasses.dataclass(frozen=True)
class Variant:
    label: str
    options: dict[str, object] = dataclasses.field(default_factory=dict)
    weights: dict[str, float] = dataclasses.field(default_factory=dict)
    after_open: Callable[[SearchEngine], None] | None = None
    coverage: bool = True
    contrasts: bool = True
    narrower: bool = True
    inverses: bool = True
    needs_vectors: bool = False


VARIANTS = (
    Variant("default"),
    Variant("- spelling leg", weights={"spelling": 0.0}),
    Variant("- path field", weights={"path": 0.0}),
    Variant("- phrase leg", options={"proximity_weight": 0.0}),
    Variant("- vector leg", options={"vector_weight": 0.0}, needs_vectors=True),
    Variant("- taxonomy cues", weights={"cue": 0.0}),
    Variant("- static priors", after_open=_no_priors),
    Variant("- query-term coverage", coverage=False),
    Variant("- byte-identical collapse", after_open=_no_collapse),
    Variant("- topic introduction", weights={"topic": 0.0}),
    Variant("- action verbs", weights={"verb": 0.0}),
    Variant("- data-model damping", weights={"model": 0.0}),
    Variant("- data-model damping of descriptions", weights={"described_model": 0.0}),
    Variant("- sibling sections", weights={"sibling": 0.0}),
    Variant("- option leg", weights={"option": 0.0}),
    Variant("- short forms", after_open=_no_short_forms),
    Variant("- compounds", after_open=_no_compounds),
    Variant("- contrasts", contrasts=False),
    Variant("- inverse operations", inverses=False),
    Variant("- contrast neighbours", weights={"neighbour": 0.0}),
    Variant("- environment variables", weights={"variable": 0.0}),
    Variant("- narrower neighbours", narrower=False),
    Variant("- object of the action", weights={"object": 0.0}),
    Variant("- parts of a split section", weights={"later_part": 0.0}),
    Variant("- subsections of an operation", weights={"subsection": 0.0}),
    Variant("- every one at once", weights={"every": 0.0}),
    Variant("- plain operation", weights={"plain_operation": 0.0}),
    Variant("- type definitions", weights={"type_definition": 0.0}),
    Variant("- page openings", weights={"opening": 0.0}),
    Variant("- small words", weights={"small_words": 0.0}),
    Variant("- guides under a language filter", weights={"included": 1.0}),
    Variant("- body words for descriptions", weights={"described_text": 1.0}),
    Variant("original recipe", options={"ranking": "original"}),
)


def run_variant(index_dir: Path, variant: Variant, case_sets: list[list[EvalCase]]) -> list[list]:
    with weights(**variant.weights):
        engine = SearchEngine.open(index_dir, options=SearchOptions(**variant.options))  # type: ignore[arg-type]
    if variant.after_open is not None:
        variant.after_open(engine)
    try:
        with ExitStack() as stack:
            if not variant.coverage:
                stack.enter_context(no_coverage())
            if not variant.contrasts:
                stack.enter_context(no_contrasts())
            if not variant.narrower:
                stack.enter_context(no_narrower())
            if not variant.inverses:
                stack.enter_context(no_inverses())
            return [[run_case(engine, c) for c in cases] for cases in case_sets]
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Leave-one-out ablation of the default ranking.")
    parser.add_argument("--index-dir", type=Path, required=True, help="folder written by docs-mcp build")
    parser.add_argument("--cases", type=Path, action="append", required=True, help="case file (repeatable)")
    parser.add_argument(
        "--only", action="append", default=[], help="run the default and this row alone (repeatable)"
    )
    args = parser.parse_args(argv)
    only = {f"- {label}" for label in args.only}
    unknown = only - {variant.label for variant in VARIANTS}
    if unknown:
        parser.error(f"no such row: {', '.join(sorted(unknown))}")
    case_sets = [load_cases(path) for path in args.cases]
    probe = SearchEngine.open(args.index_dir, options=SearchOptions())
    has_vectors = probe.metadata.embedding is not None
    probe.close()
    rows: dict[str, list[list]] = {}
    for variant in VARIANTS:
        if (variant.needs_vectors and not has_vectors) or (only and variant.label not in {"default", *only}):
            continue
        rows[variant.label] = run_variant(args.index_dir, variant, case_sets)
    for path, index in zip(args.cases, range(len(case_sets)), strict=True):
        categories = sorted({c.category or "" for c in case_sets[index]})
        print(f"\n{path} ({len(case_sets[index])} cases), index {args.index_dir}")
        head = ["signal", "MRR@5", "top-5", *categories]
        print("| " + " | ".join(head) + " |")
        print("| --- |" + " ---: |" * (len(head) - 1))
        for label, results in rows.items():
            ranked = results[index]
            by_cat = {row.category: row.mrr_at_5 for row in category_breakdown(ranked)}
            cells = [f"{mrr_at_k(ranked):.3f}", f"{facet_precision(ranked):.3f}"]
            cells += [f"{by_cat.get(c, 0.0):.2f}" for c in categories]
            print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
