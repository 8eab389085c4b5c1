"""Shared pieces of the evaluation-set scripts: chunk catalogs, case files, filters, stable hashing.

The scripts in this folder are run from the repository root with ``uv run python
scripts/evalsets/<script>.py``; each imports this module from its own folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docs_mcp_eval.leaks import hit_violates_filters

REPO_ROOT = Path(__file__).resolve().parents[2]
EVALS_DIR = REPO_ROOT / "evals"

CATEGORIES = (
    "exact-name",
    "natural-language",
    "workflow",
    "cross-service",
    "cross-reference",
    "clarification",
    "distractor",
)
"""The case categories: the shared corpora README's six, and ``cross-reference`` (one subject that
several kinds of page cover, the query naming the kind), which replaces ``cross-service`` on a corpus
with one product."""

DEFAULT_LIMIT = 5
DEFAULT_MAX_ROUNDS = 2


class EvalSetError(Exception):
    """A set, an index or an argument is unusable; the message says which and what to do."""


@dataclass(frozen=True)
class Chunk:
    """One chunk of a built index, as ``chunks.json`` lists it."""

    chunk_id: str
    filepath: str
    heading: str
    content: str
    metadata: Mapping[str, str]


@dataclass(frozen=True, kw_only=True)
class Case:
    """One case in the runner format of the eval harness."""

    name: str
    category: str
    query: str
    expected_chunk_id: str
    filters: Mapping[str, str] = field(default_factory=dict)
    limit: int = DEFAULT_LIMIT
    max_rounds: int = DEFAULT_MAX_ROUNDS

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "category": self.category,
            "query": self.query,
            "expectedChunkId": self.expected_chunk_id,
            "filters": dict(self.filters),
            "limit": self.limit,
            "maxRounds": self.max_rounds,
        }


def load_chunks(index_dir: Path) -> list[Chunk]:
    """Read ``chunks.json`` of an index built by ``docs-mcp build --out index_dir``."""
    path = index_dir / "chunks.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalSetError(
            f"{path}: not found; build the index first (uv run docs-mcp build --docs-dir ... --out {index_dir})"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalSetError(f"{path}: cannot read the chunk list ({exc})") from None
    if not isinstance(raw, list):
        raise EvalSetError(f"{path}: expected a JSON array of chunks")
    chunks: list[Chunk] = []
    for index, item in enumerate(raw):
        try:
            metadata = {str(k): str(v) for k, v in (item.get("metadata") or {}).items()}
            chunks.append(
                Chunk(
                    chunk_id=item["chunk_id"],
                    filepath=item["filepath"],
                    heading=item.get("heading") or "",
                    content=item["content"],
                    metadata=metadata,
                )
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise EvalSetError(f"{path}: chunk {index} lacks a field ({exc})") from None
    return chunks


def admitted(chunk: Chunk, filters: Mapping[str, str]) -> bool:
    """True when a search with ``filters`` may return ``chunk`` (the auto-include rule honoured)."""
    return not hit_violates_filters(chunk.metadata, filters)


def stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same on every machine and Python run."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def normalise_query(query: str) -> str:
    """The form in which two queries count as the same: case and runs of whitespace ignored."""
    return re.sub(r"\s+", " ", query.strip().lower())


def read_cases(path: Path) -> list[dict[str, Any]]:
    """Read a case file as plain JSON objects; raise :class:`EvalSetError` naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalSetError(f"{path}: case file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalSetError(f"{path}: cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise EvalSetError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise EvalSetError(f"{path}: expected a JSON array of case objects")
    return data


def write_cases(path: Path, cases: Iterable[Mapping[str, Any]]) -> int:
    """Write cases as a JSON array, one case per line (easy to read and to diff)."""
    items = list(cases)
    lines = [json.dumps(dict(item), ensure_ascii=False) for item in items]
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"
    path.write_text(body, encoding="utf-8")
    return len(items)


def pick_wording(wordings: Sequence[str], name: str) -> str:
    """One of ``wordings``, picked by a stable hash of ``name`` (the same on every run)."""
    return wordings[stable_hash(name + " wording") % len(wordings)]


def exact_name_case(name: str, query: str, chunk: Chunk) -> Case:
    """A generated exact-name case (named ``mech <name>``) that expects ``chunk``."""
    return Case(name=f"mech {name}", category="exact-name", query=query, expected_chunk_id=chunk.chunk_id)


def write_generated(out: Path, kinds: Mapping[str, Sequence[Case]], asked: Iterable[str] = ()) -> int:
    """Write the cases of every kind, each query once and none of ``asked``, and print the counts;
    the number written."""
    seen = set(asked)
    cases = [c for found in kinds.values() for c in found if not (c.query in seen or seen.add(c.query))]
    if cases:
        write_cases(out, (c.to_json() for c in cases))
        counts = ", ".join(f"{len(found)} {kind}" for kind, found in kinds.items())
        print(f"{out}: {len(cases)} cases ({counts})")
    return len(cases)


def fail(message: str) -> int:
    """Print ``error: message`` to stderr and return the exit code 2."""
    print(f"error: {message}", file=sys.stderr)
    return 2


def category_counts(cases: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for case in cases:
        category = str(case.get("category") or "uncategorized")
        counts[category] = counts.get(category, 0) + 1
    return counts


TUNE_SUFFIX = ".tune.json"
CHECK_SUFFIX = ".check.json"


def is_half(path: Path) -> bool:
    return path.name.endswith((TUNE_SUFFIX, CHECK_SUFFIX))


def half_paths(full: Path) -> tuple[Path, Path]:
    """``x.json`` -> (``x.tune.json``, ``x.check.json``)."""
    stem = full.name.removesuffix(".json")
    return full.with_name(stem + TUNE_SUFFIX), full.with_name(stem + CHECK_SUFFIX)


def split_halves(
    cases: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """Split a set into a tuning half and a check half, stratified by category.

    Within each category the cases are ordered by a SHA-256 hash of their name and dealt out
    alternately; the half that receives a category's first case alternates from one category to
    the next (in sorted order), so both halves get the same number of cases, give or take one.
    Each half keeps the order of the full set. The split depends on nothing but the names and
    categories of the cases, so it comes out the same on every machine; adding or removing a case
    reshuffles the later cases of its category, so split a set again only when it changes.
    """
    by_category: dict[str, list[int]] = {}
    for position, case in enumerate(cases):
        by_category.setdefault(str(case.get("category") or ""), []).append(position)
    to_check: set[int] = set()
    first_to_check = False
    for category in sorted(by_category):
        ordered = sorted(
            by_category[category],
            key=lambda p: (stable_hash(str(cases[p].get("name"))), str(cases[p].get("name"))),
        )
        for rank, position in enumerate(ordered):
            if (rank % 2 == 1) != first_to_check:
                to_check.add(position)
        if len(ordered) % 2 == 1:
            first_to_check = not first_to_check
    tune = [case for p, case in enumerate(cases) if p not in to_check]
    check = [case for p, case in enumerate(cases) if p in to_check]
    return tune, check


def split_keeping(
    cases: Sequence[Mapping[str, Any]], tune_names: set[str], check_names: set[str]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """:func:`split_halves` for a set that changed: a case whose name is in ``tune_names`` or
    ``check_names`` (the halves written before) stays in its half, and only the other cases are
    dealt out, by the same rule among themselves. Each half keeps the order of the full set."""
    split_before = tune_names | check_names
    new = [case for case in cases if str(case.get("name")) not in split_before]
    to_check = set(check_names) | {str(case.get("name")) for case in split_halves(new)[1]}
    tune = [case for case in cases if str(case.get("name")) not in to_check]
    check = [case for case in cases if str(case.get("name")) in to_check]
    return tune, check
