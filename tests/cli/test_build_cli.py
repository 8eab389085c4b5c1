"""``docs-mcp build`` as a child process: output, exit codes, refusal of bad corpora, and a build
killed with SIGKILL midway leaving the previous index servable."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from docs_mcp_core.index.lock import LOCK_FILENAME
from docs_mcp_core.search import SearchEngine
from tests.support.file_digests import file_digests
from tests.support.programs import (
    cli_env,
    docs_mcp_command,
    permissions_enforced,
    run_docs_mcp,
    run_in_private_mount,
)

pytestmark = pytest.mark.integration  # starts processes or listens on ports

OLD_QUERY = "lighthouse"
OLD_HIT = "alpha.md#alpha/lighthouse"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _search_ids(out: Path, query: str) -> list[str]:
    return [h.chunk_id for h in SearchEngine.open(out).search(query, limit=50).hits]


@pytest.fixture(scope="module")
def built_old_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small working index, built by the CLI once for the module."""
    root = tmp_path_factory.mktemp("old-index")
    docs = _write(
        root / "old-docs",
        {
            ".docs-mcp.json": json.dumps(
                {"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"scope": "guide"}}
            ),
            "alpha.md": "# Alpha\n\n## Lighthouse\n\nThe lighthouse keeper trims the wick.\n",
        },
    )
    out = root / "out"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out)
    assert done.returncode == 0, done.stderr
    assert _search_ids(out, OLD_QUERY) == [OLD_HIT]
    return out


@pytest.fixture
def old_index(tmp_path: Path, built_old_index: Path) -> Path:
    """An output folder of the test's own holding a copy of the small working index (the test may
    rebuild it, or try to)."""
    out = tmp_path / "out"
    shutil.copytree(built_old_index, out)
    return out


def test_build_reports_steps_and_a_summary(cli_index: Path, examples_docs: Path) -> None:
    chunks = json.loads((cli_index / "chunks.json").read_text(encoding="utf-8"))
    assert sorted(p.name for p in cli_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    # a rebuild reuses the unchanged files and says so
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", cli_index)
    assert done.returncode == 0, done.stderr
    m = re.fullmatch(
        rf"wrote {len(chunks)} chunks from 20 files to (.+) \((\d+) files unchanged, [\d.]+ [KM]i?B, [\d.]+s\)\n",
        done.stdout,
    )
    assert m, done.stdout
    assert Path(m.group(1)) == cli_index.resolve() and int(m.group(2)) >= 15
    assert "validating" in done.stderr and "index: writing table" in done.stderr
    assert "Traceback" not in done.stderr


def test_build_reports_each_embedding_count_once(tmp_path: Path) -> None:
    """A log (stderr not a terminal) gets one ``embedding: N/N`` line, not the provider's last
    count and then the batch's end saying the same."""
    docs = _write(
        tmp_path / "docs",
        {
            ".docs-mcp.json": json.dumps({"version": "1"}),
            "a.md": "# A\n\n## One\n\nfirst\n\n## Two\n\nsecond\n",
        },
    )
    done = run_docs_mcp(
        "build", "--docs-dir", docs, "--out", tmp_path / "out", "--embedding-provider", "local"
    )
    assert done.returncode == 0, done.stderr
    counts = re.findall(
        r"^\[ *[\d.]+s\] (embedding(?: \(ETA [^)\n]*\))?: \d+/\d+)$", done.stderr, flags=re.MULTILINE
    )
    assert counts == ["embedding: 3/3"], done.stderr


def test_missing_docs_dir_exits_2(tmp_path: Path) -> None:
    done = run_docs_mcp("build", "--docs-dir", tmp_path / "nope", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "--docs-dir" in done.stderr and "nope" in done.stderr and "does not exist" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_unknown_embedding_provider_is_a_usage_error(tmp_path: Path, examples_docs: Path) -> None:
    out = tmp_path / "out"
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out, "--embedding-provider", "cohere")
    assert done.returncode == 2, done.stderr
    assert "'cohere' is not one of" in done.stderr and "--embedding-provider" in done.stderr
    assert "Value error" not in done.stderr
    assert not out.exists()


def test_an_index_whose_metadata_this_user_may_not_read_is_not_called_not_an_index(
    tmp_path: Path, examples_docs: Path
) -> None:
    # it was refused as "not a docs-mcp index (its metadata.json has no metadata_version ...)",
    # with the advice to remove the files if no longer needed: the index itself
    out = tmp_path / "idx"
    assert run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out).returncode == 0
    before = file_digests(out)
    wrapper = permissions_enforced()
    (out / "metadata.json").chmod(0o000)
    try:
        done = subprocess.run(
            [*wrapper, *docs_mcp_command(), "build", "--docs-dir", str(examples_docs), "--out", str(out)],
            capture_output=True, text=True, timeout=180, check=False, env=cli_env(),
        )  # fmt: skip
    finally:
        (out / "metadata.json").chmod(0o644)
    assert done.returncode == 2, done.stderr
    message = " ".join(line.strip(" │") for line in done.stderr.splitlines() if line.startswith("│"))
    assert (
        "(its metadata.json cannot be read: it is not a regular file, or this user may not read it;"
        in message
    )
    assert file_digests(out) == before


