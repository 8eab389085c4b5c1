"""Ten times the corpus on one machine: ``uv run python benchmarks/scale.py --copies 1,3,10``.

For each N in ``--copies`` it lays out N copies of a corpus (default ``../shared/corpora/sdk-docs``)
under distinct prefixes ``copy-0/ ... copy-<N-1>/`` in a temporary folder (symbolic links to the
corpus: the build follows links to folders, so nothing is copied), then:

1. builds it with ``docs-mcp build`` in a child process: wall time, CPU time (user + system of the
   build and its chunking workers: less sensitive to other load on the machine than wall time),
   peak RSS of the largest process (``wait4``) and peak PSS of the process tree (``/proc`` polled
   every 20 ms), index size (whole output folder and ``.lancedb``); with ``--steps``, each step
   the build prints with its wall and CPU time, the RSS sampled in it and how much it raised the
   peak RSS (where the peak is), and the busiest threads' CPU;
2. runs the dev queries (``sdk-docs-dev-cases.json``) over stdio against ``docs-mcp-server`` with
   raw JSON-RPC lines: one warm-up round, then ``--passes`` timed rounds; search p50/p95 (nearest
   rank), the share of cases whose expected chunk (rewritten to ``copy-0/<id>``: the copies are
   byte-identical, and identical hits collapse onto the first copy) is on the first page, and the
   server's RSS (after the rounds, and its peak);
3. with ``--embedding-provider hash`` (256 dimensions by default) the build also writes vectors,
   and from ``index_table.ANN_INDEX_MIN_ROWS`` rows an ANN index; then the vector leg itself is
   measured in process on the built table: recall@10 of the ANN query (as the engine tunes it)
   against exact search (``bypass_vector_index``), with ``limit 10`` and with the engine's fetch
   depth, and the leg's latency p50/p95.

Targets at N = 10 against N = 1 in the same run (issue #32; ``--copies 1,10``): build wall time
<= 7x and peak RSS <= 2x; search p50 <= 1.5x and p95 <= 1.6x (the stdio figures of step 2; in
process, ``benchmarks/search_scale.py``). ANN recall@10 >= 0.95.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_index import directory_bytes, tree_pss_kib
from server_stdio import StdioServer as _StdioServer
from server_stdio import rss_mb

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_CORPUS = SHARED_DIR / "corpora" / "sdk-docs"
DEFAULT_CASES = SHARED_DIR / "corpora" / "sdk-docs-dev-cases.json"
MIB = 1024 * 1024
MB = 1_000_000
POLL_SECONDS = 0.02
TIMEOUT = 300.0
PUBLISHED_FILES = ("chunks.json", "metadata.json")
# 10x over 1x in one run (issue #32): ratios, as machines differ from day to day
RATIO_TARGETS = {"build wall": 7.0, "build peak RSS": 2.0, "search p50": 1.5, "search p95": 1.6}


@dataclass
class Figures:
    copies: int
    files: int = 0
    chunks: int = 0
    build_wall_s: float = 0.0
    build_cpu_s: float = 0.0
    build_rss_mib: float = 0.0
    build_tree_pss_mib: float = 0.0
    index_mb: float = 0.0  # .lancedb + chunks.json + metadata.json
    lancedb_mb: float = 0.0
    cache_mb: float = 0.0  # .embedding-cache (not part of the index)
    search_p50_ms: float = 0.0
    search_p95_ms: float = 0.0
    found_first_page: float = 0.0
    server_rss_mb: float = 0.0
    server_peak_mb: float = 0.0
    ann: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    thread_cpu: dict[str, float] = field(default_factory=dict)


@dataclass
class Step:
    """One step of the build's log: when it started, how long it ran, what the build did in it."""

    name: str
    start_s: float
    seconds: float = 0.0
    cpu_s: float = 0.0  # the build process's CPU, all its threads (not the chunking workers)
    rss_mib: float = 0.0  # the build process's largest RSS sampled during the step
    hwm_gain_mib: float = 0.0  # how much its peak RSS (VmHWM) rose during the step


