"""The hybrid test corpus: ``examples/docs`` plus a chunk only the vector leg can find.

The fake OpenAI API (:mod:`tests.fakes.openai_server`) answers every input with the ``hash``
algorithm's vector (bytes folded into ``i % dimensions`` buckets, L2-normalised).
:func:`vector_twin` exploits that to write a query that shares no word with a chunk yet has exactly
that chunk's vector, so the chunk can only be found by the vector leg.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from docs_mcp_core.build import BuildOptions, BuildSummary, EmbeddingOptions, build_index
from docs_mcp_core.embedding import to_embedding_input
from tests.fakes.openai_server import FakeOpenAI, fake_vector

MODEL = "text-embedding-3-small"
DIMS = 256
TWIN_FILE = "guides/harbour-log.md"
TWIN_CHUNK = "guides/harbour-log.md#harbour-log/tide-tables"
HARBOUR_LOG = """# Harbour log

Notes kept by the harbour office of the Tidewater marina.

## Tide tables

harbourmasters meticulously transcribe everything concerning tidewater observations
into leatherbound registers maintained alongside lighthousekeeping instruments;
meanwhile fishermen consult yesterdays handwritten tabulations before navigating
treacherous sandbanks surrounding northernmost breakwaters whenever southwesterly
windstorms threaten mooringlines throughout wintertime afternoons; occasionally
apprentices recalculate springtide predictions using astronomical almanacs borrowed
from neighbouring observatories, comparing barometric fluctuations against seasonal
averages painstakingly accumulated across generations of conscientious custodians
responsible for safeguarding seafaring communities

## Mooring fees

Boats longer than twelve metres pay the winter rate from November to March.
"""
LEXICAL_QUERY = "idempotency key"


# ── helpers shared with tests/server/test_hybrid_server.py ─────────────────────────────────────


# Lower-case letters and digits: the lexical legs can neither split such a word (no case change, no
# ``_ . : /``) nor stem it into a real one.
TWIN_ALPHABET = (*range(48, 58), *range(97, 123))


def _fill(total: int, slots: int) -> list[int] | None:
    """``slots`` byte values from :data:`TWIN_ALPHABET` that add up to ``total`` (None if impossible)."""
    if slots == 0:
        return [] if total == 0 else None
    if not 48 * slots <= total <= 122 * slots:
        return None
    target = total / slots
    for byte in sorted(TWIN_ALPHABET, key=lambda b: (abs(b - target), b)):
        rest = _fill(total - byte, slots - 1)
        if rest is not None:
            return [byte, *rest]
    return None


def _bucket(total: int, slots: int, interior: int) -> tuple[list[int], list[int]]:
    """Whitespace bytes (as few as possible, at most ``interior``) and alphabet bytes for one bucket."""
    for blanks in range(interior + 1):
        for newlines in range(blanks + 1):
            whitespace = [10] * newlines + [32] * (blanks - newlines)
            values = _fill(total - sum(whitespace), slots - blanks)
            if values is not None:
                return whitespace, values
    raise AssertionError(f"a bucket sum of {total} cannot be written with {TWIN_ALPHABET}")


def vector_twin(text: str, dimensions: int = DIMS) -> str:
    """A string with exactly ``text``'s fake vector that shares no word with it (or any English text).

    Vector component ``j`` is the signed sum of the bytes at positions ``i = j (mod dimensions)``
    (the sign depends only on ``j``'s parity), so any string of the same length and the same
    per-bucket byte sums has the same vector. The twin fills each bucket with lower-case letters and
    digits, using a space (or a newline) only where a bucket's sum is too small for letters alone, so
    for a text of long words its "words" are long runs of scrambled characters. It never starts or
    ends with whitespace (the engine strips queries).
    """
    data = text.encode("utf-8")
    n = len(data)
    assert n >= 3 * dimensions, "three or more bytes per bucket leave no gaps in the sums to hit"
    out = bytearray(n)
    for j in range(min(dimensions, n)):
        positions = list(range(j, n, dimensions))
        total = sum(data[p] for p in positions)
        inner = [p for p in positions if 0 < p < n - 1]
        whitespace, values = _bucket(total, len(positions), len(inner))
        spaced = inner[len(inner) - len(whitespace) :]
        for p, byte in zip(spaced, whitespace, strict=True):
            out[p] = byte
        letters = [p for p in positions if p not in spaced]
        # a fixed shuffle so that equal sums do not give runs of the same character
        order = sorted(range(len(values)), key=lambda k: (j * 7 + k * 3) % len(values))
        for p, k in zip(letters, order, strict=True):
            out[p] = values[k]
    twin = out.decode("ascii")
    assert twin == twin.strip() and fake_vector(twin, dimensions) == fake_vector(text, dimensions)
    return twin


def make_corpus(examples_docs: Path, dest: Path) -> Path:
    """``examples/docs`` plus the harbour log (the vector-only target), copied to ``dest``."""
    shutil.copytree(examples_docs, dest)
    (dest / TWIN_FILE).write_text(HARBOUR_LOG, encoding="utf-8")
    return dest


def build(docs: Path, out: Path, api: FakeOpenAI, **kw: Any) -> BuildSummary:
    """Build with the fake OpenAI API; ``kw`` overrides :class:`EmbeddingOptions` fields."""
    embedding: dict[str, Any] = {
        "provider": "openai",
        "model": MODEL,
        "dimensions": DIMS,
        "api_key": api.api_key,
        "base_url": api.base_url,
    }
    embedding.update(kw)
    return build_index(BuildOptions(docs_dir=docs, out_dir=out, embedding=EmbeddingOptions(**embedding)))


def chunks_of(out: Path) -> list[dict[str, Any]]:
    return json.loads((out / "chunks.json").read_text(encoding="utf-8"))


def twin_query(out: Path) -> str:
    """The vector twin of the harbour log's "Tide tables" chunk in the index at ``out``."""
    chunk = next(c for c in chunks_of(out) if c["chunk_id"] == TWIN_CHUNK)
    return vector_twin(to_embedding_input(chunk["breadcrumb"], chunk["content_text"]))
