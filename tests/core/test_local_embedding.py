"""The ``local`` embedding provider: the shipped all-MiniLM-L6-v2 ONNX model, run for real.

Pins the shipped files (sha256) and the vectors recorded when the model was exported
(``scripts/export_local_model.py`` prints them), checks the inference contract (mean pooling, L2
normalisation, truncation at 256 word pieces, no dependence on batch composition), the factory and
query-time wiring, lazy loading, and a real build + search of the example corpus.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from docs_mcp_core.build import BuildOptions, BuildReporter, EmbeddingOptions, build_index
from docs_mcp_core.embedding import (
    PROVIDER_NAMES,
    EmbeddingProvider,
    EmbedProgress,
    HashEmbeddingProvider,
    check_embedding_provider,
    create_embedding_provider,
    to_embedding_input,
)
from docs_mcp_core.embedding.local import (
    DEFAULT_LOCAL_MODEL,
    LOCAL_MODELS,
    LocalEmbeddingProvider,
    LocalModel,
    resolve_local_model,
)
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.search import SearchEngine

MODEL_DIR = Path(__file__).resolve().parents[2] / "packages/core/src/docs_mcp_core/models/all-MiniLM-L6-v2"

# Recorded by scripts/export_local_model.py (onnxruntime 1.32.0, on the reference machine).
MODEL_SHA256 = "6cab9cf1765bf7e6c09b5ddabe4e8062876c1e8e9dfea100eb82e1ea7a840d47"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
SOURCE_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# The vectors of a few fixed texts, recorded with the shipped model (scripts/export_local_model.py
# prints them): unit vectors and the norms of the mean-pooled vectors before normalisation.
REFERENCE_FILE = Path(__file__).parent / "data" / "local-embedding-reference.json"
REFERENCE = [
    (row["text"], row["pooled_norm"], np.asarray(row["vector"], dtype=np.float32))
    for row in json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))["reference"]
]
# The int8 kernels of ONNX Runtime differ by CPU (AVX-512 VNNI, AVX-VNNI, AVX2 whose instructions
# saturate, arm64's dot products), so the same model gives slightly different vectors on different
# machines: on an AVX2-only CPU one pooled norm was 1.9 % off the recorded one, and the model's int8
# vectors are about 0.99 cosine to the original float model's. A pooling or normalisation mistake
# is far off: the [CLS] vector or max pooling instead of the mean gives cosine 0.32-0.79 to these
# vectors, a sum instead of a mean a norm twice as large or more.
MIN_COSINE = 0.9
NORM_TOLERANCE = 0.25  # relative


@pytest.fixture(scope="module")
def provider() -> LocalEmbeddingProvider:
    return LocalEmbeddingProvider()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ── the shipped files ──────────────────────────────────────────────────────────────────────────


def test_shipped_model_files_are_the_exported_ones() -> None:
    spec = LOCAL_MODELS[DEFAULT_LOCAL_MODEL]
    assert spec.directory() == MODEL_DIR
    assert _sha256(spec.onnx_path) == MODEL_SHA256
    assert spec.onnx_sha256 == MODEL_SHA256  # the pin that keys the embedding cache
    assert _sha256(spec.tokenizer_path) == TOKENIZER_SHA256
    assert sorted(p.name for p in MODEL_DIR.iterdir()) == [
        "LICENSE",
        "NOTICE",
        "model_int8.onnx",
        "tokenizer.json",
    ]


def test_license_and_notice_state_the_derivation() -> None:
    license_text = (MODEL_DIR / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0" in license_text
    notice = (MODEL_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "sentence-transformers/all-MiniLM-L6-v2" in notice
    assert "Apache License, Version 2.0" in notice
    assert "quantised to 8-bit" in notice
    assert SOURCE_SAFETENSORS_SHA256 in notice and TOKENIZER_SHA256 in notice


# ── the inference contract ─────────────────────────────────────────────────────────────────────


def test_vectors_match_the_values_recorded_at_export(provider: LocalEmbeddingProvider) -> None:
    texts = [text for text, _, _ in REFERENCE]
    pooled = provider.embed_array(texts, normalize=False)
    unit = provider.embed_array(texts)
    for (text, norm, recorded), raw, vector in zip(REFERENCE, pooled, unit, strict=True):
        assert float(np.linalg.norm(raw)) == pytest.approx(norm, rel=NORM_TOLERANCE), text
        assert float(vector @ recorded) >= MIN_COSINE, text
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)
        np.testing.assert_allclose(vector, raw / np.linalg.norm(raw), atol=1e-6)  # L2 of the mean
    # what the vectors are for: unrelated texts stay far apart (each is nearest its own record)
    similarity = unit @ np.vstack([recorded for _, _, recorded in REFERENCE]).T
    assert float(similarity[~np.eye(len(REFERENCE), dtype=bool)].max()) < 0.5


def test_embed_returns_unit_float_lists_in_input_order(provider: LocalEmbeddingProvider) -> None:
    texts = ["retry with backoff", "webhook signature", "retry with backoff"]
    vectors = provider.embed(texts)
    assert len(vectors) == 3 and all(len(v) == 384 for v in vectors)
    assert all(isinstance(x, float) for x in vectors[0])
    assert vectors[0] == vectors[2]
    assert vectors[0] != vectors[1]
    assert provider.embed([]) == []


def test_a_vector_depends_on_its_text_only(provider: LocalEmbeddingProvider) -> None:
    """Each input runs alone, so batch neighbours (and the thread running it) change nothing."""
    texts = [
        "How do I paginate through list results?",
        "word " * 400,
        "Context: sdks > payments > create\n\nContent:\nCreate a payment with an amount and a currency.",
        "x",
    ]
    together = provider.embed_array(texts)
    alone = np.vstack([provider.embed_array([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)
    two_threads = LocalEmbeddingProvider(threads=2).embed_array(list(reversed(texts)))
    np.testing.assert_allclose(two_threads[::-1], alone, atol=1e-6)


def test_inputs_are_truncated_at_256_word_pieces(provider: LocalEmbeddingProvider) -> None:
    from tokenizers import Tokenizer

    text = " ".join(f"token{i % 50} alpha" for i in range(300))
    pieces = Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))
    pieces.no_truncation()
    encoding = pieces.encode(text, add_special_tokens=False)
    assert len(encoding.ids) > 600

    def first(n: int) -> str:  # the text up to the end of its n-th word piece
        return text[: encoding.offsets[n - 1][1]]

    full, at_254, at_253, at_126 = provider.embed_array([text, first(254), first(253), first(126)])
    np.testing.assert_allclose(full, at_254, atol=1e-6)  # [CLS] + 254 pieces + [SEP] = 256
    assert float(full @ at_253) < 1 - 1e-6
    assert float(full @ at_126) < 0.999


def test_similar_meaning_ranks_above_shared_words(provider: LocalEmbeddingProvider) -> None:
    passages = [
        to_embedding_input(
            "Authentication > Revoking a leaked key", "If a secret key is exposed, revoke it."
        ),
        to_embedding_input("Pagination > Cursor pagination", "Pass the cursor from the previous page."),
        to_embedding_input("Retries > Backoff strategy", "Wait longer between attempts, with jitter."),
    ]
    matrix = provider.embed_array(passages)
    for query, expected in (
        ("my secret key leaked, how do I disable it", 0),
        ("walk through all results one page at a time", 1),
        ("wait longer between each attempt", 2),
    ):
        scores = matrix @ provider.embed_array([query])[0]
        assert int(np.argmax(scores)) == expected, (query, scores)


def test_progress_reports_count_up_with_an_eta() -> None:
    seen: list[EmbedProgress] = []
    single = LocalEmbeddingProvider(threads=1, on_progress=seen.append)
    single.embed([f"progress input number {i}" for i in range(130)])
    assert [p.done for p in seen] == [64, 128, 130]
    assert all(p.total == 130 and p.phase == "embedding" for p in seen)
    assert seen[-1].eta_seconds == 0
    assert seen[0].eta_seconds is not None and seen[0].eta_seconds > 0

    seen.clear()
    pooled = LocalEmbeddingProvider(threads=2, on_progress=seen.append)
    pooled.embed([f"progress input number {i}" for i in range(130)])
    done = [p.done for p in seen]
    assert done == sorted(done) and done[-1] == 130 and len(done) >= 2
    assert all(b - a >= 64 for a, b in zip([0, *done[:-2]], done[:-1], strict=True))


class _CountingProvider(LocalEmbeddingProvider):
    """The real provider, counting model runs."""

    runs = 0

    def _run(self, session: Any, token_ids: Sequence[int], normalize: bool) -> np.ndarray:
        type(self).runs += 1
        return super()._run(session, token_ids, normalize)


def test_a_repeated_query_runs_the_model_once() -> None:
    _CountingProvider.runs = 0
    counting = _CountingProvider()
    first = counting.embed(["how do I refund a payment"])
    again = counting.embed(["how do I refund a payment"])
    assert first == again and _CountingProvider.runs == 1
    counting.embed(["how do I refund a payment", "another"])  # batches always run
    assert _CountingProvider.runs == 3


class _HeldProvider(LocalEmbeddingProvider):
    """Counts model runs; the first one waits for ``release`` (bounded), with ``inside`` set."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0
        self.inside, self.release = threading.Event(), threading.Event()

    def _run(self, session: Any, token_ids: Sequence[int], normalize: bool) -> np.ndarray:
        self.runs += 1
        if self.runs == 1:
            self.inside.set()
            assert self.release.wait(30)
        return super()._run(session, token_ids, normalize)


