"""Builds and searches with OpenAI embeddings: ``uv run python benchmarks/embeddings_build.py``.

Copies the corpus (``--docs``, default ``../shared/corpora/sdk-docs``) to a scratch folder (the
source is never modified) and starts the fake OpenAI server of ``tests/fakes`` on 127.0.0.1,
answering at once (its per-byte Python vector function is swapped for the numpy one of the ``hash``
provider, which gives bit-identical vectors, so the server's own CPU time does not pollute the
figures; and it answers with TCP_NODELAY, so that no request waits 40 ms for a delayed ACK).
Then, in this process (imports warmed up first):

1. a **lexical** build (``--embedding-provider none``) for reference;
2. a **full** build with ``openai`` (``--model``, default text-embedding-3-small, ``--dims`` 256),
   every chunk a cache miss, through the synchronous API path (``batch_api_threshold`` 0: the
   Batch API's polling would only measure its poll interval here); identical embedding inputs
   are sent once;
3. a **rebuild** of the same corpus: must make zero embedding requests (``N hits, 0 misses``);
4. a rebuild after editing **one** paragraph of one file: prints the chunks re-embedded and checks
   that they are exactly the chunks whose embedding input changed (comparing ``chunks.json``
   before and after) and exactly what the fake received after the preflight;
5. in-process search latency (p50/p95, nearest rank) over the dev cases (``--cases``), ``--passes``
   times, with the vector leg on (one embedding request per query to the fake) and, for
   comparison, lexical only.

Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LANCEDB_LOG", "error")

from docs_mcp_core.build import BuildOptions, BuildReporter, BuildSummary, EmbeddingOptions, build_index
from docs_mcp_core.embedding import PREFLIGHT_INPUT, hash_to_unit_vector, to_embedding_input
from docs_mcp_core.search import SearchEngine, SearchOptions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DOCS = REPO.parent / "shared" / "corpora" / "sdk-docs"
DEFAULT_CASES = REPO.parent / "shared" / "corpora" / "sdk-docs-dev-cases.json"


class Steps(BuildReporter):
    """Keeps the build's step lines (the ``embedding cache: ...`` line among them)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def step(self, message: str) -> None:
        self.lines.append(message)

    def cache_line(self) -> str:
        return next(
            (line for line in self.lines if line.startswith("embedding cache:")), "(no embedding cache line)"
        )


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))]


def chunk_inputs(out: Path) -> list[str]:
    chunks = json.loads((out / "chunks.json").read_text(encoding="utf-8"))
    return [to_embedding_input(c["breadcrumb"], c["content_text"]) for c in chunks]


def edit_one_paragraph(docs: Path) -> tuple[str, str]:
    """Append a sentence to the first prose line under the first ``## `` heading of a file."""
    candidates = sorted(docs.rglob("README.md"))
    for path in candidates:
        lines = path.read_text(encoding="utf-8").split("\n")
        seen_h2 = in_code = False
        for i, line in enumerate(lines):
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            if line.startswith("## "):
                seen_h2 = True
            elif seen_h2 and line[:1].isalpha():
                lines[i] = line + " This sentence was added by the embeddings benchmark."
                path.write_text("\n".join(lines), encoding="utf-8")
                return str(path.relative_to(docs)), line
    raise SystemExit("no file with prose under a second-level heading to edit")


def timed_build(label: str, options: BuildOptions) -> tuple[BuildSummary, Steps, float]:
    steps = Steps()
    started = time.perf_counter()
    summary = build_index(options, steps)
    elapsed = time.perf_counter() - started
    print(f"{label}: {elapsed:.2f}s, {summary.chunks:,} chunks, {steps.cache_line()}", flush=True)
    return summary, steps, elapsed


