"""Two ``docs-mcp build`` processes into one ``--out`` folder: the second is refused at once, naming
the first's pid, or waits for it with ``--wait``; the index is never damaged.

The first build is held at a known point (its embedding preflight, against a local fake OpenAI
server that answers only when the test releases it), so the overlap is certain rather than timed.
"""

from __future__ import annotations

import hashlib
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_core.search import SearchEngine
from tests.fakes.openai_server import FakeOpenAI
from tests.support.programs import cli_env, docs_mcp_command, run_docs_mcp

pytestmark = pytest.mark.integration  # starts processes or listens on ports

LOCK_FILE = ".docs-mcp-build.lock"


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


class Build:
    """A ``docs-mcp build`` child process whose stderr lines are collected as they come."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [*docs_mcp_command(), "build", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def wait_for_line(self, text: str, timeout: float = 60.0) -> str:
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(f"no stderr line with {text!r} within {timeout}s; got: {''.join(self.stderr)}")
            self.stderr.append(line)
            if text in line:
                return line

    def finish(self, timeout: float = 180.0) -> tuple[int, str, str]:
        try:
            stdout, _ = self.proc.communicate(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        while not self.lines.empty():
            self.stderr.append(self.lines.get())
        return self.proc.returncode, stdout, "".join(self.stderr)


def held_build(
    docs: Path, out: Path | str, api: FakeOpenAI, cache: Path, *extra: str, api_key: str | None = None
) -> Build:
    """A build that takes the lock and then waits in its embedding preflight until ``api.release()``."""
    api.hold()
    build = Build(
        [
            "--docs-dir",
            str(docs),
            "--out",
            str(out),
            "--embedding-provider",
            "openai",
            "--embedding-model",
            "text-embedding-3-small",
            "--embedding-base-url",
            api.base_url,
            "--embedding-api-key",
            api_key or api.api_key,
            "--cache-dir",
            str(cache),
            *extra,
        ]
    )
    api.wait_for(lambda: bool(api.requests_to("embeddings")) or build.proc.poll() is not None, timeout=90)
    if not api.requests_to("embeddings"):
        build.proc.kill()
        pytest.fail(f"the first build never reached its embedding preflight: {build.finish()[2]}")
    return build


def index_files(out: Path) -> dict[str, str]:
    """The live index's files and their hashes (the lock file and working files left out)."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
        and (p.name in ("chunks.json", "metadata.json") or ".lancedb" in p.relative_to(out).parts)
    }


def test_a_second_build_into_the_same_folder_is_refused_naming_the_first(
    tmp_path: Path, examples_docs: Path, api: FakeOpenAI
) -> None:
    out = tmp_path / "idx"
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out)
    assert done.returncode == 0, done.stderr
    before = index_files(out)

    first = held_build(examples_docs, out, api, tmp_path / "cache")
    try:
        assert (out / LOCK_FILE).is_file()
        second = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out, timeout=120)
        assert second.returncode == 1, second.stderr
        assert f"another build (pid {first.proc.pid}" in second.stderr
        assert "--wait" in second.stderr
        assert "Traceback" not in second.stderr
        assert index_files(out) == before  # the refused build touched nothing
        assert first.proc.poll() is None  # and did not disturb the first one
    finally:
        api.release()
    code, stdout, stderr = first.finish()
    assert code == 0, stderr
    assert "wrote" in stdout
    assert not (out / LOCK_FILE).exists()
    assert not (out / ".lancedb.work").exists()
    metadata = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert metadata["embedding"]["provider"] == "openai"
    engine = SearchEngine.open(out)
    try:
        assert engine.search("retry configuration", limit=3).hits
    finally:
        engine.close()


def test_with_wait_the_second_build_runs_once_the_first_has_finished(
    tmp_path: Path, examples_docs: Path, api: FakeOpenAI
) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(examples_docs, docs)
    out = tmp_path / "idx"
    first = held_build(docs, out, api, tmp_path / "cache")
    try:
        second = Build(["--docs-dir", str(docs), "--out", str(out), "--wait"])
        line = second.wait_for_line("waiting for the build holding", timeout=90)
        assert f"pid {first.proc.pid}" in line
        assert second.proc.poll() is None
    finally:
        api.release()
    code, _, stderr = first.finish()
    assert code == 0, stderr
    code, stdout, stderr = second.finish()
    assert code == 0, stderr
    assert "wrote" in stdout
    # the second build ran after the first and published last: its index (no embeddings) is live
    metadata = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert metadata.get("embedding") is None
    assert not (out / LOCK_FILE).exists()
    engine = SearchEngine.open(out)
    try:
        hit = engine.search("retry configuration", limit=1).hits[0]
        assert engine.get_doc(hit.chunk_id).startswith("--- Chunk:")
    finally:
        engine.close()


def test_a_refused_first_build_into_a_new_folder_leaves_nothing_behind(
    tmp_path: Path, examples_docs: Path, api: FakeOpenAI
) -> None:
    """The first build created the folder and fails; the build waiting on it still gets a lock
    (on the folder it creates again), not a lock on the removed one."""
    out = tmp_path / "fresh" / "idx"
    first = held_build(examples_docs, out, api, tmp_path / "cache", api_key="sk-wrong")
    second = Build(["--docs-dir", str(examples_docs), "--out", str(out), "--wait"])
    try:
        second.wait_for_line("waiting for the build holding", timeout=90)
    finally:
        api.release()
    code, _, stderr = first.finish()
    assert code == 1, stderr  # the fake API rejects the key: the first build fails
    code, _, stderr = second.finish()
    assert code == 0, stderr
    assert (out / "metadata.json").is_file()
    assert not (out / LOCK_FILE).exists()


def test_search_and_get_on_a_table_without_its_data_files_say_how_to_rebuild(
    tmp_path: Path, examples_docs: Path
) -> None:
    """What the clobbered index of two racing builds looked like: a table whose data files are gone."""
    out = tmp_path / "idx"
    done = run_docs_mcp("build", "--docs-dir", examples_docs, "--out", out)
    assert done.returncode == 0, done.stderr
    for data_file in (out / ".lancedb" / "chunks.lance" / "data").iterdir():
        data_file.unlink()
    for args in (("search", "retry configuration"), ("get", "guides/retries.md#retries")):
        result = run_docs_mcp(*args, "--index-dir", out)
        assert result.returncode == 1, result.stderr
        assert f"error: the index at '{out}' cannot be read (lance error: Not found" in result.stderr
        assert f"rebuild it with docs-mcp build --out {out}" in result.stderr
        assert "unexpectedly" not in result.stderr and "Traceback" not in result.stderr
        assert ".rs:" not in result.stderr  # the library's source location is left out
