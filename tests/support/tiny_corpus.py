"""Small corpora built with the real builder, for end-to-end ranking tests.

A test module writes its pages as a mapping from relative path to markdown, builds them once
(module scope) and searches the index with a real engine.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.search import SearchEngine, SearchOptions

INDEXED_AT = "2026-01-01T00:00:00.000Z"  # fixed, so that builds of the same pages are identical


def language_manifest(language: str, chunk_by: str = "h2") -> str:
    """A folder manifest that sets the ``language`` of its files."""
    return json.dumps(
        {
            "version": "1",
            "strategy": {"chunk_by": chunk_by},
            "metadata": {"language": language},
            "taxonomy": {},
        }
    )


def build_pages(
    factory: pytest.TempPathFactory, name: str, pages: Mapping[str, str], *, heading_vectors: bool = False
) -> Path:
    """Write ``pages`` (relative path → text) into a new folder and build it (with each section's
    heading-path vector when ``heading_vectors``); the index folder."""
    root = factory.mktemp(f"{name}-docs")
    for relative, text in pages.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    out = factory.mktemp(f"{name}-index")
    build_index(
        BuildOptions(docs_dir=root, out_dir=out, indexed_at=INDEXED_AT, heading_vectors=heading_vectors)
    )
    return out


@contextmanager
def opened(index: Path, **options: object) -> Iterator[SearchEngine]:
    """A search engine on ``index`` (``options`` as :class:`SearchOptions` takes them), closed after."""
    engine = SearchEngine.open(index, options=SearchOptions(**options))  # type: ignore[arg-type]
    try:
        yield engine
    finally:
        engine.close()


@contextmanager
def ranking_weights(engine: SearchEngine, **weights: float) -> Iterator[SearchEngine]:
    """``engine`` searching with the default ranking's ``weights`` replaced (a signal switched off
    or set otherwise), and as it was afterwards."""
    ranker = engine._ranker  # pyright: ignore[reportPrivateUsage]
    saved = ranker.weights
    ranker.weights = dataclasses.replace(saved, **weights)
    try:
        yield engine
    finally:
        ranker.weights = saved
