"""Embedding providers against a real HTTP server speaking the OpenAI protocol (tests/fakes)."""

from __future__ import annotations

import email.utils
import hashlib
import inspect
import math
import re
import socket
import time
from collections.abc import Iterator

import numpy as np
import pytest

from docs_mcp_core.embedding import (
    EmbeddingProvider,
    EmbedProgress,
    HashEmbeddingProvider,
    NoneEmbeddingProvider,
    OpenAIEmbeddingProvider,
    OpenAIRequestError,
    check_embedding_provider,
    create_embedding_provider,
    hash_to_unit_vector,
    parse_retry_after,
    to_embedding_input,
)
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.tokens import count_tokens
from tests.fakes.openai_server import FakeOpenAI, Fault, fake_vector

MODEL = "text-embedding-3-small"
DIMS = 8


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


class Sleeps:
    """Records requested backoff delays instead of waiting them out."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_provider(api: FakeOpenAI, **kwargs: object) -> OpenAIEmbeddingProvider:
    options: dict[str, object] = {
        "api_key": api.api_key,
        "base_url": api.base_url,
        "model": MODEL,
        "dimensions": DIMS,
        "retry_base_delay": 0.001,
        "retry_max_delay": 0.01,
        "retry_jitter": 0.0,
    }
    options.update(kwargs)
    return OpenAIEmbeddingProvider(**options)  # type: ignore[arg-type]


def expected(text: str, dims: int = DIMS) -> list[float]:
    """What the fake returns over base64: its float64 vector rounded to float32."""
    return np.asarray(fake_vector(text, dims), dtype=np.float32).astype(np.float64).tolist()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------------------------------
# basics


def test_embedding_input_format() -> None:
    assert (
        to_embedding_input("docs/a.md > Auth", "Use a key.")
        == "Context: docs/a.md > Auth\n\nContent:\nUse a key."
    )


@pytest.mark.integration
def test_providers_satisfy_the_protocol(api: FakeOpenAI) -> None:
    for provider in (NoneEmbeddingProvider(), HashEmbeddingProvider(), make_provider(api)):
        assert isinstance(provider, EmbeddingProvider)


def test_none_provider() -> None:
    provider = NoneEmbeddingProvider()
    assert (provider.name, provider.model, provider.dimensions) == ("none", "none", 0)
    assert provider.embed(["a", "b"]) == [[], []]
    assert (
        provider.config_fingerprint()
        == hashlib.sha256(b"dimensions=0\0model=none\0provider=none").hexdigest()
    )


def test_hash_provider_known_vector() -> None:
    # "ab" -> bytes 97, 98 -> bucket0 += 97, bucket1 -= 98 -> L2 normalise.
    norm = math.sqrt(97**2 + 98**2)
    assert hash_to_unit_vector("ab", 4) == [97 / norm, -98 / norm, 0.0, 0.0]
    # Bytes wrap around the buckets: "abcde" with 2 buckets -> [97 + 99 + 101, -(98 + 100)].
    norm = math.sqrt(297**2 + 198**2)
    assert hash_to_unit_vector("abcde", 2) == [297 / norm, -198 / norm]


def test_hash_provider_is_deterministic_and_matches_an_independent_implementation() -> None:
    provider = HashEmbeddingProvider()
    assert (provider.name, provider.model, provider.dimensions) == ("hash", "hash-v1", 256)
    texts = ["Context: a.md > Intro\n\nContent:\nhello", "ünïcödé ✓ 日本", "x" * 3000]
    first = provider.embed(texts)
    assert first == provider.embed(texts)
    for text, vector in zip(texts, first, strict=True):
        assert len(vector) == 256
        assert vector == pytest.approx(fake_vector(text, 256), abs=1e-15)
        assert math.isclose(sum(v * v for v in vector), 1.0, rel_tol=1e-12)
    assert first[0] != first[1]


def test_hash_provider_zero_vector_for_empty_text() -> None:
    assert HashEmbeddingProvider(dimensions=3).embed([""]) == [[0.0, 0.0, 0.0]]


def test_config_fingerprints() -> None:
    def fp(*pairs: str) -> str:
        return hashlib.sha256("\0".join(pairs).encode()).hexdigest()

    assert HashEmbeddingProvider(dimensions=64, model="h2").config_fingerprint() == fp(
        "dimensions=64", "model=h2", "provider=hash"
    )
    provider = OpenAIEmbeddingProvider(api_key="k", base_url="http://127.0.0.1:1/v1/", dimensions=256)
    assert provider.base_url == "http://127.0.0.1:1/v1"
    assert provider.config_fingerprint() == fp(
        "baseUrl=http://127.0.0.1:1/v1", "dimensions=256", "model=text-embedding-3-large", "provider=openai"
    )
    default = OpenAIEmbeddingProvider(api_key="k")
    assert default.base_url == "https://api.openai.com/v1"
    assert default.config_fingerprint() != provider.config_fingerprint()


def test_openai_defaults_and_costs() -> None:
    large = OpenAIEmbeddingProvider(api_key="k")
    assert (large.model, large.dimensions, large.cost_per_million_tokens) == (
        "text-embedding-3-large",
        3072,
        0.13,
    )
    small = OpenAIEmbeddingProvider(api_key="k", model="text-embedding-3-small")
    assert (small.dimensions, small.cost_per_million_tokens) == (1536, 0.02)
    ada = OpenAIEmbeddingProvider(api_key="k", model="text-embedding-ada-002")
    assert (ada.dimensions, ada.cost_per_million_tokens) == (1536, 0.1)
    assert OpenAIEmbeddingProvider(api_key="k", model="custom", dimensions=10).cost_per_million_tokens == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"api_key": " "}, "requires a non-empty api_key"),
        (
            {"api_key": "k", "concurrency": 0},
            "embedding concurrency must be an integer between 1 and 32 (got 0)",
        ),
        ({"api_key": "k", "max_retries": 11}, "embedding max retries must be an integer between 0 and 10"),
        ({"api_key": "k", "batch_size": 0}, "embedding batch size must be an integer between 1 and 2048"),
        ({"api_key": "k", "dimensions": 0}, "embedding dimensions must be an integer"),
    ],
)
def test_openai_rejects_bad_options(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(EmbeddingError, match=re.escape(message)):
        OpenAIEmbeddingProvider(**kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# factory


def test_factory_unknown_provider() -> None:
    with pytest.raises(EmbeddingError) as info:
        create_embedding_provider("cohere")
    assert (
        str(info.value)
        == "unsupported embedding provider 'cohere'. Expected one of: none, hash, local, openai"
    )


def test_factory_openai_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EmbeddingError) as info:
        create_embedding_provider("openai")
    assert str(info.value) == "openai embedding provider requires --embedding-api-key or OPENAI_API_KEY"


def test_factory_builds_each_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(create_embedding_provider("none"), NoneEmbeddingProvider)
    hashed = create_embedding_provider("hash", dimensions=32, model="h")
    assert isinstance(hashed, HashEmbeddingProvider)
    assert (hashed.dimensions, hashed.model) == (32, "h")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    openai_provider = create_embedding_provider(
        "openai", model=MODEL, dimensions=DIMS, base_url="http://x/v1", concurrency=2, batch_size=5
    )
    assert isinstance(openai_provider, OpenAIEmbeddingProvider)
    assert (openai_provider.dimensions, openai_provider.concurrency, openai_provider.batch_size) == (
        DIMS,
        2,
        5,
    )


@pytest.mark.integration
def test_factory_key_argument_reaches_the_server(api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = create_embedding_provider(
        "openai", api_key=api.api_key, base_url=api.base_url, model=MODEL, dimensions=DIMS
    )
    assert provider.embed(["x"]) == [expected("x")]
    assert api.requests_to("embeddings")[0].headers["authorization"] == f"Bearer {api.api_key}"


# --------------------------------------------------------------------------------------------------
# sync path


@pytest.mark.integration
def test_order_is_preserved_across_concurrent_batches(api: FakeOpenAI) -> None:
    texts = [f"text number {i}" for i in range(23)]
    provider = make_provider(api, batch_size=4, concurrency=3)
    assert provider.embed(texts) == [expected(t) for t in texts]
    requests = api.requests_to("embeddings")
    assert len(requests) == 6
    assert sorted(x for r in api.embedding_inputs for x in r) == sorted(texts)
    body = requests[0].json
    assert body["model"] == MODEL and body["dimensions"] == DIMS and body["encoding_format"] == "base64"


@pytest.mark.integration
def test_empty_input_makes_no_request(api: FakeOpenAI) -> None:
    assert make_provider(api).embed([]) == []
    assert api.requests == []


@pytest.mark.integration
def test_ada_002_is_sent_without_dimensions(api: FakeOpenAI) -> None:
    provider = make_provider(api, model="text-embedding-ada-002", dimensions=None)
    assert provider.embed(["a"]) == [expected("a", 1536)]
    assert "dimensions" not in api.requests_to("embeddings")[0].json


@pytest.mark.integration
def test_concurrency_is_real(api: FakeOpenAI) -> None:
    provider = make_provider(api, batch_size=1, concurrency=4)
    provider.embed(["warm-up"])  # client start-up outside the measured part
    # The server holds each request until 4 are in flight (bounded): a client that did not really
    # overlap its requests would show a smaller maximum.
    api.hold_until_in_flight(4, timeout=5.0)
    vectors = provider.embed([f"t{i}" for i in range(12)])
    assert vectors == [expected(f"t{i}") for i in range(12)]
    assert api.max_in_flight == 4  # and never more than the configured concurrency


@pytest.mark.integration
def test_concurrency_limit_is_respected(api: FakeOpenAI) -> None:
    api.hold_until_in_flight(2, timeout=5.0)
    provider = make_provider(api, batch_size=1, concurrency=2)
    provider.embed([f"t{i}" for i in range(8)])
    assert api.max_in_flight == 2


@pytest.mark.integration
def test_sync_progress_reports_every_batch(api: FakeOpenAI) -> None:
    events: list[EmbedProgress] = []
    provider = make_provider(api, batch_size=2, concurrency=1, on_progress=events.append)
    provider.embed(["a", "b", "c", "d", "e"])
    assert [(e.phase, e.done, e.total) for e in events] == [
        ("embedding", 2, 5),
        ("embedding", 4, 5),
        ("embedding", 5, 5),
    ]


@pytest.mark.integration
def test_requests_stay_under_the_token_budget(api: FakeOpenAI) -> None:
    texts = [f"chunk {i} " + "lorem ipsum dolor " * 10 for i in range(10)]
    per_text = max(count_tokens(t) for t in texts)
    provider = make_provider(api, batch_size=100, max_tokens_per_request=per_text * 3)
    assert provider.embed(texts) == [expected(t) for t in texts]
    sizes = [len(inputs) for inputs in api.embedding_inputs]
    assert len(sizes) > 1 and max(sizes) <= 3 and sum(sizes) == 10


# --------------------------------------------------------------------------------------------------
# retries


@pytest.mark.integration
def test_429_is_retried_and_order_kept(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=429), Fault(status=503))
    sleeps = Sleeps()
    provider = make_provider(api, batch_size=2, concurrency=1, sleep=sleeps)
    texts = ["a", "b", "c"]
    assert provider.embed(texts) == [expected(t) for t in texts]
    assert [r.status for r in api.requests_to("embeddings")] == [429, 503, 200, 200]
    assert len(sleeps.calls) == 2


@pytest.mark.integration
def test_backoff_is_exponential(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=500), Fault(status=500), Fault(status=500))
    sleeps = Sleeps()
    provider = make_provider(api, retry_base_delay=0.5, retry_max_delay=1.5, sleep=sleeps)
    provider.embed(["a"])
    assert sleeps.calls == [0.5, 1.0, 1.5]  # base * 2**attempt, capped at the max delay


@pytest.mark.integration
def test_backoff_jitter_stays_within_250ms(api: FakeOpenAI) -> None:
    api.script("embeddings", *[Fault(status=500)] * 3)
    sleeps = Sleeps()
    provider = make_provider(api, retry_base_delay=0.5, retry_max_delay=10.0, retry_jitter=0.25, sleep=sleeps)
    provider.embed(["a"])
    for attempt, delay in enumerate(sleeps.calls):
        assert 0.5 * 2**attempt <= delay <= 0.5 * 2**attempt + 0.25


@pytest.mark.integration
def test_retry_after_seconds_is_honoured(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=429, headers={"Retry-After": "2"}))
    sleeps = Sleeps()
    provider = make_provider(api, retry_base_delay=0.05, retry_max_delay=10.0, sleep=sleeps)
    assert provider.embed(["a"]) == [expected("a")]
    assert sleeps.calls == [2.0]


@pytest.mark.integration
def test_retry_after_http_date_is_honoured(api: FakeOpenAI) -> None:
    when = email.utils.formatdate(time.time() + 6, usegmt=True)
    api.script("embeddings", Fault(status=503, headers={"Retry-After": when}))
    sleeps = Sleeps()
    provider = make_provider(api, retry_base_delay=0.05, retry_max_delay=10.0, sleep=sleeps)
    provider.embed(["a"])
    assert len(sleeps.calls) == 1
    assert 4.0 <= sleeps.calls[0] <= 6.0


@pytest.mark.integration
def test_retry_after_is_capped_by_max_delay(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=429, headers={"Retry-After": "120"}))
    sleeps = Sleeps()
    make_provider(api, retry_base_delay=0.05, retry_max_delay=3.0, sleep=sleeps).embed(["a"])
    assert sleeps.calls == [3.0]


def test_parse_retry_after_forms() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"Retry-After": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": email.utils.formatdate(now + 30, usegmt=True)}, now=now) == 30
    assert parse_retry_after({"Retry-After": email.utils.formatdate(now - 30, usegmt=True)}, now=now) == 0
    assert parse_retry_after({"Retry-After": "soon"}) == 0
    assert parse_retry_after({}) == 0


@pytest.mark.integration
def test_real_backoff_sleep_is_short_with_tiny_delays(api: FakeOpenAI) -> None:
    provider = make_provider(api)  # real time.sleep, 1 ms base
    provider.embed(["warm-up"])
    api.script("embeddings", Fault(status=500))
    assert provider.embed(["a"]) == [expected("a")]
    requests = api.requests_to("embeddings")
    assert [r.status for r in requests] == [200, 500, 200]
    # the retry came after the tiny configured back-off, well before the default one would allow
    default_delay = inspect.signature(OpenAIEmbeddingProvider).parameters["retry_base_delay"].default
    assert requests[2].started - requests[1].started < default_delay


@pytest.mark.integration
def test_client_errors_are_not_retried(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=400, body={"error": {"message": "bad input"}}))
    sleeps = Sleeps()
    with pytest.raises(OpenAIRequestError) as info:
        make_provider(api, sleep=sleeps).embed(["a"])
    assert str(info.value).startswith("OpenAI embeddings request failed (400): ")
    assert "bad input" in str(info.value)
    assert info.value.status == 400 and not info.value.transient
    assert len(api.requests_to("embeddings")) == 1 and sleeps.calls == []


@pytest.mark.integration
def test_retries_are_bounded(api: FakeOpenAI) -> None:
    api.script("embeddings", *[Fault(status=502)] * 5)
    with pytest.raises(OpenAIRequestError, match=r"^OpenAI embeddings request failed \(502\)") as info:
        make_provider(api, max_retries=2, sleep=Sleeps()).embed(["a"])
    assert info.value.transient
    assert len(api.requests_to("embeddings")) == 3


@pytest.mark.integration
def test_timeouts_are_retried(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(kind="ok", delay=3.0))
    provider = make_provider(api, timeout=0.3, max_retries=1)
    assert provider.embed(["a"]) == [expected("a")]
    assert len(api.requests_to("embeddings")) == 2


@pytest.mark.integration
def test_timeout_error_message(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(kind="ok", delay=3.0))
    with pytest.raises(OpenAIRequestError, match=r"timed out after 0.3s") as info:
        make_provider(api, timeout=0.3, max_retries=0).embed(["a"])
    assert info.value.status is None and info.value.transient


@pytest.mark.integration
def test_dropped_connections_are_retried(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(kind="drop"))
    assert make_provider(api, max_retries=1).embed(["a"]) == [expected("a")]


@pytest.mark.integration
def test_unreachable_server_message() -> None:
    port = closed_port()
    provider = OpenAIEmbeddingProvider(
        api_key="k", base_url=f"http://127.0.0.1:{port}/v1", dimensions=DIMS, max_retries=0
    )
    with pytest.raises(OpenAIRequestError) as info:
        provider.embed(["a"])
    message = str(info.value)
    assert f"could not reach the OpenAI API at http://127.0.0.1:{port}/v1" in message
    assert "--embedding-base-url" in message


# --------------------------------------------------------------------------------------------------
# bad responses


@pytest.mark.integration
def test_malformed_json_is_reported(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(kind="malformed_json"))
    with pytest.raises(EmbeddingError, match="OpenAI embeddings response is not valid JSON"):
        make_provider(api).embed(["a"])


@pytest.mark.integration
def test_wrong_number_of_vectors_is_reported(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(kind="wrong_count"))
    with pytest.raises(EmbeddingError) as info:
        make_provider(api).embed(["a", "b", "c"])
    assert str(info.value) == "OpenAI embeddings response size mismatch: expected 3, got 2"


@pytest.mark.integration
def test_missing_data_array_is_reported(api: FakeOpenAI) -> None:
    api.script("embeddings", Fault(status=200, body={"object": "list"}))
    with pytest.raises(EmbeddingError) as info:
        make_provider(api).embed(["a"])
    assert str(info.value) == "OpenAI embeddings response missing data array"


@pytest.mark.integration
def test_wrong_dimensions_are_reported() -> None:
    message = "returned 16-dimensional vectors but 8 are configured"
    with FakeOpenAI(dimensions_override=16) as api, pytest.raises(EmbeddingError, match=message):
        make_provider(api).embed(["a"])


# --------------------------------------------------------------------------------------------------
# token window


@pytest.mark.integration
def test_over_long_input_is_cut_with_one_warning(api: FakeOpenAI) -> None:
    warnings: list[str] = []
    long_text = to_embedding_input("guides/big.md > Everything", "word " * 9000)
    api.script("embeddings", Fault(status=429))  # a retry must not repeat the warning
    provider = make_provider(api, on_warning=warnings.append, sleep=Sleeps())
    provider.embed([long_text, "short"])
    assert len(warnings) == 1
    assert warnings[0].startswith(
        f"Embedding input truncated from {count_tokens(long_text)} to 8191 tokens (source: guides/big.md > Everything)."
    )
    assert "max_chunk_size" in warnings[0]
    sent = api.embedding_inputs[-1]
    assert sent[1] == "short"
    assert count_tokens(sent[0]) <= 8191 and long_text.startswith(sent[0])
    assert count_tokens(sent[0]) >= 8180


@pytest.mark.integration
def test_inputs_within_the_window_are_sent_verbatim(api: FakeOpenAI) -> None:
    warnings: list[str] = []
    text = to_embedding_input("a.md", "word " * 8000)
    make_provider(api, on_warning=warnings.append).embed([text])
    assert warnings == []
    assert api.embedding_inputs == [[text]]


# --------------------------------------------------------------------------------------------------
# preflight


@pytest.mark.integration
def test_preflight_passes_and_sends_one_tiny_request(api: FakeOpenAI) -> None:
    check_embedding_provider(make_provider(api))
    assert [len(x) for x in api.embedding_inputs] == [1]


def test_preflight_of_offline_providers() -> None:
    check_embedding_provider(NoneEmbeddingProvider())
    check_embedding_provider(HashEmbeddingProvider())


@pytest.mark.integration
def test_preflight_bad_key() -> None:
    with FakeOpenAI(api_key="sk-right") as api:
        provider = OpenAIEmbeddingProvider(
            api_key="sk-wrong", base_url=api.base_url, model=MODEL, dimensions=DIMS
        )
        with pytest.raises(EmbeddingError) as info:
            check_embedding_provider(provider)
    message = str(info.value)
    assert "embedding provider 'openai'" in message and "failed its preflight check" in message
    assert "OpenAI rejected the API key (401 Unauthorized)" in message
    assert "Incorrect API key provided" in message
    assert "--embedding-api-key or OPENAI_API_KEY" in message
    assert len(api.requests_to("embeddings")) == 1  # 401 is not retried


@pytest.mark.integration
def test_preflight_unknown_model(api: FakeOpenAI) -> None:
    provider = make_provider(api, model="text-embedding-4-mega", dimensions=DIMS)
    with pytest.raises(EmbeddingError) as info:
        check_embedding_provider(provider)
    message = str(info.value)
    assert f"OpenAI embedding model 'text-embedding-4-mega' was not found at {api.base_url} (404)" in message
    assert "does not exist" in message and "--embedding-model" in message


@pytest.mark.integration
def test_preflight_dimension_mismatch() -> None:
    with FakeOpenAI(dimensions_override=16) as api, pytest.raises(EmbeddingError) as info:
        check_embedding_provider(make_provider(api))
    message = str(info.value)
    assert "dimension mismatch" in message and "--embedding-dimensions 16" in message
    assert "(model 'text-embedding-3-small', 8 dimensions)" in message


@pytest.mark.integration
def test_preflight_connection_failure() -> None:
    provider = OpenAIEmbeddingProvider(
        api_key="k", base_url=f"http://127.0.0.1:{closed_port()}/v1", dimensions=DIMS, max_retries=0
    )
    with pytest.raises(EmbeddingError, match="failed its preflight check: could not reach the OpenAI API"):
        check_embedding_provider(provider)


def test_preflight_catches_a_provider_with_wrong_dimensions() -> None:
    class Lying(HashEmbeddingProvider):
        def embed(self, texts):  # type: ignore[override]
            return [v[:-1] for v in super().embed(texts)]

    with pytest.raises(EmbeddingError, match="got 255-dimensional vectors but 256 are configured"):
        check_embedding_provider(Lying())
