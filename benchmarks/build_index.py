"""Build speed, memory and size: ``uv run python benchmarks/build_index.py DOCS_DIR [--out DIR] [--runs N]``.

Copies ``DOCS_DIR`` to a scratch folder first (the source is never modified), then, per run, runs
``docs-mcp build`` as a child process three times:

1. **full**: into an empty output folder;
2. **no change**: again on the same output (every file is reused from the previous index);
3. **one edit**: after appending a paragraph to one markdown file of the copy.

For each it prints wall time (process start to exit, so Python start-up and imports count), the
time the CLI reports for the build itself, the peak RSS of the largest single process
(``wait4`` rusage, which includes the chunking workers it waited for) and the peak memory of the
whole process tree (``/proc`` polled every 20 ms: the PSS of the build process and its workers
summed, so pages a forked worker shares with its parent count once). Then the
size of the output folder (whole, and ``.lancedb`` only). With several runs it prints the best
and the median of each figure.

Targets (issue 3): full build <= 10 s and <= 400 MiB, one-file rebuild <= 3 s, output <= 72 MB.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
MB = 1_000_000
POLL_SECONDS = 0.02
_SECONDS_RE = re.compile(r", ([\d.]+)s\)\s*$")


@dataclass
class Measure:
    wall_s: float
    reported_s: float | None
    max_process_rss_mib: float
    tree_pss_mib: float
    cached_line: str


def docs_mcp_command() -> list[str]:
    script = Path(sys.executable).parent / "docs-mcp"
    if script.exists():
        return [str(script)]
    found = shutil.which("docs-mcp")
    return [found] if found else [sys.executable, "-c", "from docs_mcp_cli.entry import main; main()"]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _pss_kib(pid: int) -> int:
    """Proportional set size: shared pages (forked workers) are split between the processes sharing them."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_pss_kib(root: int) -> int:
    """PSS of ``root`` and all its descendants (the build and its chunking workers), in KiB."""
    tree = _children()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += _pss_kib(pid)
        stack.extend(tree.get(pid, []))
    return total


def run_build(docs: Path, out: Path, log: Path) -> Measure:
    """Run ``docs-mcp build`` once; measure wall time and memory."""
    env = dict(os.environ, LANCEDB_LOG="error")
    with (
        open(log, "w", encoding="utf-8") as err,
        open(log.with_suffix(".out"), "w", encoding="utf-8") as out_fh,
    ):
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*docs_mcp_command(), "build", "--docs-dir", str(docs), "--out", str(out)],
            stdout=out_fh,
            stderr=err,
            env=env,
        )
        peak_tree = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak_tree = max(peak_tree, tree_pss_kib(proc.pid))
            time.sleep(POLL_SECONDS)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = log.with_suffix(".out").read_text(encoding="utf-8")
    if proc.returncode != 0:
        sys.stderr.write(log.read_text(encoding="utf-8"))
        raise SystemExit(f"docs-mcp build failed with exit code {proc.returncode}")
    m = _SECONDS_RE.search(stdout)
    return Measure(
        wall_s=wall,
        reported_s=float(m.group(1)) if m else None,
        max_process_rss_mib=usage.ru_maxrss / 1024,  # KiB on Linux
        tree_pss_mib=peak_tree / 1024,
        cached_line=stdout.strip(),
    )


def directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def pick_file_to_edit(docs: Path) -> Path:
    """A mid-sized markdown file of the copy (deterministic: the median by size, then by path)."""
    files = sorted(
        (p for p in docs.rglob("*.md") if not p.name.endswith(".template.md")), key=lambda p: str(p)
    )
    if not files:
        raise SystemExit(f"no markdown files under {docs}")
    by_size = sorted(files, key=lambda p: (p.stat().st_size, str(p)))
    return by_size[len(by_size) // 2]


def _fmt(values: list[float], unit: str, digits: int = 2) -> str:
    if len(values) == 1:
        return f"{values[0]:.{digits}f} {unit}"
    return f"best {min(values):.{digits}f} {unit}, median {statistics.median(values):.{digits}f} {unit}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure docs-mcp build time, memory and output size.")
    parser.add_argument("docs_dir", type=Path, help="corpus to index (copied first, never modified)")
    parser.add_argument("--out", type=Path, help="keep the last run's index here (default: a temp folder)")
    parser.add_argument("--runs", type=int, default=1, help="repeat the three builds this many times")
    args = parser.parse_args(argv)
    if not args.docs_dir.is_dir():
        print(f"error: {args.docs_dir} is not a directory", file=sys.stderr)
        return 2
    if args.runs < 1:
        print("error: --runs must be at least 1", file=sys.stderr)
        return 2

    results: dict[str, list[Measure]] = {"full": [], "no change": [], "one edit": []}
    sizes: list[tuple[int, int]] = []
    with tempfile.TemporaryDirectory(prefix="docs-mcp-bench-") as scratch_name:
        scratch = Path(scratch_name)
        for run in range(1, args.runs + 1):
            docs = scratch / f"docs-{run}"
            shutil.copytree(args.docs_dir, docs, symlinks=True)
            out = args.out.resolve() if args.out and run == args.runs else scratch / f"out-{run}"
            if out.exists():
                shutil.rmtree(out)
            results["full"].append(run_build(docs, out, scratch / "full.log"))
            sizes.append((directory_bytes(out), directory_bytes(out / ".lancedb")))
            results["no change"].append(run_build(docs, out, scratch / "again.log"))
            edited = pick_file_to_edit(docs)
            with open(edited, "a", encoding="utf-8") as fh:
                fh.write(f"\n\nBenchmark edit {run}: an extra paragraph to rebuild this file.\n")
            results["one edit"].append(run_build(docs, out, scratch / "edit.log"))
            full = results["full"][-1]
            print(
                f"run {run}: full {full.wall_s:.2f} s ({full.max_process_rss_mib:.0f} MiB max process, "
                f"{full.tree_pss_mib:.0f} MiB tree PSS), no change {results['no change'][-1].wall_s:.2f} s, "
                f"one edit {results['one edit'][-1].wall_s:.2f} s ({edited.relative_to(docs)})",
                flush=True,
            )
            if out != (args.out.resolve() if args.out else None):
                shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(docs, ignore_errors=True)

    print()
    print(f"corpus: {args.docs_dir} ({args.runs} run{'s' if args.runs > 1 else ''})")
    for name, measures in results.items():
        reported = [m.reported_s for m in measures if m.reported_s is not None]
        print(f"{name:>10}: wall {_fmt([m.wall_s for m in measures], 's')}", end="")
        if reported:
            print(f"; build itself {_fmt(reported, 's', 1)}", end="")
        print(
            f"; peak RSS {_fmt([m.max_process_rss_mib for m in measures], 'MiB', 0)} (largest process), "
            f"{_fmt([m.tree_pss_mib for m in measures], 'MiB', 0)} (process tree PSS)"
        )
        print(f"{'':>12}{measures[-1].cached_line}")
    whole, lance = sizes[-1]
    print(f"    output: {whole / MB:.1f} MB whole ({whole / MIB:.1f} MiB), .lancedb {lance / MB:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
