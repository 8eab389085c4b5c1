"""A rebuild reuses the heading vectors its previous index holds, and gets a fresh build's vectors.

The heading texts are embedded in batches of equal length (``LocalEmbeddingProvider.embed_short``),
and the int8 model's vector of a text depends slightly on its batch. A rebuild takes a batch's
vectors from the previous index only when that build ran exactly the same batch, so an unchanged
corpus runs the model on nothing, an edit runs only the batches it changed, and either way the
vectors are byte for byte those of a fresh build of the same corpus (real builds, the shipped model).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding.local import SHORT_BATCH_CELLS, LocalEmbeddingProvider
from tests.support.heading_builds import build_steps, heading_arrays

REUSING = "reusing the previous index's vectors"
PAGES = {
    "payouts": "# Payouts\n\n## list\n\nAll payouts.\n\n## get\n\nOne payout.\n",
    "webhooks": "# Webhooks\n\n## create\n\nA new webhook.\n\n## delete\n\nRemove a webhook.\n",
    "customers": "# Customers\n\n## list\n\nAll customers.\n\n## update\n\nChange a customer.\n",
}


def _write(docs: Path, pages: dict[str, str]) -> None:
    folder = docs / "sdks" / "acme"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


def _assert_same_vectors(a: Path, b: Path) -> None:
    first, second = heading_arrays(a), heading_arrays(b)
    assert first.keys() == second.keys()
    for name in first:
        assert np.array_equal(first[name], second[name]), name


@pytest.fixture(scope="module")
def provider() -> LocalEmbeddingProvider:
    return LocalEmbeddingProvider()


def test_embed_short_takes_only_the_batches_an_earlier_call_ran_alike(
    provider: LocalEmbeddingProvider,
) -> None:
    # one word piece per word: four texts of length 3 (two batches of two), two of length 4 (one)
    texts = ["apple", "table", "house", "water", "red apple", "big house"]
    marker = np.full((len(texts), provider.dimensions), 7.0, dtype=np.float32)  # stands for stored vectors
    assert (provider.embed_short(texts, batch=2, previous=(texts, marker)) == 7.0).all()
    edited = ["apple", "table", "house", "green", "red apple", "big house"]  # the second batch changed
    mixed = provider.embed_short(edited, batch=2, previous=(texts, marker))
    fresh = provider.embed_short(edited, batch=2)
    for row in (0, 1, 4, 5):
        assert (mixed[row] == 7.0).all()
    for row in (2, 3):
        assert np.array_equal(mixed[row], fresh[row])
        assert np.linalg.norm(mixed[row]) == pytest.approx(1.0, abs=1e-5)


def test_embed_short_with_the_true_earlier_vectors_gives_a_fresh_runs_vectors(
    provider: LocalEmbeddingProvider,
) -> None:
    texts = ["apple", "table", "house", "water", "red apple", "big house", "list payouts > get"]
    first = provider.embed_short(texts, batch=2)
    edited = ["table", "house", "water", "green", "red apple", "small house", "list payouts > get"]
    assert np.array_equal(
        provider.embed_short(edited, batch=2, previous=(texts, first)), provider.embed_short(edited, batch=2)
    )


def test_long_heading_texts_run_in_batches_of_bounded_attention(provider: LocalEmbeddingProvider) -> None:
    """Texts at the model's 256 word pieces ran 256 to a batch: the attention of such a batch holds
    hundreds of megabytes per layer, and a 4 MB page of 5,000 long headings took 3.5 GB to build.
    A batch holds at most SHORT_BATCH_CELLS texts times word pieces squared (4 such texts); the
    heading texts of every evaluation corpus (48 word pieces at most) run as they ran before."""
    assert SHORT_BATCH_CELLS // 32**2 == 256 and SHORT_BATCH_CELLS // 256**2 == 4
    texts = [f"section {i} " + "payout " * 300 for i in range(12)]  # each cut at 256 word pieces
    marker = np.full((len(texts), provider.dimensions), 7.0, dtype=np.float32)
    edited = [*texts[:5], "changed " * 300, *texts[6:]]  # in the second batch of four
    mixed = provider.embed_short(edited, previous=(texts, marker))
    assert (mixed[:4] == 7.0).all() and (mixed[8:] == 7.0).all()  # the earlier run's batches
    assert not (mixed[4:8] == 7.0).any()


def test_a_rebuild_reuses_the_vectors_and_gets_those_of_a_fresh_build(tmp_path: Path) -> None:
    docs, out, fresh = tmp_path / "docs", tmp_path / "out", tmp_path / "fresh"
    _write(docs, PAGES)
    assert not any(REUSING in s for s in build_steps(docs, out))
    assert any(REUSING in s for s in build_steps(docs, out))  # unchanged: every batch is the previous one's
    build_steps(docs, fresh)
    _assert_same_vectors(out, fresh)

    # an edit: a new section and a page removed; the rebuild equals a fresh build of the edited corpus
    edited = {**PAGES, "payouts": PAGES["payouts"] + "\n## cancel\n\nStop a payout.\n"}
    del edited["customers"]
    (docs / "sdks" / "acme" / "customers.md").unlink()
    _write(docs, edited)
    assert any(REUSING in s for s in build_steps(docs, out))
    build_steps(docs, tmp_path / "fresh-edited")
    _assert_same_vectors(out, tmp_path / "fresh-edited")


def test_a_lexical_index_rebuilt_with_heading_vectors_embeds_them_all(tmp_path: Path) -> None:
    docs, out = tmp_path / "docs", tmp_path / "out"
    _write(docs, PAGES)
    build_steps(docs, out, heading_vectors=False)
    assert not any(REUSING in s for s in build_steps(docs, out))  # its derived files hold no heading vectors
    build_steps(docs, tmp_path / "fresh")
    _assert_same_vectors(out, tmp_path / "fresh")


def test_a_rebuild_never_copies_damaged_heading_vectors(tmp_path: Path) -> None:
    """Bytes of the previous index's heading vectors changed after its build (sizes and header
    intact): the rebuild sees they are no longer unit vectors and embeds every text afresh."""
    docs, out = tmp_path / "docs", tmp_path / "out"
    _write(docs, PAGES)
    build_steps(docs, out)
    vectors = heading_arrays(out)["paths"]
    derived = out / ".lancedb" / "chunks.derived"
    data = bytearray(derived.read_bytes())
    at = bytes(data).index(vectors.tobytes())  # the first path's vector, where the file holds it
    data[at + 2 : at + 4] = b"\xff\x7f"  # one float's high bytes: a length far from 1
    derived.write_bytes(bytes(data))
    assert not any(REUSING in s for s in build_steps(docs, out))
    build_steps(docs, tmp_path / "fresh")
    _assert_same_vectors(out, tmp_path / "fresh")