def test_an_out_folder_that_is_not_an_index_exits_2_untouched(tmp_path: Path, examples_docs: Path) -> None:
    out = _write(
        tmp_path / "mine",
        {"metadata.json": '{"author": "me"}\n', "chunks.json": "[]\n", ".lancedb/notes.txt": "my notes\n"},
    )
    before = file_digests(out)
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out)
    assert done.returncode == 2, done.stderr
    message = " ".join(line.strip(" │") for line in done.stderr.splitlines() if line.startswith("│"))
    assert message.startswith(
        f"Invalid value for '--out': '{out}' is not empty and is not a docs-mcp index (its metadata.json "
        "has no metadata_version; it holds .lancedb, chunks.json, metadata.json): "
    ), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert file_digests(out) == before


def test_empty_corpus_exits_1_and_keeps_the_old_index(tmp_path: Path, old_index: Path) -> None:
    before = file_digests(old_index)
    empty = _write(tmp_path / "empty", {})
    done = run_docs_mcp("build", "--docs-dir", empty, "--out", old_index)
    assert done.returncode == 1
    assert "no markdown files" in done.stderr and "untouched" in done.stderr
    assert "Traceback" not in done.stderr
    assert file_digests(old_index) == before
    assert _search_ids(old_index, OLD_QUERY) == [OLD_HIT]


def test_broken_corpus_exits_1_with_findings_and_keeps_the_old_index(tmp_path: Path, old_index: Path) -> None:
    before = file_digests(old_index)
    broken = _write(
        tmp_path / "broken",
        {
            ".docs-mcp.json": '{"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"scope": "guide"}}',
            "ok.md": "# Ok\n\n## Fine\n\ntext\n",
            "bad/.docs-mcp.json": "{ not json",
            "bad/page.md": "# Page\n\n## Section\n\ntext\n",
        },
    )
    done = run_docs_mcp("build", "--docs-dir", broken, "--out", old_index)
    assert done.returncode == 1
    assert "bad/.docs-mcp.json" in done.stderr
    assert "build refused" in done.stderr and "Traceback" not in done.stderr
    assert file_digests(old_index) == before
    assert _search_ids(old_index, OLD_QUERY) == [OLD_HIT]


def test_utf16_and_binary_files_are_refused_by_line_and_keep_the_old_index(
    tmp_path: Path, old_index: Path
) -> None:
    """Every byte of UTF-16 text without a byte-order mark, and of many binary files, is valid UTF-8
    (ASCII and NUL): such a file was indexed as text full of NULs that search answers then carried."""
    docs = _write(tmp_path / "docs", {".docs-mcp.json": '{"version": "1"}', "ok.md": "# Ok\n\ntext\n"})
    (docs / "utf16.md").write_bytes("# Retries\n\nBack off between tries.\n".encode("utf-16-le"))
    (docs / "marked.md").write_bytes("# Retries\n".encode("utf-16"))  # with its byte-order mark
    (docs / "blob.md").write_bytes(b"# Blob\n\nPK\x03\x04\x00\x00payload\n")
    before = file_digests(old_index)
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", old_index)
    assert done.returncode == 1, done.stderr
    errors = sorted(line for line in done.stderr.splitlines() if ": error: " in line)
    advice = "re-save it as UTF-8"
    nul = f"error: file holds a NUL byte (0x00), as UTF-16 text and binary files do, not UTF-8 text; {advice}"
    assert errors == [
        f"blob.md:3: {nul}",
        f"marked.md:1: error: file is UTF-16 (it starts with a UTF-16 byte-order mark), not UTF-8; {advice}",
        f"utf16.md:1: {nul}",
    ]
    assert "build refused" in done.stderr and "Traceback" not in done.stderr
    assert file_digests(old_index) == before


