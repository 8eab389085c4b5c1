"""Validate every evaluation set under ``evals/`` against the index it is meant for.

    uv run python scripts/evalsets/check_cases.py \\
        --index sdk-docs=/tmp/ev-lex --index fastify=/tmp/ev-fastify \\
        --dev-cases ../shared/corpora/sdk-docs-dev-cases.json \\
        --dev-cases ../shared/corpora/sdk-docs-dev2-cases.json

The sets of corpus ``NAME`` are the ``*.json`` files in ``evals/NAME/``; ``--index NAME=DIR`` names
the folder that ``docs-mcp build --out`` wrote for that corpus (only its ``chunks.json`` and
``metadata.json`` are read; the search engine is not run). Every case must

* parse with the eval harness's own reader and have a known category and a unique name;
* name an expected chunk that exists in the index;
* use only filter keys and values from the index's taxonomy, and the expected chunk must survive
  its own filters (a ``language`` filter without ``scope`` still admits ``scope: global-guide``
  chunks, as search does);
* have no byte-identical twin of the expected chunk that the filters let through (the case would
  be ambiguous);
* ask a query that no other case of any set asks and no development case asks (case and
  whitespace ignored).

Each full set ``x.json`` must come with ``x.tune.json`` and ``x.check.json`` that are exactly its
deterministic split (``split_cases.py``). Every problem is printed with the file, the case and what
to change; the exit code is 1 when there is any.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalset_common import (
    CATEGORIES,
    EVALS_DIR,
    Chunk,
    EvalSetError,
    admitted,
    category_counts,
    fail,
    half_paths,
    is_half,
    load_chunks,
    normalise_query,
    read_cases,
    split_halves,
)

from docs_mcp_eval.cases import parse_cases
from docs_mcp_eval.errors import CaseFileError


@dataclass
class Corpus:
    name: str
    chunks: dict[str, Chunk]
    twins: dict[str, list[Chunk]]
    taxonomy: dict[str, set[str]]


def load_corpus(name: str, index_dir: Path) -> Corpus:
    chunks = load_chunks(index_dir)
    by_content: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_content[chunk.content].append(chunk)
    metadata_path = index_dir / "metadata.json"
    try:
        metadata = json.loads(metadata_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalSetError(f"{metadata_path}: cannot read ({exc})") from None
    taxonomy = {
        str(key): {str(v) for v in (spec or {}).get("values", [])}
        for key, spec in (metadata.get("taxonomy") or {}).items()
    }
    twins = {chunk.chunk_id: by_content[chunk.content] for chunk in chunks}
    return Corpus(name, {c.chunk_id: c for c in chunks}, twins, taxonomy)


def where(path: Path, index: int, case: Mapping[str, Any]) -> str:
    return f"{path}: case {index} ({case.get('name')!r})"


def check_case(path: Path, index: int, case: Mapping[str, Any], corpus: Corpus) -> list[str]:
    at = where(path, index, case)
    problems: list[str] = []
    if case.get("category") not in CATEGORIES:
        problems.append(f"{at}: category {case.get('category')!r} is not one of {', '.join(CATEGORIES)}")
    expected = str(case.get("expectedChunkId"))
    chunk = corpus.chunks.get(expected)
    if chunk is None:
        return [*problems, f"{at}: expected chunk {expected!r} is not in the {corpus.name} index"]
    filters: dict[str, str] = dict(case.get("filters") or {})
    for key, value in filters.items():
        if key not in corpus.taxonomy:
            problems.append(f"{at}: filter key {key!r} is not in the taxonomy ({', '.join(corpus.taxonomy)})")
        elif value not in corpus.taxonomy[key]:
            problems.append(f"{at}: filter {key}={value!r} matches no chunk of the {corpus.name} index")
    if not admitted(chunk, filters):
        problems.append(
            f"{at}: expected chunk {expected!r} (metadata {dict(chunk.metadata)}) is excluded by the"
            f" case's own filters {filters}"
        )
    twins = [t.chunk_id for t in corpus.twins[expected] if t.chunk_id != expected and admitted(t, filters)]
    if twins:
        problems.append(
            f"{at}: {len(twins)} byte-identical twin(s) of the expected chunk pass the filters"
            f" (e.g. {twins[0]!r}); add a filter that excludes them or pick another target"
        )
    return problems


def check_halves(path: Path, cases: list[dict[str, Any]]) -> list[str]:
    tune_path, check_path = half_paths(path)
    want_tune, want_check = split_halves(cases)
    problems: list[str] = []
    for half_path, wanted in ((tune_path, want_tune), (check_path, want_check)):
        if not half_path.exists():
            problems.append(f"{half_path}: missing; run scripts/evalsets/split_cases.py {path}")
            continue
        if read_cases(half_path) != wanted:
            problems.append(
                f"{half_path}: is not the current split of {path.name}; run"
                f" scripts/evalsets/split_cases.py {path}"
            )
    return problems


def dev_queries(paths: Sequence[Path]) -> dict[str, str]:
    seen: dict[str, str] = {}
    for path in paths:
        for index, case in enumerate(read_cases(path)):
            seen.setdefault(normalise_query(str(case.get("query", ""))), f"{path.name} case {index}")
    return seen


def run(indexes: Mapping[str, Path], dev_paths: Sequence[Path], evals_dir: Path) -> int:
    problems: list[str] = []
    asked = dev_queries(dev_paths)
    summary: list[str] = []
    for corpus_name, index_dir in sorted(indexes.items()):
        corpus = load_corpus(corpus_name, index_dir)
        folder = evals_dir / corpus_name
        sets = sorted(p for p in folder.glob("*.json") if not is_half(p))
        if not sets:
            problems.append(f"{folder}: no case sets (*.json) found")
        names: dict[str, str] = {}
        for path in sets:
            cases = read_cases(path)
            try:
                parse_cases(cases, source=str(path))
            except CaseFileError as exc:
                problems.append(str(exc))
                continue
            for index, case in enumerate(cases):
                at = where(path, index, case)
                problems.extend(check_case(path, index, case, corpus))
                name = str(case.get("name"))
                if name in names:
                    problems.append(f"{at}: name also used by {names[name]}; names must be unique")
                names.setdefault(name, at)
                query = normalise_query(str(case.get("query")))
                if query in asked:
                    problems.append(f"{at}: query {case.get('query')!r} is also asked by {asked[query]}")
                asked.setdefault(query, at)
            problems.extend(check_halves(path, cases))
            counts = ", ".join(f"{k} {v}" for k, v in sorted(category_counts(cases).items()))
            summary.append(f"{path.relative_to(evals_dir)}: {len(cases)} cases ({counts})")
    for line in summary:
        print(line)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("all cases valid")
    return 0


def parse_index(value: str) -> tuple[str, Path]:
    name, sep, directory = value.partition("=")
    if not sep or not name or not directory:
        raise argparse.ArgumentTypeError(f"expected NAME=DIR (e.g. sdk-docs=/tmp/ev-lex), got {value!r}")
    return name, Path(directory)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate the evaluation sets under evals/.")
    parser.add_argument(
        "--index",
        type=parse_index,
        action="append",
        required=True,
        metavar="NAME=DIR",
        help="corpus name (a folder of evals/) and the index built from it; repeatable",
    )
    parser.add_argument("--dev-cases", type=Path, action="append", default=[], help="development set")
    parser.add_argument("--evals-dir", type=Path, default=EVALS_DIR, help="default: evals/ of this repo")
    args = parser.parse_args(argv)
    try:
        return run(dict(args.index), args.dev_cases, args.evals_dir)
    except EvalSetError as exc:
        return fail(str(exc))


if __name__ == "__main__":
    sys.exit(main())
