"""Reproduce the baseline table of ``evals/README.md``: every set and half, three rankings.

    uv run python scripts/evalsets/baseline.py \\
        --sdk-lexical /tmp/ev-lex --sdk-local /tmp/ev-local \\
        --fastify-lexical /tmp/ev-fastify --fastify-local /tmp/ev-fastify-local \\
        --dev-dir ../shared/corpora

The four index folders are ``docs-mcp build --out`` folders: sdk-docs and the Fastify corpus, each
built once lexically and once with ``--embedding-provider local`` (see ``evals/README.md``). For
every case file (the two development sets when ``--dev-dir`` is given, and the tuning and check
halves of every set under ``evals/``) and every configuration

* ``default-lexical``: ``docs-mcp-server --index-dir LEXICAL``,
* ``original``: ``docs-mcp-server --index-dir LEXICAL --ranking original``,
* ``default-local``: ``docs-mcp-server --index-dir LOCAL``,

the script runs ``docs-mcp-eval run`` (the real server over stdio, as an agent would call it), reads
the ranked chunk ids of every case from its result file and prints Markdown: one summary table
(MRR@5 / NDCG@5 / hit@5 per configuration, and the filter leaks of all runs) and per-category MRR@5
tables. Metrics follow ``docs/eval.md``: ``pos`` is the expected chunk's index among the first five
distinct ids returned; MRR@5 averages ``1/(pos+1)``, NDCG@5 ``1/log2(pos+2)``, hit@5 the share of
cases found in the top five. Rows named "all" pool the halves (and, for sdk-docs, both new sets).

The check halves are for reporting: tune on the tuning halves, then read the check rows once.
``--only CONFIG`` runs a subset of the configurations; ``--json FILE`` also writes every case's
position for later comparison.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalset_common import CATEGORIES, EVALS_DIR, EvalSetError, fail, half_paths, is_half

CONFIGS = ("default-lexical", "original", "default-local")
TOP_K = 5
RUN_TIMEOUT_S = 1800


@dataclass
class CaseResult:
    name: str
    category: str
    position: int | None
    returned: int
    leaked: int


@dataclass
class Row:
    """One line of the tables: a case file (or a pool of them) and its results per configuration."""

    label: str
    files: list[Path]
    results: dict[str, list[CaseResult]] = field(default_factory=dict)


def tool(name: str) -> str:
    """A console script of this environment (next to the running Python), else from PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise EvalSetError(f"{name} not found; run this script with `uv run` from the repository root")
    return found