def test_a_query_asked_on_two_threads_at_once_runs_the_model_once() -> None:
    # a search of an index with chunk vectors and heading vectors embeds its query on two threads
    held = _HeldProvider()
    answers: list[list[float]] = []

    def ask() -> None:
        answers.append(held.embed_query("how do I refund a payment").tolist())

    first, second = threading.Thread(target=ask), threading.Thread(target=ask)
    first.start()
    assert held.inside.wait(30)  # the first is running the model
    second.start()
    second.join(0.5)  # asked while the model runs, it waits for that run's answer
    assert second.is_alive() and held.runs == 1
    held.release.set()
    first.join(30)
    second.join(30)
    assert held.runs == 1 and len(answers) == 2 and answers[0] == answers[1]


def test_inputs_must_be_strings(provider: LocalEmbeddingProvider) -> None:
    with pytest.raises(EmbeddingError, match="local embedding input 1 is int, not a string"):
        provider.embed(["fine", 3])  # type: ignore[list-item]


# ── configuration, factory and loading ─────────────────────────────────────────────────────────


def test_factory_registers_local_and_ignores_api_options() -> None:
    assert "local" in PROVIDER_NAMES
    built = create_embedding_provider(
        "Local",
        model="all-MiniLM-L6-v2",
        dimensions=384,
        api_key="sk-ignored",
        base_url="http://127.0.0.1:1",
        batch_size=7,
        concurrency=1,
        max_retries=1,
        timeout=5.0,
        retry_base_delay=0.2,
        retry_max_delay=1.0,
        batch_api_threshold=0,
    )
    assert isinstance(built, LocalEmbeddingProvider) and isinstance(built, EmbeddingProvider)
    assert (built.name, built.model, built.dimensions, built.cost_per_million_tokens) == (
        "local",
        "all-MiniLM-L6-v2",
        384,
        0.0,
    )
    assert not built.loaded  # construction never loads the model
    check_embedding_provider(built)  # the build's preflight
    assert built.loaded


