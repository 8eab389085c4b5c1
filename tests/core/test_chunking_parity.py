"""Chunk parity with the original implementation on the shared sdk-docs corpus."""

from __future__ import annotations

import hashlib
from pathlib import Path

from docs_mcp_core.corpus import ManifestResolver, prepare_file
from docs_mcp_core.corpus_walk import walk_corpus
from docs_mcp_core.markdown import utf16_len
from tests.support.upstream_tsv import read_upstream_chunks


def test_sdk_docs_chunks_match_the_original(shared_dir: Path) -> None:
    docs = shared_dir / "corpora" / "sdk-docs"
    expected = read_upstream_chunks(shared_dir / "spec" / "sdk-docs.upstream-chunks.tsv")
    walked = walk_corpus(docs)
    files = walked.markdown
    assert not [f for f in walked.findings if f.severity == "error"]
    resolver = ManifestResolver(docs)
    got: list[tuple[str, ...]] = []
    for rel in files:
        for c in prepare_file(docs, rel, resolver).chunks():
            got.append(
                (
                    c.chunk_id,
                    c.filepath,
                    str(c.chunk_index),
                    str(c.heading_level),
                    str(utf16_len(c.content)),
                    hashlib.sha256(c.content.encode("utf-8")).hexdigest()[:12],
                    c.breadcrumb,
                )
            )
    assert len(got) == len(expected) == 10_969
    mismatches = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e]
    assert not mismatches, f"{len(mismatches)} chunks differ; first: {mismatches[:3]}"
