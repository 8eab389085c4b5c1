"""Real builds with heading-path vectors, for the tests of their storage and reuse: the steps a
build reported, and the arrays its derived files hold for the heading-path leg."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.build.options import BuildReporter
from docs_mcp_core.index.derived_files import read_derived


class _Steps(BuildReporter):
    def __init__(self) -> None:
        self.steps: list[str] = []

    def step(self, message: str) -> None:
        self.steps.append(message)


def build_steps(docs: Path, out: Path, *, heading_vectors: bool = True) -> list[str]:
    """Build ``docs`` into ``out`` (a fixed ``indexed_at``) and return the steps it reported."""
    steps = _Steps()
    options = BuildOptions(
        docs_dir=docs, out_dir=out, heading_vectors=heading_vectors, indexed_at="2026-01-01T00:00:00.000Z"
    )
    build_index(options, steps)
    return steps.steps


def heading_arrays(index: Path) -> dict[str, np.ndarray]:
    """The ``headings`` part of an index's derived files, every array copied out."""
    files, why = read_derived(index / ".lancedb", "chunks")
    assert files is not None, why
    return {name: np.array(array) for name, array in files.parts["headings"].arrays.items()}
