"""Embeddings end to end against a real HTTP stand-in for the OpenAI API (``tests/fakes``).

Build: ``docs-mcp build --embedding-provider openai`` writes a ``vector`` column and the
``embedding`` metadata; a missing key, a rejected key, an unknown model or a dimension mismatch stop
the build before anything on disk changes; a rebuild of the same corpus calls the API zero times
and one edited file sends exactly its changed chunks. Index: flat below ``ANN_INDEX_MIN_ROWS``, an
ANN index (queried with the measured parameters) above. Search: the query is embedded with the
index's provider and model, a vector-only hit is provably found, and an API outage costs one
warning and a lexical answer, then a cool-down with no API calls, then recovery.

The corpus has a chunk only the vector leg can find (:mod:`tests.support.hybrid_corpus`).
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.embedding import PREFLIGHT_INPUT, to_embedding_input
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.index import table as index_table
from docs_mcp_core.search import SearchEngine, SearchOptions, vector_leg
from tests.fakes.openai_server import FakeOpenAI, Fault, fake_vector
from tests.support.file_digests import file_digests
from tests.support.hybrid_corpus import (
    DIMS,
    HARBOUR_LOG,
    LEXICAL_QUERY,
    MODEL,
    TWIN_CHUNK,
    TWIN_FILE,
    build,
    chunks_of,
    make_corpus,
    twin_query,
)
from tests.support.programs import run_docs_mcp

pytestmark = pytest.mark.integration  # starts processes or listens on ports


def embedding_count(api: FakeOpenAI) -> int:
    return len(api.requests_to("embeddings"))


# ── fixtures ───────────────────────────────────────────────────────────────────────────────────


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def open_engine(index: Path, api: FakeOpenAI, warnings: list[str], **options: Any) -> SearchEngine:
    opts = SearchOptions(
        query_embedding_api_key=api.api_key, query_embedding_base_url=api.base_url, **options
    )
    return SearchEngine.open(index, options=opts, on_warning=warnings.append)


def lexical_ids(index: Path, query: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The answer with no vector leg at all (no key), for comparison."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    engine = SearchEngine.open(index)
    assert not engine.vector_search_enabled
    return [h.chunk_id for h in engine.search(query, limit=10).hits]


# ── build ──────────────────────────────────────────────────────────────────────────────────────


def test_cli_build_with_openai_then_cached_rebuild_then_one_edit(
    tmp_path: Path, examples_docs: Path, api: FakeOpenAI
) -> None:
    import lancedb
    import pyarrow as pa

    docs = make_corpus(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    flags = [
        "build", "--docs-dir", docs, "--out", out, "--embedding-provider", "openai",
        "--embedding-base-url", api.base_url, "--embedding-api-key", api.api_key,
        "--embedding-model", MODEL, "--embedding-dimensions", str(DIMS),
    ]  # fmt: skip

    first = run_docs_mcp(*flags)
    assert first.returncode == 0, first.stderr
    chunks = chunks_of(out)
    assert f"embedding cache: 0 hits, {len(chunks)} misses" in first.stderr
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert meta["embedding"] == {"provider": "openai", "model": MODEL, "dimensions": DIMS}
    table = lancedb.connect(str(out / ".lancedb")).open_table("chunks")
    assert table.schema.field("vector").type == pa.list_(pa.float32(), DIMS)
    rows = {r["chunk_id"]: r["vector"] for r in table.to_arrow().select(["chunk_id", "vector"]).to_pylist()}
    assert len(rows) == len(chunks)
    sample = chunks[7]
    expected = fake_vector(to_embedding_input(sample["breadcrumb"], sample["content_text"]), DIMS)
    assert rows[sample["chunk_id"]] == pytest.approx(expected, abs=1e-6)
    sent = [text for request in api.embedding_inputs for text in request]
    assert sent[0] == PREFLIGHT_INPUT and len(sent) == len(chunks) + 1
    assert all(
        r.json["model"] == MODEL and r.json["dimensions"] == DIMS for r in api.requests_to("embeddings")
    )

    # the same corpus again: not one request, not even the preflight
    before = embedding_count(api)
    second = run_docs_mcp(*flags)
    assert second.returncode == 0, second.stderr
    assert f"embedding cache: {len(chunks)} hits, 0 misses" in second.stderr
    assert embedding_count(api) == before

    # one edited section: exactly the chunks whose embedding input changed are sent
    retries = docs / "guides" / "retries.md"
    retries.write_text(
        retries.read_text(encoding="utf-8").replace(
            "Networks fail, and so do servers.", "Networks fail, and so do servers, and so do harbour cranes."
        ),
        encoding="utf-8",
    )
    old_inputs = {to_embedding_input(c["breadcrumb"], c["content_text"]) for c in chunks}
    third = run_docs_mcp(*flags)
    assert third.returncode == 0, third.stderr
    new_chunks = chunks_of(out)
    changed = [
        text
        for c in new_chunks
        if (text := to_embedding_input(c["breadcrumb"], c["content_text"])) not in old_inputs
    ]
    assert len(changed) == 1 and "harbour cranes" in changed[0]
    assert sum(c["filepath"] == "guides/retries.md" for c in new_chunks) > 1  # the others were not re-sent
    assert api.embedding_inputs[before:] == [[PREFLIGHT_INPUT], changed]
    assert f"embedding cache: {len(new_chunks) - 1} hits, 1 misses" in third.stderr


def test_cli_reports_a_rejected_key_and_keeps_the_old_index(
    tmp_path: Path, examples_docs: Path, hybrid_index: Path, api: FakeOpenAI
) -> None:
    docs = make_corpus(examples_docs, tmp_path / "docs")
    out = tmp_path / "live"
    shutil.copytree(hybrid_index, out)
    before = file_digests(out)
    done = run_docs_mcp(
        "build", "--docs-dir", docs, "--out", out, "--embedding-provider", "openai",
        "--embedding-base-url", api.base_url, "--embedding-api-key", "sk-revoked",
        "--embedding-model", "text-embedding-3-large",
    )  # fmt: skip
    assert done.returncode == 1
    assert "401" in done.stderr and "--embedding-api-key" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert file_digests(out) == before
    assert embedding_count(api) == 1  # the preflight only


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing key", "requires --embedding-api-key or OPENAI_API_KEY"),
        ("rejected key", "rejected the API key (401 Unauthorized)"),
        ("unknown model", "embedding model 'text-embedding-4-tiny' was not found"),
        (
            "dimension mismatch",
            "128-dimensional vectors but 256 are configured; set --embedding-dimensions 128",
        ),
    ],
)
def test_failed_preflight_stops_the_build_before_anything_is_written(
    case: str, message: str, tmp_path: Path, examples_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = make_corpus(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    with FakeOpenAI() as good:
        build(docs, out, good, model="text-embedding-3-large")  # the live index, other model
    before = file_digests(out)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI(dimensions_override=128 if case == "dimension mismatch" else None) as api:
        kw: dict[str, Any] = {}
        if case == "missing key":
            kw["api_key"] = None
        if case == "rejected key":
            kw["api_key"] = "sk-revoked"
        if case == "unknown model":
            kw["model"] = "text-embedding-4-tiny"
        with pytest.raises(EmbeddingError) as info:
            build(docs, out, api, **kw)
        assert message in str(info.value)
        assert embedding_count(api) == (0 if case == "missing key" else 1)
    assert file_digests(out) == before


def test_rejected_key_with_a_warm_cache_fails_only_when_something_must_be_embedded(
    tmp_path: Path, examples_docs: Path, api: FakeOpenAI
) -> None:
    """With a matching cache the preflight waits for the first miss; it still comes before any write."""
    docs = make_corpus(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    summary = build(docs, out, api)
    requests = embedding_count(api)

    # nothing changed: a revoked key is never even used
    again = build(docs, out, api, api_key="sk-revoked")
    assert (again.embedding_hits, again.embedding_misses) == (summary.chunks, 0)
    assert embedding_count(api) == requests

    # one edited file: the revoked key is caught by the preflight, and the live index is untouched
    before = file_digests(out)
    (docs / TWIN_FILE).write_text(HARBOUR_LOG.replace("twelve", "fifteen"), encoding="utf-8")
    with pytest.raises(EmbeddingError, match=r"401"):
        build(docs, out, api, api_key="sk-revoked")
    assert file_digests(out) == before
    assert api.embedding_inputs[requests:] == [[PREFLIGHT_INPUT]]


# ── vectors in the index: flat, or an ANN index above the threshold ─────────────────────────────


def test_small_index_is_searched_exactly_and_a_large_one_gets_an_ann_index(
    tmp_path: Path, examples_docs: Path, monkeypatch: pytest.MonkeyPatch, hybrid_index: Path
) -> None:
    import lancedb

    def vector_indexes(out: Path) -> list[str]:
        table = lancedb.connect(str(out / ".lancedb")).open_table("chunks")
        return [i.index_type for i in table.list_indices() if list(i.columns) == ["vector"]]

    assert vector_indexes(hybrid_index) == []
    rows = len(chunks_of(hybrid_index))

    assert not index_table.ann_index_wanted(rows, DIMS)
    assert not index_table.ann_index_wanted(4_999, 256) and index_table.ann_index_wanted(5_000, 256)
    assert index_table.ann_index_wanted(1_000, 1536) and not index_table.ann_index_wanted(999, 3072)

    monkeypatch.setattr(index_table, "ANN_INDEX_MIN_ROWS", 100)
    monkeypatch.setattr(index_table, "ANN_INDEX_FLOOR_ROWS", 100)
    docs = make_corpus(examples_docs, tmp_path / "docs")
    with FakeOpenAI() as api:
        build(docs, tmp_path / "ann", api)
        assert vector_indexes(tmp_path / "ann") == ["IvfFlat"]
        query = twin_query(tmp_path / "ann")
        warnings: list[str] = []
        exact = open_engine(hybrid_index, api, warnings, ranking="original")
        approx = open_engine(tmp_path / "ann", api, warnings, ranking="original")
        # the same vector-only ranking, tuned ANN query against exact search
        flat_ids = [h.chunk_id for h in exact.search(query, limit=10, filters={"language": "go"}).hits]
        ann_ids = [h.chunk_id for h in approx.search(query, limit=10, filters={"language": "go"}).hits]
        assert warnings == []
    assert len(flat_ids) == 10 and ann_ids == flat_ids


@pytest.mark.parametrize("kind", ["IvfPq", "IvfHnswSq", "IvfFlat"])
def test_tuned_queries_on_other_index_types_match_exact_search(tmp_path: Path, kind: str) -> None:
    """Indexes this build does not write (the original writes IVF_PQ) are queried with working parameters."""
    import lancedb
    import numpy as np
    import pyarrow as pa
    from lancedb.index import HnswSq, IvfFlat, IvfPq
    from lancedb.query import LanceVectorQueryBuilder

    from docs_mcp_core.embedding import hash_to_unit_vector
    from docs_mcp_core.index.table import tune_vector_query, vector_index_type

    texts = [
        f"Context: doc {i} > Section {i % 7}\n\nContent:\nparagraph {i * 7919 % 1000} of {i}"
        for i in range(400)
    ]
    vectors = np.asarray([hash_to_unit_vector(t, 64) for t in texts], dtype=np.float32)
    data = pa.table(
        {
            "id": pa.array(range(len(texts)), pa.int64()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 64),
        }
    )
    table = lancedb.connect(str(tmp_path)).create_table("chunks", data)
    configs = {
        "IvfPq": IvfPq(distance_type="l2", num_partitions=4, num_sub_vectors=8),
        "IvfHnswSq": HnswSq(distance_type="l2"),
        "IvfFlat": IvfFlat(distance_type="l2", num_partitions=20),
    }
    table.create_index("vector", config=configs[kind])
    assert vector_index_type(table) == kind
    for q in vectors[:20]:
        flat = table.search(q, vector_column_name="vector")
        assert isinstance(flat, LanceVectorQueryBuilder)
        exact = flat.bypass_vector_index().limit(10).to_arrow()
        tuned = (
            tune_vector_query(table.search(q, vector_column_name="vector"), kind, 210).limit(210).to_arrow()
        )
        assert tuned.column("id").to_pylist()[:10] == exact.column("id").to_pylist()


# ── search: the vector leg ─────────────────────────────────────────────────────────────────────


def test_twin_query_has_no_lexical_match(hybrid_index: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    query = twin_query(hybrid_index)
    assert not set(query.lower().split()) & set(HARBOUR_LOG.lower().split())
    assert lexical_ids(hybrid_index, query, monkeypatch) == []


@pytest.mark.parametrize("ranking", ["default", "original"])
def test_hybrid_search_finds_a_vector_only_hit(hybrid_index: Path, api: FakeOpenAI, ranking: str) -> None:
    warnings: list[str] = []
    engine = open_engine(hybrid_index, api, warnings, ranking=ranking)
    assert engine.vector_search_enabled
    query = twin_query(hybrid_index)
    hits = engine.search(query, limit=5).hits
    assert hits[0].chunk_id == TWIN_CHUNK
    # the query was embedded once, with the index's own model and dimensions
    assert api.embedding_inputs == [[query]]
    request = api.requests_to("embeddings")[0]
    assert (request.json["model"], request.json["dimensions"]) == (MODEL, DIMS)
    assert request.headers["authorization"] == f"Bearer {api.api_key}"
    assert warnings == []


def test_lexical_hits_stay_on_top_with_the_vector_leg_on(
    hybrid_index: Path, api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    lexical = lexical_ids(hybrid_index, LEXICAL_QUERY, monkeypatch)
    hybrid = [h.chunk_id for h in open_engine(hybrid_index, api, []).search(LEXICAL_QUERY, limit=10).hits]
    assert lexical and hybrid[0] == lexical[0]
    assert embedding_count(api) == 1


def test_key_comes_from_openai_api_key_when_no_option_is_given(
    hybrid_index: Path, api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", api.api_key)
    engine = SearchEngine.open(hybrid_index, options=SearchOptions(query_embedding_base_url=api.base_url))
    assert engine.search(twin_query(hybrid_index), limit=1).hits[0].chunk_id == TWIN_CHUNK
    assert embedding_count(api) == 1


def test_without_a_key_search_is_lexical_and_says_so_once(
    hybrid_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    warnings: list[str] = []
    engine = SearchEngine.open(hybrid_index, on_warning=warnings.append)
    assert not engine.vector_search_enabled
    for _ in range(3):
        assert engine.search(LEXICAL_QUERY).hits
    assert len(warnings) == 1
    assert "openai/text-embedding-3-small" in warnings[0] and "--query-embedding-api-key" in warnings[0]
    assert "lexically" in warnings[0]


RETRY_AFTER_S = 30  # what the 429 outage asks for; a search must not wait for it
OUTAGES = {
    "503 twice (retried once)": ([Fault(status=503), Fault(status=503)], 2, "503"),
    "401 (not retried)": ([Fault(status=401)], 1, "401"),
    "429 twice (retried once)": (
        [Fault(status=429, headers={"Retry-After": str(RETRY_AFTER_S)}), Fault(status=429)],
        2,
        "429",
    ),
    "connection dropped twice": ([Fault(kind="drop"), Fault(kind="drop")], 2, "could not reach"),
    "a NaN vector (not retried)": (
        [Fault(status=200, body={"data": [{"index": 0, "embedding": [float("nan")] * DIMS}]})],
        1,
        "NaN or infinite",
    ),
}


class FakeClock:
    """Stands in for the ``time`` module of the vector leg: ``monotonic()`` moves only when the test
    says, so the cool-down is measured in steps the test takes, not in the machine's speed."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now