def test_bad_option_values_exit_2(tmp_path: Path, examples_docs: Path) -> None:
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", tmp_path / "o", "--workers", "0")
    assert done.returncode == 2
    assert "Invalid value for '--workers'" in done.stderr and "greater than or equal to 1" in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("flag", "value", "bound"),
    [
        ("--embedding-batch-size", "2049", "2048"),
        ("--embedding-concurrency", "33", "32"),
        ("--embedding-max-retries", "11", "10"),
    ],
)
def test_embedding_settings_beyond_their_range_are_usage_errors_for_every_provider(
    tmp_path: Path, examples_docs: Path, flag: str, value: str, bound: str
) -> None:
    # they were taken by a hash or local build without a word, and refused by an openai build only
    # once it had started (exit status 1), though the reference gives each its range
    out = tmp_path / "o"
    done = run_docs_mcp(
        "build", "--docs-dir", examples_docs, "--out", out, "--embedding-provider", "hash", flag, value
    )
    assert done.returncode == 2, done.stderr
    assert f"Invalid value for '{flag}'" in done.stderr and bound in done.stderr
    assert not out.exists()


# ── a build killed midway ──────────────────────────────────────────────────────────────────────

_WORDS = [
    *("anchor", "beacon", "cobalt", "dune", "ember", "fjord", "glacier", "harbor", "islet", "jetty"),
    *("kelp", "lagoon", "marsh", "nebula", "oasis", "prairie", "quartz", "reef", "summit", "tundra"),
    *("upland", "valley", "wharf", "yonder", "zenith"),
]


def _big_corpus(root: Path, files: int = 600, sections: int = 4) -> Path:
    """A generated corpus large enough that chunking and indexing take a noticeable time."""
    for i in range(files):
        parts = [f"# Topic {i}\n"]
        for s in range(sections):
            words = " ".join(_WORDS[(i * 7 + s * 3 + k) % len(_WORDS)] for k in range(60))
            parts.append(f"## Section {s} of topic {i}\n\n{words}.\n\n- item {i}-{s}\n- {words[:40]}\n")
        path = root / f"area{i % 12}" / f"page{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")
    (root / ".docs-mcp.json").write_text(
        json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"scope": "generated"}}),
        encoding="utf-8",
    )
    return root


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _big_corpus(tmp_path_factory.mktemp("big-corpus"))


