"""Print everything an index answers for a set of eval cases, so two versions of the code can be diffed.

Usage::

    uv run python scripts/ranking_snapshot.py --index-dir IDX --cases A.json [--cases B.json] > snap.txt

For every case of every case file, with its filters and (when it has some) without them, under
each ranking (``default``, ``original``) and each match retriever (``memory``, ``lancedb``), it
prints the first 10 hits (chunk id, score, snippet), the chunk ids of the second page (fetched
through ``next_cursor``) and the zero-result hint. Then ``get_doc`` with context 0 and 2 for
the expected chunk of every case and for a fixed sample of the index's chunk ids, the whole
document of a sample of files, and, when the index has vectors, the vector leg's own neighbours.

Scores are printed with ``repr`` (every bit of the float), so identical output means identical
rankings. The output is deterministic for a given index and code: it never contains a cursor (its
signature depends on the build's timestamp) or a timing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from docs_mcp_core.errors import SearchError
from docs_mcp_core.search import RANKINGS, SearchEngine, SearchOptions

RETRIEVERS = ("memory", "lancedb")
HITS = 10
CHUNK_SAMPLE_STEP = 97  # every 97th chunk id of chunks.json (sorted) gets a get_doc
# Queries that take the unusual paths: no hit, stop words only, one- and two-letter words, identifiers
# of every shape, punctuation, a NUL, more words than a query keeps, an unknown filter.
EXTRA_CASES: list[dict[str, Any]] = [
    {"query": "zzqxv wqpzx", "filters": {}},
    {"query": "zzqxv wqpzx", "filters": {"language": "python"}},
    {"query": "the of and to is", "filters": {}},
    {"query": "How do I paginate in Go?", "filters": {}},
    {"query": "a b c go v2 qr", "filters": {}},
    {"query": "s.Links.Upsert links.create_many createMany HTTPClient URLParser", "filters": {}},
    {"query": "retry-config: back_off (max 5) & jitter?!", "filters": {}},
    {"query": "stream\0chat completions", "filters": {}},
    {"query": " ".join(f"word{i}" for i in range(70)) + " retries", "filters": {}},
    {"query": "résumé naïve café", "filters": {}},
    {"query": "webhooks in the TypeScript SDK", "filters": {}},
    {"query": "webhooks", "filters": {"nosuchkey": "x"}},
    {"query": "   ", "filters": {}},
    {"query": "RateLimitExceededError doc_url", "filters": {"service": "mistral"}},
    {"query": "fine-tuning jobs", "filters": {"service": "dub", "language": "go"}},
]


def load_cases(paths: Iterable[Path]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in paths:
        for case in json.loads(path.read_text(encoding="utf-8")):
            cases.append({**case, "source": path.name})
    return cases


def extra_cases() -> list[dict[str, Any]]:
    return [{**case, "source": "extra"} for case in EXTRA_CASES]


def _search_lines(engine: SearchEngine, query: str, filters: dict[str, str]) -> Iterator[str]:
    try:
        result = engine.search(query, limit=HITS, filters=filters)
    except SearchError as exc:
        yield f"  error: {exc}"
        return
    for n, hit in enumerate(result.hits, start=1):
        yield f"  {n:>2} {hit.chunk_id} {hit.score!r}"
        yield f"     {hit.snippet}"
    if result.hint is not None:
        yield f"  hint: {json.dumps(result.hint, sort_keys=True, ensure_ascii=False)}"
    if result.next_cursor:
        page = engine.search(query, limit=HITS, filters=filters, cursor=result.next_cursor)
        yield "  page 2: " + " ".join(f"{h.chunk_id} {h.score!r}" for h in page.hits)


def search_section(index_dir: Path, cases: list[dict[str, Any]]) -> Iterator[str]:
    for ranking in RANKINGS:
        for retriever in RETRIEVERS:
            engine = SearchEngine.open(
                index_dir, options=SearchOptions(ranking=ranking, match_retriever=retriever)
            )
            try:
                yield f"== search ranking={ranking} retriever={retriever}"
                for case in [*cases, *extra_cases()]:
                    filters = {str(k): str(v) for k, v in (case.get("filters") or {}).items()}
                    variants = [filters, {}] if filters else [{}]
                    for active in variants:
                        label = json.dumps(active, sort_keys=True)
                        yield f"- [{case['source']}] {case['query']!r} filters={label}"
                        yield from _search_lines(engine, case["query"], active)
            finally:
                engine.close()


def chunk_sample(index_dir: Path) -> list[str]:
    chunks_file = index_dir / "chunks.json"
    if not chunks_file.is_file():
        return []
    data = json.loads(chunks_file.read_text(encoding="utf-8"))
    rows = data.get("chunks", data) if isinstance(data, dict) else data
    ids = sorted(str(row["chunk_id"]) for row in rows)
    return ids[::CHUNK_SAMPLE_STEP]


def document_section(index_dir: Path, cases: list[dict[str, Any]]) -> Iterator[str]:
    engine = SearchEngine.open(index_dir)
    try:
        ids = list(dict.fromkeys([*(str(c["expectedChunkId"]) for c in cases), *chunk_sample(index_dir)]))
        ids += ["no/such/file.md#nothing", "bad id with spaces"]
        for chunk_id in ids:
            for context in (0, 2):
                yield f"== get_doc {chunk_id!r} context={context}"
                try:
                    yield engine.get_doc(chunk_id, context)
                except SearchError as exc:
                    yield f"error: {exc}"
        files = sorted({i.split("#", 1)[0] for i in ids[: len(cases)]})[:: max(1, len(cases) // 10)]
        for filepath in files:
            yield f"== file {filepath!r}"
            try:  # the cases' files are not in every index (ten copies live under copy-<i>/)
                yield engine.file_content(filepath)
            except SearchError as exc:
                yield f"error: {exc}"
        if engine.vector_search_enabled:
            for case in cases:
                yield f"== vector neighbours {case['query']!r}"
                yield " ".join(engine.vector_neighbours(case["query"], limit=HITS))
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Print the ranked lists and documents an index answers for eval cases."
    )
    parser.add_argument("--index-dir", type=Path, required=True, help="folder written by docs-mcp build")
    parser.add_argument(
        "--cases", type=Path, action="append", required=True, help="eval case file (repeatable)"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("LANCEDB_LOG", "error")
    cases = load_cases(args.cases)
    out = sys.stdout
    for line in search_section(args.index_dir, cases):
        out.write(line + "\n")
    for line in document_section(args.index_dir, cases):
        out.write(line + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