@pytest.mark.parametrize("outage", list(OUTAGES))
def test_outage_answers_lexically_warns_once_rests_then_recovers(
    outage: str, hybrid_index: Path, api: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults, attempts, detail = OUTAGES[outage]
    lexical = lexical_ids(hybrid_index, LEXICAL_QUERY, monkeypatch)
    warnings: list[str] = []
    cooldown = 60.0
    clock = FakeClock()
    monkeypatch.setattr(vector_leg, "time", clock)
    engine = open_engine(hybrid_index, api, warnings, vector_cooldown_seconds=cooldown)
    api.script("embeddings", *faults)

    # the failing search still answers, from the lexical legs alone, and one warning is logged
    started = time.monotonic()
    assert [h.chunk_id for h in engine.search(LEXICAL_QUERY, limit=10).hits] == lexical
    # one retry after a short back-off, never after the Retry-After the 429 asked for
    assert time.monotonic() - started < RETRY_AFTER_S
    assert embedding_count(api) == attempts
    assert len(warnings) == 1
    assert warnings[0].startswith("vector search degraded to lexical-only") and detail in warnings[0]

    # during the cool-down, up to its last moment: no request at all, same lexical answer, no new warning
    query = twin_query(hybrid_index)
    assert engine.search(LEXICAL_QUERY, limit=10).hits[0].chunk_id == lexical[0]
    assert engine.search(query, limit=5).hits == []
    clock.now += cooldown - 0.5
    assert engine.search(query, limit=5).hits == []
    assert embedding_count(api) == attempts and len(warnings) == 1

    # after the cool-down the next search tries the vector leg again, and it recovers
    clock.now += 1.0
    hits = engine.search(query, limit=5).hits
    assert embedding_count(api) == attempts + 1
    assert hits and hits[0].chunk_id == TWIN_CHUNK
    assert len(warnings) == 1
    # and stays up
    assert engine.search(query, limit=5).hits[0].chunk_id == TWIN_CHUNK
    assert embedding_count(api) == attempts + 2


def test_a_slow_api_costs_one_query_the_short_timeout_not_every_query(
    hybrid_index: Path, api: FakeOpenAI
) -> None:
    warnings: list[str] = []
    engine = open_engine(hybrid_index, api, warnings, query_embedding_timeout_seconds=0.3)
    slow = 30.0  # the API's answer time: a search must give up long before it
    api.script("embeddings", Fault(kind="ok", delay=slow), Fault(kind="ok", delay=slow))
    started = time.monotonic()
    assert engine.search(LEXICAL_QUERY).hits
    first = time.monotonic() - started
    assert first < slow  # two 0.3 s attempts and a short back-off, never the slow answer
    assert len(warnings) == 1 and "timed out after 0.3s" in warnings[0]
    started = time.monotonic()
    for _ in range(5):
        assert engine.search(LEXICAL_QUERY).hits
    assert time.monotonic() - started < first  # five searches in the cool-down cost less than one timeout
    assert embedding_count(api) == 2


def test_queries_arriving_together_at_an_outage_do_not_each_wait_out_the_api(
    hybrid_index: Path, api: FakeOpenAI
) -> None:
    # two threads embed queries: the ten queued behind the first two each called the API in turn
    # once a thread was free (twenty at a 1 s timeout: 23.6 s for the last), although the first
    # failure had already started the cool-down
    warnings: list[str] = []
    engine = open_engine(hybrid_index, api, warnings, query_embedding_timeout_seconds=0.3)
    api.script("embeddings", *[Fault(kind="ok", delay=30.0)] * 24)
    answered: list[bool] = []
    threads = [
        threading.Thread(target=lambda: answered.append(bool(engine.search(LEXICAL_QUERY).hits)))
        for _ in range(12)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert answered == [True] * 12
    assert embedding_count(api) <= 4  # the two queries in flight, each tried twice
    assert len(warnings) == 1 and "timed out after 0.3s" in warnings[0]


def test_default_query_timeout_is_short() -> None:
    assert SearchOptions().query_embedding_timeout_seconds == 5.0
    assert SearchOptions().vector_cooldown_seconds == 60.0


def test_unreachable_api_is_an_outage_too(hybrid_index: Path, api: FakeOpenAI) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    warnings: list[str] = []
    engine = SearchEngine.open(
        hybrid_index,
        options=SearchOptions(
            query_embedding_api_key="sk-test", query_embedding_base_url=f"http://127.0.0.1:{port}/v1"
        ),
        on_warning=warnings.append,
    )
    for _ in range(3):
        assert engine.search(LEXICAL_QUERY).hits
    assert len(warnings) == 1 and "could not reach the OpenAI API" in warnings[0]


def test_while_one_query_probes_a_recovering_api_the_others_do_not_wait(
    hybrid_index: Path, api: FakeOpenAI
) -> None:
    warnings: list[str] = []
    engine = open_engine(hybrid_index, api, warnings, vector_cooldown_seconds=0.0)
    api.script("embeddings", Fault(status=401))
    assert engine.search(LEXICAL_QUERY).hits  # the outage starts: one warning, no rest (cool-down 0)
    assert len(warnings) == 1 and embedding_count(api) == 1

    query = twin_query(hybrid_index)
    probe: list[Any] = []
    api.hold(timeout=30)  # the probe's request waits in the fake API until released
    thread = threading.Thread(target=lambda: probe.extend(engine.search(query, limit=3).hits))
    thread.start()
    try:
        assert api.wait_for(lambda: embedding_count(api) == 2, timeout=10)  # the probe is in flight
        other: list[Any] = []
        searcher = threading.Thread(target=lambda: other.extend(engine.search(LEXICAL_QUERY).hits))
        searcher.start()
        searcher.join(timeout=20)
        # answered lexically while the probe is still held: it neither waited for it nor asked itself
        assert not searcher.is_alive() and other
        assert thread.is_alive() and embedding_count(api) == 2
    finally:
        api.release()
        thread.join(timeout=15)
    assert not thread.is_alive()
    assert probe and probe[0].chunk_id == TWIN_CHUNK  # the probe succeeded: the outage is over
    assert engine.search(query, limit=3).hits[0].chunk_id == TWIN_CHUNK
    assert embedding_count(api) == 3 and len(warnings) == 1


def test_ivf_probes_grow_as_the_prefilter_narrows() -> None:
    from docs_mcp_core.index.table import ANN_QUERY_NPROBES, ivf_probes

    assert ivf_probes(1.0) == ivf_probes(0.1) == ANN_QUERY_NPROBES
    assert ivf_probes(0.05) == 2 * ANN_QUERY_NPROBES
    assert ivf_probes(0.01) == 10 * ANN_QUERY_NPROBES
    assert ivf_probes(0.0) >= 1_000_000  # nothing passes: LanceDB stops at the partition count


def test_ivf_query_under_a_narrow_prefilter_matches_exact_search(tmp_path: Path) -> None:
    """A filter keeping 1 % of the rows: the probes grow with it, so the neighbours are still found."""
    import lancedb
    import numpy as np
    import pyarrow as pa
    from lancedb.index import IvfFlat
    from lancedb.query import LanceVectorQueryBuilder

    from docs_mcp_core.index.table import tune_vector_query

    rng = np.random.default_rng(7)
    rows, dims = 4_000, 32
    centres = rng.normal(size=(64, dims))
    vectors = (centres[rng.integers(0, 64, rows)] + rng.normal(scale=0.3, size=(rows, dims))).astype(
        np.float32
    )
    group = np.where(np.arange(rows) % 100 == 0, "rare", "common")
    data = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "grp": pa.array(group.tolist()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), dims),
        }
    )
    table = lancedb.connect(str(tmp_path)).create_table("chunks", data)
    table.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=64))
    where = "grp = 'rare'"
    share = float(np.mean(group == "rare"))
    assert share == 0.01
    found = 0
    for q in vectors[1:200:10]:
        flat = table.search(q)
        assert isinstance(flat, LanceVectorQueryBuilder)
        exact = flat.bypass_vector_index().where(where).limit(10).to_arrow()
        tuned = tune_vector_query(table.search(q).where(where), "IvfFlat", 210, share).limit(210).to_arrow()
        want = exact.column("id").to_pylist()
        got = tuned.column("id").to_pylist()[:10]
        assert len(want) == 10
        found += len(set(got) & set(want))
    assert found / (20 * 10) >= 0.95