def test_model_names_and_dimensions_are_checked() -> None:
    assert resolve_local_model(None).name == DEFAULT_LOCAL_MODEL
    assert resolve_local_model("sentence-transformers/all-MiniLM-L6-v2").name == DEFAULT_LOCAL_MODEL
    with pytest.raises(EmbeddingError, match=r"'bge-small' is not shipped.*Available: all-MiniLM-L6-v2"):
        create_embedding_provider("local", model="bge-small")
    with pytest.raises(EmbeddingError, match=r"produces 384-dimensional vectors; --embedding-dimensions 256"):
        create_embedding_provider("local", dimensions=256)
    with pytest.raises(EmbeddingError, match="threads must be a positive integer"):
        LocalEmbeddingProvider(threads=0)


def test_fingerprint_is_stable_and_keyed_on_the_weights() -> None:
    first = LocalEmbeddingProvider().config_fingerprint()
    assert first == LocalEmbeddingProvider(threads=1).config_fingerprint()  # threads never change vectors
    assert first != HashEmbeddingProvider(dimensions=384).config_fingerprint()
    other = LocalEmbeddingProvider()
    other.spec = LocalModel(DEFAULT_LOCAL_MODEL, "all-MiniLM-L6-v2", "model_int8.onnx", "0" * 64, 384, 256)
    assert other.config_fingerprint() != first


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    broken = LocalEmbeddingProvider()
    spec = LocalModel("all-MiniLM-L6-v2", "nowhere", "model_int8.onnx", MODEL_SHA256, 384, 256)
    spec.directory = lambda: tmp_path  # type: ignore[method-assign]
    broken.spec = spec
    with pytest.raises(
        EmbeddingError, match=r"tokenizer\.json is missing; the docs-mcp-core installation is incomplete"
    ):
        broken.embed(["x"])
    (tmp_path / "tokenizer.json").write_bytes((MODEL_DIR / "tokenizer.json").read_bytes())
    with pytest.raises(EmbeddingError, match=r"model_int8\.onnx is missing"):
        broken.embed(["x"])
    (tmp_path / "model_int8.onnx").write_bytes(b"not an onnx model")
    with pytest.raises(EmbeddingError, match=r"cannot load the local embedding model .*model_int8\.onnx"):
        broken.embed(["x"])


