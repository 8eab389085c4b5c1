"""Embedding-side costs of a build: ``uv run python benchmarks/embeddings.py [--chunks N] [--dims D]``.

Measures, on synthetic chunk texts of realistic size (about 1.5 KB each):

* token counting (the offline cl100k_base encoding) in MB/s;
* the ``hash`` provider in chunks/s;
* saving and loading the embedding cache (LanceDB table) for N vectors of D dimensions, and the
  on-disk size;
* the ``openai`` provider against the local fake server (tests/fakes/openai_server.py) with a fixed
  per-request latency, at concurrency 1 and 4, to show that batches really overlap.

Nothing here touches the network.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from docs_mcp_core.embedding import HashEmbeddingProvider, OpenAIEmbeddingProvider, to_embedding_input
from docs_mcp_core.embedding.cache import embed_with_cache, load_embedding_cache, save_embedding_cache
from docs_mcp_core.tokens import count_tokens, get_encoding

WORDS = [
    *("client", "request", "response", "retry", "backoff", "token", "pagination", "webhook"),
    *("error", "handler", "config", "install", "sdk", "python", "typescript", "go", "java"),
    *("auth", "oauth", "bearer", "api", "key", "timeout", "stream", "upload"),
]


def synthetic_chunks(count: int, seed: int = 7) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    items: list[tuple[str, str]] = []
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(120, 300)))
        items.append((f"docs/f{i // 10}.md#s{i}", to_embedding_input(f"docs/f{i // 10}.md > S{i}", body)))
    return items


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure embedding, token counting and cache costs.")
    parser.add_argument("--chunks", type=int, default=5000, help="number of synthetic chunks (default 5000)")
    parser.add_argument(
        "--dims", type=int, default=1536, help="vector size for the cache test (default 1536)"
    )
    parser.add_argument("--latency", type=float, default=0.05, help="fake API latency per request, s")
    args = parser.parse_args(argv)
    os.environ.setdefault("LANCEDB_LOG", "error")

    items = synthetic_chunks(args.chunks)
    texts = [t for _, t in items]
    megabytes = sum(len(t.encode()) for t in texts) / 1_000_000

    start = time.perf_counter()
    get_encoding()
    load = time.perf_counter() - start
    start = time.perf_counter()
    tokens = sum(count_tokens(t) for t in texts)
    took = time.perf_counter() - start
    print(f"chunks:            {len(texts)} ({megabytes:.2f} MB, {tokens} tokens)")
    print(f"encoding load:     {load * 1000:.0f} ms")
    print(f"token counting:    {megabytes / took:.1f} MB/s")

    start = time.perf_counter()
    HashEmbeddingProvider().embed(texts)
    took = time.perf_counter() - start
    print(f"hash provider:     {len(texts) / took:,.0f} chunks/s")

    provider = HashEmbeddingProvider(dimensions=args.dims)
    outcome = embed_with_cache(provider, items, None)
    with tempfile.TemporaryDirectory() as tmp:
        parent = Path(tmp)
        start = time.perf_counter()
        warning = save_embedding_cache(parent, provider.config_fingerprint(), outcome.entries)
        saved = time.perf_counter() - start
        assert warning is None, warning
        start = time.perf_counter()
        loaded = load_embedding_cache(parent, provider.config_fingerprint())
        took = time.perf_counter() - start
        assert len(loaded.entries) == len(items)
        size = dir_size(parent / ".embedding-cache") / 1_000_000
    print(f"cache save:        {saved:.2f} s ({len(items)} x {args.dims} dims, {size:.1f} MB on disk)")
    print(f"cache load:        {took:.2f} s")

    from tests.fakes.openai_server import FakeOpenAI

    sample = texts[: min(len(texts), 32 * 16)]
    with FakeOpenAI(latency=args.latency) as api:
        for concurrency in (1, 4):
            client = OpenAIEmbeddingProvider(
                api_key=api.api_key,
                base_url=api.base_url,
                model="text-embedding-3-small",
                dimensions=256,
                batch_size=32,
                concurrency=concurrency,
            )
            client.embed(sample[:1])  # connection + client start-up outside the measurement
            start = time.perf_counter()
            client.embed(sample)
            took = time.perf_counter() - start
            print(
                f"openai (fake, {args.latency * 1000:.0f} ms/request) concurrency {concurrency}: "
                f"{len(sample)} chunks in {took:.2f} s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