def search_latency(engine: SearchEngine, cases: list[dict[str, Any]], passes: int) -> tuple[float, float]:
    for case in cases[:10]:  # warm-up
        engine.search(case["query"], limit=min(5, case.get("limit", 5)), filters=case.get("filters") or {})
    samples: list[float] = []
    for _ in range(passes):
        for case in cases:
            started = time.perf_counter()
            engine.search(case["query"], limit=case.get("limit", 5), filters=case.get("filters") or {})
            samples.append((time.perf_counter() - started) * 1000)
    return percentile(samples, 0.5), percentile(samples, 0.95)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build and search with OpenAI embeddings against the local fake."
    )
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="corpus to copy and build")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="eval cases for the search timing")
    parser.add_argument("--model", default="text-embedding-3-small")
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the cases (default 3)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and print it")
    args = parser.parse_args(argv)

    from tests.fakes import openai_server
    from tests.fakes.openai_server import FakeOpenAI

    sample = "Context: a > b\n\nContent:\nbenchmark"
    assert openai_server.fake_vector(sample, 64) == hash_to_unit_vector(sample, 64)
    openai_server.fake_vector = hash_to_unit_vector  # same vectors, numpy speed
    # Answer in one TCP segment: with Nagle's algorithm on, the body written after the headers
    # waits for the client's delayed ACK, and every request would cost 40 ms that no real API has.
    openai_server._Handler.disable_nagle_algorithm = True  # pyright: ignore[reportPrivateUsage]

    import lancedb  # noqa: F401 - warm the import so that the first build does not pay for it
    import openai  # noqa: F401

    scratch = Path(tempfile.mkdtemp(prefix="embeddings-build-"))
    failures: list[str] = []
    try:
        docs = scratch / "docs"
        shutil.copytree(args.docs, docs)
        with FakeOpenAI() as api:
            embedded = BuildOptions(
                docs_dir=docs,
                out_dir=scratch / "out",
                embedding=EmbeddingOptions(
                    provider="openai",
                    model=args.model,
                    dimensions=args.dims,
                    api_key=api.api_key,
                    base_url=api.base_url,
                    batch_api_threshold=0,
                ),
            )
            print(
                f"corpus: {args.docs} -> {docs}; model {args.model}, {args.dims} dimensions; fake at {api.base_url}"
            )
            timed_build(
                "lexical build (no embeddings)", BuildOptions(docs_dir=docs, out_dir=scratch / "lexical")
            )

            summary, _, _ = timed_build("full build with embeddings", embedded)
            requests = len(api.requests_to("embeddings"))
            inputs = sum(len(batch) for batch in api.embedding_inputs)
            distinct = len(set(chunk_inputs(scratch / "out")))
            print(
                f"  {requests} embedding requests, {inputs:,} inputs (1 preflight + {distinct:,} distinct "
                f"embedding inputs among {summary.chunks:,} chunks: identical inputs are sent once)"
            )
            if inputs != distinct + 1:
                failures.append(f"full build sent {inputs} inputs, expected {distinct + 1}")

            before = len(api.requests_to("embeddings"))
            again, _, _ = timed_build("rebuild, nothing changed (warm cache)", embedded)
            calls = len(api.requests_to("embeddings")) - before
            print(f"  {calls} embedding requests")
            if calls or again.embedding_misses:
                failures.append(f"warm rebuild made {calls} requests and {again.embedding_misses} misses")

            old_inputs = set(chunk_inputs(scratch / "out"))
            edited, line = edit_one_paragraph(docs)
            print(f"edited {edited}: appended a sentence to {line[:60]!r}...")
            before = len(api.embedding_inputs)
            one, _, _ = timed_build("rebuild after one edited file", embedded)
            new_inputs = chunk_inputs(scratch / "out")
            changed = [text for text in new_inputs if text not in old_inputs]
            received = api.embedding_inputs[before:]
            sent = [text for batch in received[1:] for text in batch]
            print(
                f"  re-embedded {one.embedding_misses} chunks; chunks whose embedding input changed: "
                f"{len(changed)}; inputs the API received after the preflight: {len(sent)}"
            )
            if received[:1] != [[PREFLIGHT_INPUT]] or sent != changed or one.embedding_misses != len(changed):
                failures.append("the one-file rebuild did not send exactly the changed chunks")

            cases = json.loads(args.cases.read_text(encoding="utf-8")) if args.cases.is_file() else []
            if cases:
                import lancedb as ldb

                from docs_mcp_core.index.table import vector_index_type

                table = ldb.connect(str(scratch / "out" / ".lancedb")).open_table("chunks")
                kind = vector_index_type(table) or "none (exact search)"
                hybrid = SearchEngine.open(
                    scratch / "out",
                    options=SearchOptions(
                        query_embedding_api_key=api.api_key, query_embedding_base_url=api.base_url
                    ),
                )
                before = len(api.requests_to("embeddings"))
                p50, p95 = search_latency(hybrid, cases, args.passes)
                queries = len(api.requests_to("embeddings")) - before
                print(
                    f"search with the vector leg ({len(cases)} cases x {args.passes}, ANN index: {kind}): "
                    f"p50 {p50:.2f} ms, p95 {p95:.2f} ms ({queries} embedding requests)"
                )
                os.environ.pop("OPENAI_API_KEY", None)
                lexical = SearchEngine.open(scratch / "out")
                p50, p95 = search_latency(lexical, cases, args.passes)
                print(f"search, lexical legs only (same index): p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    finally:
        if args.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