@pytest.mark.integration
def test_importing_and_constructing_loads_no_runtime() -> None:
    """The server imports the provider module and builds the provider before any search."""
    code = (
        "import sys\n"
        "from docs_mcp_core.embedding import create_embedding_provider\n"
        "p = create_embedding_provider('local')\n"
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))\n"
        "p.embed(['x'])\n"
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))\n"
        "p.embed(['x', 'y'])\n"
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    # a query of ASCII text is split without the tokenizers library (a first answer sooner); many
    # texts at once (a build) use it
    assert out.stdout.splitlines() == ["[]", "['onnxruntime']", "['onnxruntime', 'tokenizers']"]


# ── build and search ───────────────────────────────────────────────────────────────────────────


class _Recorder(BuildReporter):
    def __init__(self) -> None:
        self.steps: list[str] = []
        self.phases: list[tuple[str, int, int]] = []

    def step(self, message: str) -> None:
        self.steps.append(message)

    def progress(self, phase: str, done: int, total: int) -> None:
        self.phases.append((phase, done, total))


@pytest.fixture(scope="module")
def local_build(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> tuple[Path, _Recorder]:
    out = tmp_path_factory.mktemp("local-build")
    reporter = _Recorder()
    build_index(
        BuildOptions(docs_dir=examples_docs, out_dir=out, embedding=EmbeddingOptions(provider="local")),
        reporter,
    )
    return out, reporter


def test_build_records_the_local_provider_and_embeds_every_chunk(local_build: tuple[Path, _Recorder]) -> None:
    out, reporter = local_build
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert meta["embedding"] == {"provider": "local", "model": "all-MiniLM-L6-v2", "dimensions": 384}
    total = meta["stats"]["total_chunks"]
    assert any(s == f"embedded {total} chunks via local in {s.split(' in ')[-1]}" for s in reporter.steps)
    embedding = [p for p in reporter.phases if p[0].startswith("embedding")]
    assert embedding[-1] == ("embedding", total, total)


@pytest.mark.integration
def test_rebuild_with_nothing_changed_embeds_nothing(
    local_build: tuple[Path, _Recorder], examples_docs: Path, tmp_path: Path
) -> None:
    out, _ = local_build
    copy = tmp_path / "out"
    subprocess.run(["cp", "-a", str(out), str(copy)], check=True, timeout=60)
    summary = build_index(
        BuildOptions(docs_dir=examples_docs, out_dir=copy, embedding=EmbeddingOptions(provider="local"))
    )
    assert summary.embedding_misses == 0
    assert summary.embedding_hits == summary.chunks


def test_search_embeds_queries_with_the_index_provider_lazily(local_build: tuple[Path, _Recorder]) -> None:
    out, _ = local_build
    engine = SearchEngine.open(out)
    try:
        embedder = engine.query_embedder
        assert isinstance(embedder, LocalEmbeddingProvider)
        assert engine.vector_search_enabled
        assert not embedder.loaded  # opening the index does not load the model
        hits = engine.search("my secret key leaked, how do I disable it", limit=3).hits
        assert embedder.loaded
        assert (
            hits[0].chunk_id == "guides/authentication.md#authentication/rotating-keys/revoking-a-leaked-key"
        )
        # the vector leg ranks by meaning (this chunk leads the next by 0.17 cosine, so a CPU whose
        # int8 kernels round differently still ranks it first)
        nearest = engine.vector_neighbours("my secret key leaked, how do I disable it", 5)
        assert nearest[0] == "guides/authentication.md#authentication/rotating-keys/revoking-a-leaked-key"
    finally:
        engine.close()


def test_paging_through_a_query_embeds_it_once(local_build: tuple[Path, _Recorder]) -> None:
    out, _ = local_build
    _CountingProvider.runs = 0
    engine = SearchEngine.open(out, query_embedder=_CountingProvider())
    try:
        page = engine.search("retry a failed request", limit=2)
        assert page.next_cursor is not None
        second = engine.search("retry a failed request", limit=2, cursor=page.next_cursor)
        assert {h.chunk_id for h in page.hits}.isdisjoint(h.chunk_id for h in second.hits)
        assert _CountingProvider.runs == 1
    finally:
        engine.close()


@pytest.mark.integration
def test_loading_the_model_writes_nothing_under_the_users_home(tmp_path: Path) -> None:
    """ONNX Runtime writes a device id and a database under ``~/.cache`` unless told not to; a
    server or build embedding with the shipped model leaves the home as it was (a fresh process,
    since the setting is read when ONNX Runtime is imported)."""
    home = tmp_path / "home"
    home.mkdir()
    script = "from docs_mcp_core.embedding.local import LocalEmbeddingProvider; LocalEmbeddingProvider().embed(['x'])"
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert list(home.rglob("*")) == []
