"""What the heading-path leg costs: ``uv run python benchmarks/heading_vectors.py --docs-dir DOCS``.

The default build embeds each section's page and heading names (``--embedding-provider headings``,
:mod:`docs_mcp_core.search.heading_leg`); ``--embedding-provider none`` builds the lexical index
alone. Issue #30's line: the default build within 2x of the lexical one, and the default search's
p50 over stdio within 2x. In one run, A and B interleaved (A B A B ...), medians:

* ``docs-mcp build`` of ``DOCS`` both ways, ``--pairs`` times, each into a new folder (a fresh
  build, as issue #30 measures it): wall time and CPU time, and their ratios; then each again into
  the folder it just built (a rebuild of the unchanged corpus: it reuses the chunks and the heading
  vectors);
* the two indexes of the last pair searched in process with the development cases (one engine
  each, every case alternately on both after a warm-up round): p50 and p95, and the ratios.

The stdio figures (p50 of the search round trip, and the first answer after a spawn) come from
``benchmarks/first_answer.py --index-dir A --index-dir B``, which interleaves the same way. Quality:
``benchmarks/quality.py`` per index; ``docs/ranking.md`` ("Heading-path vectors") keeps both.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_eval.cases import load_cases
from docs_mcp_eval.metrics import percentile

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CASES = SHARED / "corpora" / "sdk-docs-dev-cases.json"
MODES = ("none", "headings")


def build(docs_dir: Path, out: Path, mode: str, cpu: list[float] | None = None) -> float:
    """The build's wall time; its CPU time (user + system, its worker processes included) is
    appended to ``cpu``: on a shared machine the CPU ratio moves less with the load than the wall's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        ["docs-mcp", "build", "--docs-dir", str(docs_dir), "--out", str(out), "--embedding-provider", mode],
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall


def searches(indexes: dict[str, Path], cases_file: Path) -> dict[str, list[float]]:
    """Every case on every index in turn, after one warm-up round: seconds per search."""
    cases = load_cases(cases_file)
    engines = {mode: SearchEngine.open(path, options=SearchOptions()) for mode, path in indexes.items()}
    took: dict[str, list[float]] = {mode: [] for mode in engines}
    try:
        for measured in (False, True):
            for case in cases:
                for mode, engine in engines.items():
                    started = time.perf_counter()
                    engine.search(case.query, limit=case.limit or 5, filters=case.filters or None)
                    if measured:
                        took[mode].append(time.perf_counter() - started)
    finally:
        for engine in engines.values():
            engine.close()
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build and search cost of the heading-path leg.")
    parser.add_argument("--docs-dir", type=Path, required=True, help="the corpus to build")
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="queries for the search figures")
    parser.add_argument("--pairs", type=int, default=2, help="interleaved build pairs")
    parser.add_argument("--keep", type=Path, help="keep the last pair's indexes under this folder")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="heading-cost-"))
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, load {load[0]:.1f} at start")
    try:
        fresh: dict[str, list[float]] = {mode: [] for mode in MODES}
        again: dict[str, list[float]] = {mode: [] for mode in MODES}
        cpu: dict[str, list[float]] = {mode: [] for mode in MODES}
        for pair in range(max(1, args.pairs)):
            for mode in MODES:
                shutil.rmtree(work / mode, ignore_errors=True)
                fresh[mode].append(build(args.docs_dir, work / mode, mode, cpu[mode]))
            for mode in MODES:
                again[mode].append(build(args.docs_dir, work / mode, mode))
            print(
                f"pair {pair + 1}: fresh "
                + ", ".join(f"{m} {fresh[m][-1]:.1f} s ({cpu[m][-1]:.1f} s CPU)" for m in MODES)
                + "; rebuilt "
                + ", ".join(f"{m} {again[m][-1]:.1f} s" for m in MODES),
                flush=True,
            )
        for what, seconds in (("build", fresh), ("build CPU", cpu), ("rebuild, unchanged corpus", again)):
            lexical, default = (statistics.median(seconds[m]) for m in MODES)
            paired = statistics.median(
                h / n for n, h in zip(seconds["none"], seconds["headings"], strict=True)
            )
            print(
                f"{what}: none {lexical:.1f} s, headings {default:.1f} s: ratio {default / lexical:.2f}x "
                f"(median of the pairs' ratios {paired:.2f}x)"
            )
        took = searches({mode: work / mode for mode in MODES}, args.cases)
        p50 = {m: statistics.median(took[m]) * 1e3 for m in MODES}
        p95 = {m: percentile(took[m], 0.95) * 1e3 for m in MODES}
        print(
            f"search in process: none p50 {p50['none']:.2f} / p95 {p95['none']:.2f} ms, headings p50 "
            f"{p50['headings']:.2f} / p95 {p95['headings']:.2f} ms: ratios {p50['headings'] / p50['none']:.2f}x "
            f"/ {p95['headings'] / p95['none']:.2f}x ({len(took['none'])} searches each)"
        )
        print(f"load at the end {os.getloadavg()[0]:.1f}")
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for mode in MODES:
                shutil.rmtree(args.keep / mode, ignore_errors=True)
                shutil.move(str(work / mode), str(args.keep / mode))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