class StepLog:
    """The build's steps as its log prints them (``[  1.6s] message``), with what the build
    process used in each: sampled at every poll, so a step shorter than a poll may be missed, but
    the rise of the peak RSS (``VmHWM``, kept by the kernel) is never."""

    STEP_RE = re.compile(r"^\[\s*([0-9.]+)s\] (.*)$")
    PROGRESS_RE = re.compile(r": [0-9,]+/[0-9,]+$")  # "chunking: 64/4087": progress, not a step

    def __init__(self, log: Path, pid: int) -> None:
        self.log, self.pid = log, pid
        self.offset = 0
        self.pending = ""
        self.steps: list[Step] = [Step("start", 0.0)]
        self.hwm = 0.0
        self.cpu = 0.0
        self.tick = os.sysconf("SC_CLK_TCK")
        self.threads: dict[int, tuple[str, float]] = {}  # thread id -> (name, CPU seconds)

    def poll(self) -> None:
        try:
            with open(self.log, encoding="utf-8", errors="replace") as fh:
                fh.seek(self.offset)
                text = fh.read()
                self.offset = fh.tell()
        except OSError:
            text = ""
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        rss, hwm, cpu = self._usage()
        for line in lines:
            found = self.STEP_RE.match(line)
            if found and not self.PROGRESS_RE.search(found.group(2)):
                self.steps.append(Step(found.group(2), float(found.group(1))))
        step = self.steps[-1]
        if cpu:
            step.cpu_s += max(0.0, cpu - self.cpu)
            self.cpu = cpu
        step.rss_mib = max(step.rss_mib, rss)
        self._thread_usage()
        if hwm > self.hwm:
            step.hwm_gain_mib += hwm - self.hwm
            self.hwm = hwm

    def _usage(self) -> tuple[float, float, float]:
        """RSS and peak RSS (MiB) and CPU seconds of the build process (zeros once it has ended)."""
        rss = hwm = cpu = 0.0
        try:
            with open(f"/proc/{self.pid}/status", encoding="ascii") as fh:
                for line in fh:
                    key, _, value = line.partition(":")
                    if key == "VmRSS":
                        rss = int(value.split()[0]) / 1024
                    elif key == "VmHWM":
                        hwm = int(value.split()[0]) / 1024
            with open(f"/proc/{self.pid}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
        return rss, hwm, cpu

    def _thread_usage(self) -> None:
        """Each thread's CPU so far (a thread's last sample counts once it has ended)."""
        try:
            tids = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            return
        for tid in tids:
            try:
                with open(f"/proc/{self.pid}/task/{tid}/stat", encoding="utf-8", errors="replace") as fh:
                    stat = fh.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat.rsplit(")", 1)[1].split()
            self.threads[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / self.tick)

    def thread_cpu(self) -> dict[str, float]:
        """CPU seconds of the busiest threads (``name/thread id``; Python's own threads all carry
        the program's name), then the rest by name."""
        ranked = sorted(self.threads.items(), key=lambda item: -item[1][1])
        totals = {f"{name}/{tid}": seconds for tid, (name, seconds) in ranked[:6]}
        for _tid, (name, seconds) in ranked[6:]:
            key = f"other {name}"
            totals[key] = totals.get(key, 0.0) + seconds
        return totals

    def finish(self, wall_s: float) -> list[Step]:
        for step, following in zip(self.steps, [*self.steps[1:], None], strict=True):
            step.seconds = (following.start_s if following is not None else wall_s) - step.start_s
        return self.steps


def bin_command(name: str) -> list[str]:
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    found = shutil.which(name)
    if found:
        return [found]
    module = {"docs-mcp": "docs_mcp_cli", "docs-mcp-server": "docs_mcp_server"}[name]
    return [sys.executable, "-m", module]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (the eval's definition)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(len(ordered) * p) - 1))] if ordered else 0.0


# ── corpus layout ────────────────────────────────────────────────────────────────────────────────


def lay_out(corpus: Path, copies: int, dest: Path) -> Path:
    """``dest/copy-<i>`` -> ``corpus`` for i < copies (symbolic links out of ``dest``, which the build
    follows with ``--follow-external-symlinks``)."""
    dest.mkdir(parents=True, exist_ok=True)
    target = corpus.resolve()
    for i in range(copies):
        link = dest / f"copy-{i}"
        if link.is_symlink():
            if link.resolve() == target:
                continue  # laid out by an earlier run with the same --work-dir
            link.unlink()
        link.symlink_to(target, target_is_directory=True)
    return dest


def first_copy_cases(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dev cases with their expected chunk ids moved under ``copy-0/``."""
    return [{**case, "expectedChunkId": f"copy-0/{case['expectedChunkId']}"} for case in cases]


# ── build ───────────────────────────────────────────────────────────────────────────────────────


def run_build(
    docs: Path, out: Path, extra: list[str], log: Path, figures: Figures, timeout_s: float = 3600.0
) -> None:
    env = dict(os.environ, LANCEDB_LOG="error")
    command = [
        *bin_command("docs-mcp"),
        *("build", "--docs-dir", str(docs), "--out", str(out)),
        "--follow-external-symlinks",  # the copies are links to the corpus, outside the layout folder
        *extra,
    ]
    with (
        open(log, "w", encoding="utf-8") as err,
        open(log.with_suffix(".out"), "w", encoding="utf-8") as out_fh,
    ):
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out_fh, stderr=err, env=env)
        peak_tree = 0
        steps = StepLog(log, proc.pid)
        deadline = started + timeout_s if timeout_s > 0 else math.inf
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                raise SystemExit(
                    f"docs-mcp build ran for more than {timeout_s:.0f} s; stopped (raise --build-timeout)"
                )
            peak_tree = max(peak_tree, tree_pss_kib(proc.pid))
            steps.poll()
            time.sleep(POLL_SECONDS)
        figures.build_wall_s = time.perf_counter() - started
        steps.poll()
        figures.steps = steps.finish(figures.build_wall_s)
        figures.thread_cpu = steps.thread_cpu()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(log.read_text(encoding="utf-8")[-4000:])
        raise SystemExit(f"docs-mcp build failed with exit code {code}")
    figures.build_cpu_s = usage.ru_utime + usage.ru_stime
    figures.build_rss_mib = usage.ru_maxrss / 1024  # KiB on Linux; the largest of the build and its workers
    figures.build_tree_pss_mib = peak_tree / 1024
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    figures.files = meta["stats"]["total_files"]
    figures.chunks = meta["stats"]["total_chunks"]
    # the index is what the build publishes; the embedding cache beside it only serves the next build
    figures.lancedb_mb = directory_bytes(out / meta["index"]["path"]) / MB
    figures.index_mb = figures.lancedb_mb + sum((out / name).stat().st_size for name in PUBLISHED_FILES) / MB
    figures.cache_mb = (
        directory_bytes(out / ".embedding-cache") / MB if (out / ".embedding-cache").is_dir() else 0.0
    )


# ── search over stdio ───────────────────────────────────────────────────────────────────────────


class StdioServer(_StdioServer):
    """``docs-mcp-server`` spoken to with raw JSON-RPC lines (the stdio benchmark's client)."""

    def __init__(self, index_dir: Path) -> None:
        super().__init__(bin_command("docs-mcp-server"), index_dir)

    def rss_mb(self) -> tuple[float, float]:
        return rss_mb(self.proc.pid)


def search_arguments(case: dict[str, Any]) -> dict[str, Any]:
    return {"query": case["query"], "limit": case.get("limit") or 5, **(case.get("filters") or {})}


def run_search(index_dir: Path, cases: list[dict[str, Any]], passes: int, figures: Figures) -> None:
    server = StdioServer(index_dir)
    try:
        server.handshake()
        for case in cases:  # warm-up (opens the index, fills caches)
            server.call("tools/call", {"name": "search_docs", "arguments": search_arguments(case)})
        latencies: list[float] = []
        found = 0
        for round_ in range(passes):
            for case in cases:
                started = time.perf_counter()
                result = server.call(
                    "tools/call", {"name": "search_docs", "arguments": search_arguments(case)}
                )
                latencies.append((time.perf_counter() - started) * 1000)
                if result.get("isError"):
                    raise RuntimeError(f"search_docs failed for {case['query']!r}: {result}")
                if round_ == 0:
                    hits = json.loads(result["content"][0]["text"])["hits"]
                    found += any(h["chunk_id"] == case["expectedChunkId"] for h in hits)
        figures.server_rss_mb, figures.server_peak_mb = server.rss_mb()
    finally:
        server.close()
    figures.search_p50_ms = percentile(latencies, 0.5)
    figures.search_p95_ms = percentile(latencies, 0.95)
    figures.found_first_page = found / len(cases) if cases else 0.0


# ── the vector leg ──────────────────────────────────────────────────────────────────────────────


def measure_vector_leg(index_dir: Path, cases: list[dict[str, Any]], figures: Figures) -> None:
    """Recall of the ANN query against exact search on the built table, and the leg's latency."""
    import lancedb

    from docs_mcp_core.embedding import create_embedding_provider
    from docs_mcp_core.index.table import tune_vector_query, vector_index_type
    from docs_mcp_core.metadata import read_metadata
    from docs_mcp_core.search import DEFAULT_POOL

    meta = read_metadata(index_dir)
    if meta.embedding is None:
        return
    provider = create_embedding_provider(
        meta.embedding.provider, model=meta.embedding.model, dimensions=meta.embedding.dimensions
    )
    table = lancedb.connect(str(index_dir / meta.index.path)).open_table(meta.index.table)
    index_type = vector_index_type(table)
    queries = [case["query"] for case in cases]
    vectors = provider.embed(queries)

    def ids(vector: list[float], limit: int, exact: bool) -> list[tuple[int, float]]:
        """Row ids and distances, queried as the engine's vector leg queries (no columns read)."""
        builder: Any = table.search(list(vector), vector_column_name="vector").with_row_id(True)
        builder = builder.bypass_vector_index() if exact else tune_vector_query(builder, index_type, limit)
        rows = builder.select(["_distance"]).limit(limit).to_arrow()
        return list(zip(rows.column("_rowid").to_pylist(), rows.column("_distance").to_pylist(), strict=True))

    def recall(limit: int) -> float:
        """Share of the ANN top 10 within the exact 10th-best distance (ties count as hits)."""
        scores: list[float] = []
        for vector in vectors:
            exact = ids(vector, 10, exact=True)
            approx = ids(vector, limit, exact=False)[:10]
            if not exact:
                continue
            bound = exact[-1][1] + 1e-6
            scores.append(sum(1 for _cid, d in approx if d <= bound) / len(exact))
        return statistics.fmean(scores) if scores else 0.0

    for vector in vectors[:10]:  # warm-up
        ids(vector, DEFAULT_POOL, exact=False)
    latencies: list[float] = []
    for _ in range(3):
        for vector in vectors:
            started = time.perf_counter()
            ids(vector, DEFAULT_POOL, exact=False)
            latencies.append((time.perf_counter() - started) * 1000)
    exact_latencies: list[float] = []
    for vector in vectors:
        started = time.perf_counter()
        ids(vector, DEFAULT_POOL, exact=True)
        exact_latencies.append((time.perf_counter() - started) * 1000)
    figures.ann = {
        "index_type": index_type or "none (exact search)",
        "recall@10 limit 10": recall(10),
        f"recall@10 limit {DEFAULT_POOL}": recall(DEFAULT_POOL),
        "leg p50 ms": percentile(latencies, 0.5),
        "leg p95 ms": percentile(latencies, 0.95),
        "exact p50 ms": percentile(exact_latencies, 0.5),
    }


# ── report ──────────────────────────────────────────────────────────────────────────────────────


def verdict(value: float, target: float) -> str:
    return "ok" if value <= target else "MISSED"


def report_steps(figures: Figures) -> None:
    """Where the build's time and memory went, step by step (``--steps``)."""
    print(f"{figures.copies}x build, step by step (the build process; CPU without the chunking workers):")
    print(f"  {'start s':>8} {'wall s':>7} {'CPU s':>6} {'RSS MiB':>8} {'peak +MiB':>9}  step")
    for step in figures.steps:
        print(f"  {step.start_s:>8.1f} {step.seconds:>7.1f} {step.cpu_s:>6.1f} {step.rss_mib:>8.0f} "
              f"{step.hwm_gain_mib:>9.0f}  {step.name[:80]}")  # fmt: skip
    shown = [f"{name} {seconds:.1f}" for name, seconds in figures.thread_cpu.items() if seconds >= 0.1]
    print("  CPU s by thread: " + ", ".join(shown))


def report(results: list[Figures], provider: str) -> None:
    print()
    print(f"{'copies':>6} {'files':>7} {'chunks':>8} {'build s':>8} {'cpu s':>7} {'RSS MiB':>8} {'PSS MiB':>8} "
          f"{'index MB':>9} {'.lancedb':>9} {'p50 ms':>7} {'p95 ms':>7} {'found':>6} {'srv MB':>7} {'peak':>6}")  # fmt: skip
    for f in results:
        print(f"{f.copies:>6} {f.files:>7,} {f.chunks:>8,} {f.build_wall_s:>8.1f} {f.build_cpu_s:>7.1f} "
              f"{f.build_rss_mib:>8.0f} {f.build_tree_pss_mib:>8.0f} {f.index_mb:>9.1f} {f.lancedb_mb:>9.1f} "
              f"{f.search_p50_ms:>7.1f} {f.search_p95_ms:>7.1f} {f.found_first_page:>6.0%} "
              f"{f.server_rss_mb:>7.0f} {f.server_peak_mb:>6.0f}")  # fmt: skip
    for f in results:
        if f.cache_mb:
            print(
                f"{f.copies}x: embedding cache beside the index {f.cache_mb:.1f} MB (not counted in the index size)"
            )
        if f.ann:
            print(f"vector leg at {f.copies}x ({provider}): " + ", ".join(
                f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in f.ann.items()))  # fmt: skip
    if len(results) > 1:
        first, last = results[0], results[-1]
        growth = last.copies / first.copies
        print(f"memory growth {first.copies}x -> {last.copies}x: build RSS x{last.build_rss_mib / first.build_rss_mib:.2f}, "
              f"tree PSS x{last.build_tree_pss_mib / max(first.build_tree_pss_mib, 1):.2f} "
              f"for x{growth:.0f} the corpus")  # fmt: skip
    one = next((f for f in results if f.copies == 1), None)
    ten = next((f for f in results if f.copies == 10), None)
    if ten is None:
        return
    if one is None:
        print("targets at 10x are ratios to 1x: run with --copies 1,10")
        return
    print("targets at 10x against 1x (this run):")
    rows = [
        ("build wall", one.build_wall_s, ten.build_wall_s, "s"),
        ("build peak RSS", one.build_rss_mib, ten.build_rss_mib, "MiB"),
    ]
    if one.search_p50_ms and ten.search_p50_ms:
        rows += [
            ("search p50", one.search_p50_ms, ten.search_p50_ms, "ms"),
            ("search p95", one.search_p95_ms, ten.search_p95_ms, "ms"),
        ]
    for label, base, value, unit in rows:
        ratio = value / base if base else math.inf
        target = RATIO_TARGETS[label]
        print(
            f"  {label:<16} {base:>8.1f} -> {value:>8.1f} {unit:<4} x{ratio:<6.2f} "
            f"target <= x{target:g} {verdict(ratio, target)}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Build and search N copies of a corpus; print the scale figures."
    )
    parser.add_argument(
        "--copies", default="10", help="comma-separated copy counts, e.g. 1,3,10 (default 10)"
    )
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help=f"corpus (default {DEFAULT_CORPUS})"
    )
    parser.add_argument(
        "--cases", type=Path, default=DEFAULT_CASES, help=f"dev cases (default {DEFAULT_CASES})"
    )
    parser.add_argument("--passes", type=int, default=3, help="timed rounds over the dev queries (default 3)")
    parser.add_argument(
        "--embedding-provider",
        choices=("default", "none", "hash"),
        default="default",
        help="default: the build's own default (heading vectors); none: lexical only; "
        "hash: vectors and an ANN index, and the vector leg measured",
    )
    parser.add_argument(
        "--embedding-dimensions", type=int, default=256, help="hash vector size (default 256)"
    )
    parser.add_argument(
        "--work-dir", type=Path, help="keep corpora and indexes here (default: a temp folder)"
    )
    parser.add_argument("--no-search", action="store_true", help="build only")
    parser.add_argument(
        "--steps",
        action="store_true",
        help="print each build's steps with their wall and CPU time, RSS and rise of the peak RSS",
    )
    parser.add_argument(
        "--build-timeout",
        type=float,
        default=3600.0,
        help="stop a build that runs longer than this many seconds; 0 waits for ever (default 3600; "
        "100 copies on 2 cores take about an hour)",
    )
    args = parser.parse_args(argv)
    try:
        counts = [int(x) for x in args.copies.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--copies expects integers separated by commas, got {args.copies!r}")
    if not counts or min(counts) < 1:
        parser.error("--copies must be at least 1")
    if not args.corpus.is_dir():
        print(f"error: corpus {args.corpus} is not a folder", file=sys.stderr)
        return 2
    cases = first_copy_cases(json.loads(args.cases.read_text(encoding="utf-8")))
    extra: list[str] = []
    if args.embedding_provider == "none":
        extra = ["--embedding-provider", "none"]
    elif args.embedding_provider == "hash":
        extra = ["--embedding-provider", "hash", "--embedding-dimensions", str(args.embedding_dimensions)]

    results: list[Figures] = []
    work_dir: Path | None = args.work_dir
    scratch_ctx = tempfile.TemporaryDirectory(prefix="docs-mcp-scale-") if work_dir is None else None
    root = Path(scratch_ctx.name) if scratch_ctx is not None else Path(str(work_dir)).resolve()
    try:
        for n in counts:
            figures = Figures(copies=n)
            docs = lay_out(args.corpus, n, root / f"corpus-{n}")
            out = root / f"index-{n}"
            shutil.rmtree(out, ignore_errors=True)
            run_build(docs, out, extra, root / f"build-{n}.log", figures, args.build_timeout)
            print(f"{n}x: built {figures.chunks:,} chunks in {figures.build_wall_s:.1f} s "
                  f"(cpu {figures.build_cpu_s:.1f} s, peak RSS {figures.build_rss_mib:.0f} MiB), "
                  f"index {figures.index_mb:.1f} MB", flush=True)  # fmt: skip
            if args.steps:
                report_steps(figures)
            if not args.no_search:
                run_search(out, cases, args.passes, figures)
                print(f"{n}x: search p50 {figures.search_p50_ms:.1f} ms, p95 {figures.search_p95_ms:.1f} ms, "
                      f"server RSS {figures.server_rss_mb:.0f} MB", flush=True)  # fmt: skip
                if args.embedding_provider == "hash":
                    measure_vector_leg(out, cases, figures)
            results.append(figures)
            if scratch_ctx is not None:
                shutil.rmtree(out, ignore_errors=True)
    finally:
        if scratch_ctx is not None:
            scratch_ctx.cleanup()
    report(results, args.embedding_provider)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
