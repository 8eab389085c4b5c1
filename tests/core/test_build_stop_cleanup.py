"""A build stopped (Ctrl-C, SIGTERM) while its heading texts are being embedded cleans up without
waiting for that embedding: the thread may run for minutes, or wait for something the stopped
thread holds, and the clean-up must end all the same, with the previous index as it was."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.build import heading_step as heading_step_module
from docs_mcp_core.build.output import Output
from docs_mcp_core.search.heading_leg import HeadingTexts, HeadingVocabulary
from tests.support.file_digests import file_digests

BOUND_SECONDS = 60  # a clean-up that waited for the embedding would wait until the test lets it go


def test_a_stopped_build_does_not_wait_for_the_heading_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Lighthouse\n\nThe lighthouse keeper.\n", encoding="utf-8")
    out = tmp_path / "idx"
    build_index(BuildOptions(docs_dir=docs, out_dir=out, heading_vectors=True))
    before = file_digests(out)

    embedding = threading.Event()
    let_go = threading.Event()

    def blocked_embedding(
        texts: HeadingTexts, embedder: object, previous: object = None
    ) -> HeadingVocabulary:
        embedding.set()
        let_go.wait(BOUND_SECONDS)  # stands for an embedding that cannot end soon
        raise RuntimeError("let go by the test")

    def stopped(self: Output, chunks: int, rep: object) -> None:
        assert embedding.wait(BOUND_SECONDS), "the heading embedding never started"
        raise KeyboardInterrupt

    monkeypatch.setattr(heading_step_module, "embed_heading_texts", blocked_embedding)
    monkeypatch.setattr(Output, "verify", stopped)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            build_index(BuildOptions(docs_dir=docs, out_dir=out, heading_vectors=True))
        except BaseException as exc:  # noqa: BLE001 - the stop is what this thread is for
            raised.append(exc)

    builder = threading.Thread(target=run, daemon=True)
    builder.start()
    try:
        builder.join(BOUND_SECONDS / 2)
        assert not builder.is_alive(), "the stopped build's clean-up waited for the heading embedding"
    finally:
        let_go.set()
        builder.join(BOUND_SECONDS)
    assert [type(exc) for exc in raised] == [KeyboardInterrupt]
    assert file_digests(out) == before
    assert sorted(p.name for p in out.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