def _read_lines(stream: object, sink: queue.Queue[str | None]) -> None:
    assert hasattr(stream, "readline")
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        sink.put(line)
    sink.put(None)


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", ["chunking: ", "index: full-text and scalar indexes"])
def test_build_killed_midway_leaves_the_old_index_working(
    tmp_path: Path, old_index: Path, big_corpus: Path, kill_after: str
) -> None:
    before = file_digests(old_index)
    proc = subprocess.Popen(
        [*docs_mcp_command(), "build", "--docs-dir", str(big_corpus), "--out", str(old_index)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,  # its own process group: the kill reaches chunking workers too
    )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(proc.stderr, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    deadline = time.monotonic() + 120
    try:
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                pytest.fail(f"build ended before printing {kill_after!r}: {''.join(seen)}")
            seen.append(line)
            if kill_after in line:
                os.killpg(proc.pid, signal.SIGKILL)
                break
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # no-op after the kill above; cleanup on failure
        proc.wait(timeout=30)
        reader.join(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, "the build finished before it could be killed"

    # the live index is still the old one, whole and searchable
    for name in (".lancedb", "chunks.json", "metadata.json"):
        assert (old_index / name).exists()
    # a killed build leaves its lock file (the lock itself dies with the process): not index data
    left = {
        k: v
        for k, v in file_digests(old_index).items()
        if not k.startswith(".lancedb.") and k != LOCK_FILENAME
    }
    assert left == before
    assert _search_ids(old_index, OLD_QUERY) == [OLD_HIT]

    # the next build cleans up the leftovers and replaces the index
    docs = _write(tmp_path / "next", {"beta.md": "# Beta\n\n## Harbor\n\nThe harbor master logs the tide.\n"})
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", old_index)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in old_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    # the old section is gone ("lighthouse" may still find the harbor by meaning)
    assert OLD_HIT not in _search_ids(old_index, OLD_QUERY)
    # the new section answers first; the page's title may follow by meaning (heading-path vectors
    # differ slightly by CPU, so whether it passes their threshold does too)
    ids = _search_ids(old_index, "harbor")
    assert ids[0] == "beta.md#beta/harbor" and all(i.startswith("beta.md#") for i in ids), ids


def _children_of(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (read from /proc)."""
    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[1]) == pid:
                found.add(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the chunking workers in /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_to_the_build_alone_stops_its_workers_too(
    old_index: Path, big_corpus: Path, sig: signal.Signals
) -> None:
    """Only the build gets the signal (as from ``kill PID`` or a supervisor), not its process group."""
    before = file_digests(old_index)
    proc = subprocess.Popen(
        [
            *docs_mcp_command(),
            "build",
            "--docs-dir",
            str(big_corpus),
            "--out",
            str(old_index),
            "--workers",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(proc.stderr, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    workers: set[int] = set()
    left: set[int] = set()
    deadline = time.monotonic() + 120
    try:
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                pytest.fail(f"build ended before chunking: {''.join(seen)}")
            seen.append(line)
            if "chunking: " in line:
                workers = _children_of(proc.pid)
                proc.send_signal(sig)
                break
        proc.wait(timeout=60)
        gone_by = time.monotonic() + 10
        while any(_running(pid) for pid in workers) and time.monotonic() < gone_by:
            time.sleep(0.05)  # polling /proc; bounded by gone_by
        left = {pid for pid in workers if _running(pid)}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for pid in workers:  # never leave them behind (they hold stderr open), even on failure
            if _running(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        reader.join(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
    while (rest := lines.get(timeout=30)) is not None:  # the reader has ended: the rest is queued
        seen.append(rest)
    stderr = "".join(seen)
    assert len(workers) == 2, f"expected two chunking workers, found {workers}"
    assert not left, f"chunking workers {sorted(left)} outlived the build"

    if sig == signal.SIGTERM:  # cleaned up as on Ctrl-C: exit 143, nothing left behind
        assert proc.returncode == 128 + signal.SIGTERM, stderr
        assert "error: terminated (the previous index, if any, is untouched)" in stderr
        assert "Traceback" not in stderr
        assert sorted(p.name for p in old_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
        assert file_digests(old_index) == before
    else:
        assert proc.returncode == -signal.SIGKILL
        # a killed build leaves its lock file (the lock itself dies with the process): not index data
        kept = {
            k: v
            for k, v in file_digests(old_index).items()
            if not k.startswith(".lancedb.") and k != LOCK_FILENAME
        }
        assert kept == before
    assert _search_ids(old_index, OLD_QUERY) == [OLD_HIT]


def test_build_says_once_that_markdown_files_not_named_md_are_skipped(tmp_path: Path) -> None:
    docs = _write(
        tmp_path / "docs",
        {"guide.md": "# Guide\n\nThe lighthouse guide.\n", "NOTES.MD": "# Notes\n\nzebrafish\n",
         "more/a.markdown": "# A\n\nzebrafish\n", "more/b.markdown": "# B\n\nzebrafish\n"},
    )  # fmt: skip
    out = tmp_path / "out"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out)
    assert done.returncode == 0, done.stderr
    skipped = [line for line in done.stderr.splitlines() if "do not end in .md" in line]
    assert skipped == [
        "more/a.markdown: warning: skipped, with 2 more markdown files whose names do not end in .md "
        "(only *.md, in lower case, is indexed, as in the original); rename them to .md to index them"
    ]
    assert " from 1 file to " in done.stdout
    assert "zebrafish" not in (out / "chunks.json").read_text(encoding="utf-8")


# ── symbolic links ─────────────────────────────────────────────────────────────────────────────


def test_build_skips_and_names_a_link_out_of_the_docs_folder(tmp_path: Path) -> None:
    outside = _write(tmp_path / "elsewhere", {"creds.md": "# Credentials\n\n## Key\n\nAKIA-SECRET\n"})
    docs = _write(tmp_path / "docs", {"guide.md": "# Guide\n\n## Start\n\nThe lighthouse guide.\n"})
    (docs / "creds.md").symlink_to(outside / "creds.md")
    out = tmp_path / "out"
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out)
    assert done.returncode == 0, done.stderr
    assert (
        f"\ncreds.md: warning: symbolic link to a file outside the docs folder ({outside.resolve()}"
        in done.stderr
    )
    assert "AKIA-SECRET" not in (out / "chunks.json").read_text(encoding="utf-8")
    assert " chunks from 1 file to " in done.stdout
    assert "(0 files unchanged, " in done.stdout

    done = run_docs_mcp("build", "--docs-dir", docs, "--out", out, "--follow-external-symlinks")
    assert done.returncode == 0, done.stderr
    assert "symbolic link" not in done.stderr
    assert _search_ids(out, "AKIA") == ["creds.md#credentials/key"]


def test_build_names_a_loop_of_links_and_keeps_the_old_index(tmp_path: Path, old_index: Path) -> None:
    before = file_digests(old_index)
    docs = _write(tmp_path / "loop", {"ok.md": "# Ok\n\n## Fine\n\ntext\n"})
    (docs / "a.md").symlink_to(docs / "b.md")
    (docs / "b.md").symlink_to(docs / "a.md")
    done = run_docs_mcp("build", "--docs-dir", docs, "--out", old_index)
    assert done.returncode == 1
    assert (
        "a.md: error: symbolic link loop: this link leads back to itself through other links" in done.stderr
    )
    assert "point it at a real file or remove it" in done.stderr
    assert "unexpectedly" not in done.stderr and "Traceback" not in done.stderr
    assert file_digests(old_index) == before


# ── no room to write ───────────────────────────────────────────────────────────────────────────


def _short_chunks_corpus(root: Path, files: int = 150) -> Path:
    """Many small chunks: with vectors, the table is much larger than chunks.json."""
    pages = {f"p{i}.md": f"# P{i}\n\n## S{i}\n\n{_WORDS[i % len(_WORDS)]}\n" for i in range(files)}
    return _write(root, pages)


def _largest_file(folder: Path) -> int:
    return max(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize("phase", ["chunks", "table"])
def test_a_file_size_limit_is_a_clear_error_and_keeps_the_old_index(
    tmp_path: Path, old_index: Path, big_corpus: Path, phase: str
) -> None:
    """RLIMIT_FSIZE makes writes past the limit fail with EFBIG, as a full disk fails with ENOSPC."""
    resource = pytest.importorskip("resource")
    before = file_digests(old_index)
    if phase == "chunks":  # chunks.json outgrows the limit while the corpus is chunked
        docs, extra, limit = big_corpus, [], 256 * 1024
    else:  # chunks.json fits, the table (with its vectors) does not: LanceDB fails
        docs, extra = _short_chunks_corpus(tmp_path / "short"), ["--embedding-provider", "hash"]
        probe = tmp_path / "probe"
        assert run_docs_mcp("build", "--docs-dir", docs, "--out", probe, *extra).returncode == 0
        table, chunks = _largest_file(probe / ".lancedb"), (probe / "chunks.json").stat().st_size
        assert table > 2 * chunks, (table, chunks)
        limit = (table + chunks) // 2

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [*docs_mcp_command(), "build", "--docs-dir", str(docs), "--out", str(old_index), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=cli_env(),
        preexec_fn=limit_file_size,
    )
    assert done.returncode == 1, done.stderr
    assert (
        f"error: cannot write {old_index.resolve()}: a file would exceed the size limit for files "
        "(File too large); raise the limit (ulimit -f), or build into a folder on a disk that allows "
        "larger files (--out) (the previous index, if any, is untouched)"
    ) in done.stderr
    assert "unexpectedly" not in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in old_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    assert file_digests(old_index) == before
    assert _search_ids(old_index, OLD_QUERY) == [OLD_HIT]


_FULL_DISK = r"""
set -u
mount -t tmpfs -o size=1m tmpfs "$1" || exit 77
"$2" build --docs-dir "$3" --out "$1/out" >/dev/null 2>&1 || { echo "small build failed"; exit 1; }
before=$(cd "$1/out" && find . -type f | sort | xargs sha256sum)
"$2" build --docs-dir "$4" --out "$1/out" >/dev/null 2>"$1/../stderr"
echo "rc=$?"
after=$(cd "$1/out" && find . -type f | sort | xargs sha256sum)
[ "$before" = "$after" ] && echo "old index unchanged"
ls -A "$1/out"
"""


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a private tmpfs")
@pytest.mark.skipif(len(docs_mcp_command()) != 1, reason="needs the installed docs-mcp script")
def test_a_full_disk_is_a_clear_error_and_keeps_the_old_index(tmp_path: Path, big_corpus: Path) -> None:
    """A real full disk: a 1 MiB tmpfs mounted in a private user and mount namespace."""
    small = _write(tmp_path / "small", {"a.md": "# A\n\n## Lighthouse\n\nThe keeper trims the wick.\n"})
    (tmp_path / "disk").mkdir()
    script = [_FULL_DISK, "sh", str(tmp_path / "disk"), docs_mcp_command()[0], str(small), str(big_corpus)]
    done = run_in_private_mount(script)
    assert done.returncode == 0, done.stdout + done.stderr
    stderr = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert done.stdout.splitlines() == [
        "rc=1",
        "old index unchanged",
        ".lancedb",
        "chunks.json",
        "metadata.json",
    ]
    assert (
        f"error: cannot write {tmp_path / 'disk' / 'out'}: the disk is full (No space left on device); "
        "free space on it, or build into a folder on another disk (--out)"
    ) in stderr
    assert "Traceback" not in stderr
