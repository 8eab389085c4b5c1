"""A folder a build was stopped in while it swapped a new index in, for the tests of what reads it.

A local publish renames, in order, the live table aside, the new table in, then ``chunks.json`` and
``metadata.json`` (docs/builds.md). :func:`build_two_indexes` builds the previous index (of
``examples/docs``) and a new one (of one page), and :func:`stopped` lays out the previous index with
a publish of the new one stopped after some of those renames.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from docs_mcp_core.build import BuildOptions, build_index

# the renames of a local publish, in order (docs/builds.md)
SWAP = [
    (".lancedb", ".lancedb.old"),
    (".lancedb.tmp", ".lancedb"),
    (".lancedb.work/chunks.json.tmp", "chunks.json"),
    ("metadata.json.tmp", "metadata.json"),
]
NEW_HIT = "quokkas.md#zephyr-quokkas/feeding-zephyr-quokkas"


def build_two_indexes(root: Path, examples_docs: Path, new_page: str) -> tuple[Path, Path]:
    """The index of ``examples/docs`` (the previous one) and of ``new_page`` alone (the new one)."""
    docs = root / "docs"
    docs.mkdir()
    (docs / "quokkas.md").write_text(new_page, encoding="utf-8")
    build_index(BuildOptions(docs_dir=examples_docs, out_dir=root / "previous"))
    build_index(BuildOptions(docs_dir=docs, out_dir=root / "new"))
    return root / "previous", root / "new"


def stopped(two_indexes: tuple[Path, Path], out: Path, renames: int) -> Path:
    """The previous index in ``out``, with a publish of the new one stopped after ``renames`` renames."""
    previous, new = two_indexes
    shutil.copytree(previous, out)
    (out / ".lancedb.work").mkdir()
    shutil.copy(new / "chunks.json", out / ".lancedb.work" / "chunks.json.tmp")
    shutil.copy(new / "metadata.json", out / "metadata.json.tmp")
    shutil.copytree(new / ".lancedb", out / ".lancedb.tmp")
    for source, target in SWAP[:renames]:
        os.replace(out / source, out / target)
    return out
