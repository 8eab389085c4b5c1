"""Hostile answers from an OpenAI-compatible embeddings API: a build fails naming what the API got
wrong and leaves the previous index as it was; nothing reaches the index that would poison it; a
request never outlasts its timeout nor reads more than its vectors can take, and a search given
such an answer is answered lexically in bounded time.

A real HTTP server speaks the OpenAI protocol (``tests/fakes``) and is scripted to answer with NaN
or infinite vectors, JSON nested too deeply to parse, batch results that are not UTF-8, answers
trickled a byte at a time (in the body or in the headers), a body of 64 MB and a gzip bomb.
"""

from __future__ import annotations

import base64
import gzip
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from docs_mcp_core.embedding import OpenAIEmbeddingProvider
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.search import SearchEngine, SearchOptions
from tests.fakes.openai_server import FakeOpenAI, Fault
from tests.support.file_digests import file_digests
from tests.support.hybrid_corpus import DIMS, LEXICAL_QUERY, MODEL, build, make_corpus

pytestmark = pytest.mark.integration  # listens on ports

DEEP_JSON = b"[" * 100_000 + b"]" * 100_000  # json.loads raises RecursionError on it


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def answer(*vectors: object) -> Fault:
    """A 200 answer carrying ``vectors`` as its ``embedding`` fields, in input order."""
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return Fault(status=200, body={"object": "list", "data": data, "model": MODEL})


def base64_vector(*values: float) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def provider(api: FakeOpenAI, **kwargs: object) -> OpenAIEmbeddingProvider:
    options: dict[str, object] = {
        "api_key": api.api_key,
        "base_url": api.base_url,
        "model": MODEL,
        "dimensions": 4,
        "max_retries": 0,
    }
    options.update(kwargs)
    return OpenAIEmbeddingProvider(**options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "vector",
    [
        pytest.param([0.5, float("nan"), 0.5, 0.5], id="NaN as JSON"),
        pytest.param([0.5, float("-inf"), 0.5, 0.5], id="infinity as JSON"),
        pytest.param(base64_vector(0.5, 0.5, float("inf"), 0.5), id="infinity as base64"),
        pytest.param(base64_vector(float("nan"), 0.5, 0.5, 0.5), id="NaN as base64"),
    ],
)
def test_a_vector_with_nan_or_infinity_is_refused(api: FakeOpenAI, vector: object) -> None:
    api.script("embeddings", answer([0.5] * 4, vector))
    with pytest.raises(EmbeddingError, match="holds a vector with NaN or infinite values"):
        provider(api).embed(["a", "b"])


def test_json_nested_too_deeply_is_not_valid_json(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=200, body=DEEP_JSON))
    with pytest.raises(EmbeddingError, match="response is not valid JSON"):
        provider(api).embed(["a"])


def test_a_rejected_key_with_a_deeply_nested_error_body_is_still_named(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=401, body=DEEP_JSON))
    with pytest.raises(EmbeddingError, match=r"rejected the API key \(401 Unauthorized\)"):
        provider(api).embed(["a"])


@pytest.mark.parametrize(
    "content",
    [pytest.param(b'{"custom_id": "req-0", \xff\xfe}\n', id="not UTF-8"), pytest.param(DEEP_JSON, id="deep")],
)
def test_unreadable_batch_results_are_named(content: bytes) -> None:
    with FakeOpenAI(batch_polls_to_complete=1) as api:
        api.script("files.content", Fault(status=200, body=content))
        with pytest.raises(EmbeddingError, match="batch results contain an unreadable line"):
            provider(api, batch_api_threshold=2, batch_poll_intervals=(0.0,), sleep=lambda _: None).embed(
                ["a", "b"]
            )


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        pytest.param(Fault(kind="huge", size=64 << 20), "it exceeded 1,050,880 bytes", id="64 MB"),
        pytest.param(
            Fault(status=200, body=gzip.compress(b" " * (64 << 20)), headers={"Content-Encoding": "gzip"}),
            r"it came compressed \(gzip\)",
            id="gzip",
        ),
    ],
)
def test_batch_results_larger_than_their_vectors_or_compressed_are_refused(fault: Fault, reason: str) -> None:
    with FakeOpenAI(batch_polls_to_complete=1) as api:
        api.script("files.content", fault)
        embedder = provider(api, batch_api_threshold=2, batch_poll_intervals=(0.0,), sleep=lambda _: None)
        with pytest.raises(EmbeddingError, match=f"sent an unusable answer: {reason}"):
            embedder.embed(["a", "b"])  # 2 x (32 x 4 + 1,024) + 1 MiB
        assert len(api.requests_to("files.content")) == 1