def run_eval(cases: Path, index_dir: Path, ranking: str | None, workdir: Path) -> list[CaseResult]:
    server = f"{tool('docs-mcp-server')} --index-dir {index_dir}"
    if ranking:
        server += f" --ranking {ranking}"
    out = workdir / "result.json"
    command = [
        tool("docs-mcp-eval"),
        "run",
        "--cases",
        str(cases),
        "--server-command",
        server,
        "--warmup-queries",
        "3",
        "--out",
        str(out),
        "--format",
        "json",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise EvalSetError(f"eval of {cases} against {index_dir} took more than {RUN_TIMEOUT_S} s") from None
    if done.returncode != 0 or not out.exists():
        raise EvalSetError(
            f"eval of {cases} against {index_dir} failed (exit {done.returncode}): {done.stderr.strip()[-800:]}"
        )
    data = json.loads(out.read_text(encoding="utf-8"))
    results: list[CaseResult] = []
    for case in data["rankedCases"]:
        top = list(dict.fromkeys(case["rankedChunkIds"]))[:TOP_K]
        expected = case["expectedChunkId"]
        results.append(
            CaseResult(
                name=case.get("name") or "",
                category=case.get("category") or "uncategorized",
                position=top.index(expected) if expected in top else None,
                returned=int(case.get("returnedHits") or 0),
                leaked=len(case.get("leakedChunkIds") or []),
            )
        )
    return results


def mrr(results: Sequence[CaseResult]) -> float:
    return sum(0.0 if r.position is None else 1 / (r.position + 1) for r in results) / len(results)


def ndcg(results: Sequence[CaseResult]) -> float:
    return sum(0.0 if r.position is None else 1 / math.log2(r.position + 2) for r in results) / len(results)


def hit(results: Sequence[CaseResult]) -> float:
    return sum(r.position is not None for r in results) / len(results)


def collect_rows(evals_dir: Path, dev_dir: Path | None) -> dict[str, list[Row]]:
    """Rows per corpus: development sets, then each set's halves, then pooled rows."""
    corpora: dict[str, list[Row]] = {}
    for folder in sorted(p for p in evals_dir.iterdir() if p.is_dir() and p.name != "corpora"):
        rows: list[Row] = []
        if folder.name == "sdk-docs" and dev_dir is not None:
            for dev in ("sdk-docs-dev-cases.json", "sdk-docs-dev2-cases.json"):
                path = dev_dir / dev
                if not path.exists():
                    raise EvalSetError(f"{path}: development set not found (check --dev-dir)")
                rows.append(Row(dev.removesuffix("-cases.json").removeprefix("sdk-docs-"), [path]))
        sets = sorted(p for p in folder.glob("*.json") if not is_half(p))
        tunes: list[Path] = []
        checks: list[Path] = []
        for full in sets:
            tune, check = half_paths(full)
            stem = full.name.removesuffix(".json")
            rows.append(Row(f"{stem} tune", [tune]))
            rows.append(Row(f"{stem} check", [check]))
            tunes.append(tune)
            checks.append(check)
        if len(sets) > 1:
            rows.append(Row("all new, tune", tunes))
            rows.append(Row("all new, check", checks))
        rows.append(Row("all new", tunes + checks))
        corpora[folder.name] = rows
    return corpora


def measure(
    corpora: dict[str, list[Row]], indexes: dict[tuple[str, str], Path], configs: Sequence[str]
) -> None:
    cache: dict[tuple[Path, str], list[CaseResult]] = {}
    with tempfile.TemporaryDirectory(prefix="evalsets-baseline-") as tmp:
        for corpus, rows in corpora.items():
            for config in configs:
                kind = "local" if config == "default-local" else "lexical"
                index = indexes.get((corpus, kind))
                if index is None:
                    continue
                ranking = "original" if config == "original" else None
                for row in rows:
                    pooled: list[CaseResult] = []
                    for path in row.files:
                        key = (path, config)
                        if key not in cache:
                            print(f"running {corpus} {path.name} [{config}]", file=sys.stderr)
                            cache[key] = run_eval(path, index, ranking, Path(tmp))
                        pooled.extend(cache[key])
                    row.results[config] = pooled


def render(corpora: dict[str, list[Row]], configs: Sequence[str]) -> str:
    lines: list[str] = []
    for corpus, rows in corpora.items():
        lines.append(f"### {corpus}\n")
        lines.append("MRR@5 / NDCG@5 / hit@5; leaks = hits that violate the case's filters, all runs.\n")
        header = "| set | cases | " + " | ".join(configs) + " | leaks |"
        lines.append(header)
        lines.append("| --- | ---: | " + " | ".join(":---:" for _ in configs) + " | ---: |")
        for row in rows:
            if not row.results:
                continue
            cells = []
            leaked = 0
            count = 0
            for config in configs:
                results = row.results.get(config)
                if not results:
                    cells.append("-")
                    continue
                count = len(results)
                leaked += sum(r.leaked for r in results)
                cells.append(f"{mrr(results):.3f} / {ndcg(results):.3f} / {hit(results):.2f}")
            lines.append(f"| {row.label} | {count} | " + " | ".join(cells) + f" | {leaked} |")
        lines.append("")
        lines.append(f"Per category, MRR@5 ({', '.join(configs)}):\n")
        per_row = [row for row in rows if row.results]
        lines.append("| category | " + " | ".join(row.label for row in per_row) + " |")
        lines.append("| --- | " + " | ".join(":---:" for _ in per_row) + " |")
        for category in CATEGORIES:
            cells = []
            for row in per_row:
                parts = []
                n = 0
                for config in configs:
                    results = [r for r in row.results.get(config, []) if r.category == category]
                    n = len(results) or n
                    parts.append(f"{mrr(results):.2f}" if results else "-")
                cells.append(f"{' / '.join(parts)} (n={n})" if n else "-")
            lines.append(f"| {category} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def dump(corpora: dict[str, list[Row]], path: Path) -> None:
    payload = {
        corpus: {
            row.label: {
                config: [
                    {"name": r.name, "category": r.category, "position": r.position, "leaked": r.leaked}
                    for r in results
                ]
                for config, results in row.results.items()
            }
            for row in rows
        }
        for corpus, rows in corpora.items()
    }
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Baseline figures for every evaluation set.")
    parser.add_argument("--sdk-lexical", type=Path, help="sdk-docs index built with no embeddings")
    parser.add_argument("--sdk-local", type=Path, help="sdk-docs index built with --embedding-provider local")
    parser.add_argument("--fastify-lexical", type=Path, help="Fastify index built with no embeddings")
    parser.add_argument(
        "--fastify-local", type=Path, help="Fastify index built with --embedding-provider local"
    )
    parser.add_argument("--dev-dir", type=Path, help="folder holding the two sdk-docs development sets")
    parser.add_argument("--evals-dir", type=Path, default=EVALS_DIR, help="default: evals/ of this repo")
    parser.add_argument("--only", action="append", choices=CONFIGS, help="run only this configuration")
    parser.add_argument("--json", type=Path, help="also write every case's position here")
    args = parser.parse_args(argv)
    indexes = {
        key: value
        for key, value in {
            ("sdk-docs", "lexical"): args.sdk_lexical,
            ("sdk-docs", "local"): args.sdk_local,
            ("fastify", "lexical"): args.fastify_lexical,
            ("fastify", "local"): args.fastify_local,
        }.items()
        if value is not None
    }
    for (corpus, kind), path in indexes.items():
        if not (path / "metadata.json").exists():
            return fail(
                f"{path}: not an index folder (no metadata.json); build the {corpus} {kind} index first"
            )
    if not indexes:
        return fail(
            "give at least one index (--sdk-lexical, --sdk-local, --fastify-lexical, --fastify-local)"
        )
    configs = tuple(c for c in CONFIGS if not args.only or c in args.only)
    try:
        corpora = collect_rows(args.evals_dir, args.dev_dir)
        corpora = {name: rows for name, rows in corpora.items() if any(k[0] == name for k in indexes)}
        measure(corpora, indexes, configs)
    except EvalSetError as exc:
        return fail(str(exc))
    print(render(corpora, configs))
    if args.json:
        dump(corpora, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