def test_a_build_given_nan_vectors_fails_and_keeps_the_previous_index(
    tmp_path: Path, examples_docs: Path, api: FakeOpenAI
) -> None:
    docs = make_corpus(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    build(docs, out, api)
    before = file_digests(out)
    (docs / "new-page.md").write_text("# New page\n\nText the cache has not seen.\n", encoding="utf-8")
    nan = [float("nan")] * DIMS
    api.script("embeddings", Fault(kind="ok"), answer(nan))  # the preflight, then the new page's chunk
    with pytest.raises(EmbeddingError, match="holds a vector with NaN or infinite values") as info:
        build(docs, out, api)
    assert api.base_url in str(info.value)
    assert file_digests(out) == before


TRICKLES = {
    # 400 bytes at one per 50 ms: 20 s to the end, where an unbounded client would wait
    "body": Fault(kind="trickle", size=400, interval=0.05),
    "headers": Fault(kind="trickle_headers", size=400, interval=0.05),
}


@pytest.mark.parametrize("where", list(TRICKLES))
def test_a_trickled_answer_times_out_within_the_request_timeout(api: FakeOpenAI, where: str) -> None:
    api.script("embeddings", TRICKLES[where])
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"timed out after 0\.5s"):
        provider(api, timeout=0.5).embed(["a"])
    assert time.monotonic() - started < 5.0


def test_an_answer_far_larger_than_its_vectors_is_cut_off_and_not_retried(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(kind="huge", size=64 << 20))
    with pytest.raises(EmbeddingError, match=r"sent an unusable answer: it exceeded 1,049,728 bytes"):
        provider(api, max_retries=3).embed(["a"])  # 1 x (32 x 4 + 1,024) + 1 MiB
    assert len(api.requests_to("embeddings")) == 1


def test_a_compressed_answer_is_refused_before_it_is_inflated(api: FakeOpenAI) -> None:
    # 64 KB of gzip inflate to 64 MB (800 KB took a server from 198 MB to 1.75 GB): the bound on the
    # bytes received does not bound what they inflate to, so an answer must come uncompressed
    bomb = gzip.compress(b" " * (64 << 20), compresslevel=9)
    api.script("embeddings", Fault(status=200, body=bomb, headers={"Content-Encoding": "gzip"}))
    with pytest.raises(EmbeddingError, match=r"unusable answer: it came compressed \(gzip\)"):
        provider(api, max_retries=3).embed(["a"])
    (request,) = api.requests_to("embeddings")
    assert request.headers["accept-encoding"] == "identity"
    assert provider(api).embed(["a"])  # an uncompressed answer, as asked for, is read as ever


def test_a_search_given_a_trickled_answer_is_lexical_and_bounded(hybrid_index: Path, api: FakeOpenAI) -> None:
    warnings: list[str] = []
    options = SearchOptions(
        query_embedding_api_key=api.api_key,
        query_embedding_base_url=api.base_url,
        query_embedding_timeout_seconds=0.3,
    )
    api.script("embeddings", TRICKLES["body"], TRICKLES["headers"])
    engine = SearchEngine.open(hybrid_index, options=options, on_warning=warnings.append)
    try:
        started = time.monotonic()
        assert engine.search(LEXICAL_QUERY).hits
        assert time.monotonic() - started < 5.0  # two 0.3 s attempts and a back-off of at most 1 s
    finally:
        engine.close()
    assert len(warnings) == 1 and "timed out after 0.3s" in warnings[0]
