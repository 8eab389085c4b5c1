"""Index and docs caches: keys follow the docs and settings, failed builds leave nothing, docsSpec
fetches once."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from docs_mcp_eval.agent.index_cache import CLONE_MARKER, ensure_index, ensure_repo, index_key
from docs_mcp_eval.agent.scenarios import DocsRepoSpec, IndexConfig
from docs_mcp_eval.errors import BuildCommandError, EvalError


def docs_folder(root: Path) -> Path:
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "a.md").write_text("# A\n\ntext\n")
    return root


def test_the_key_follows_files_manifest_and_settings(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path / "docs")
    base = index_key(docs, IndexConfig())
    assert len(base) == 16 and base == index_key(docs, IndexConfig())
    assert index_key(docs, IndexConfig(description="Tidewater")) != base
    assert index_key(docs, IndexConfig(tool_descriptions={"get_doc": "Fetch"})) != base
    (docs / ".docs-mcp.json").write_text('{"version": "1"}')
    with_manifest = index_key(docs, IndexConfig())
    assert with_manifest != base
    page = docs / "guides" / "a.md"
    page.write_text("# A\n\nchanged text\n")
    assert index_key(docs, IndexConfig()) != with_manifest


@pytest.mark.integration
def test_a_failed_build_leaves_no_index_behind(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path / "docs")
    build = tmp_path / "fake-build"
    # writes part of an index into --out, then fails
    build.write_text('#!/bin/sh\nmkdir -p "$5" && echo partial > "$5/chunks.json"\necho "boom" >&2\nexit 3\n')
    build.chmod(0o755)
    cache = tmp_path / "cache"
    with pytest.raises(
        BuildCommandError, match=r"index build for .*docs failed: Build command failed with exit code 3"
    ):
        ensure_index(docs, IndexConfig(), cache_dir=cache, build_program=str(build), log=lambda m: None)
    assert list((cache / "indexes").iterdir()) == []


@pytest.mark.integration
def test_a_successful_build_is_reused(tmp_path: Path) -> None:
    docs = docs_folder(tmp_path / "docs")
    build = tmp_path / "fake-build"
    counter = tmp_path / "builds"
    build.write_text(f'#!/bin/sh\necho run >> "{counter}"\nmkdir -p "$5" && echo {{}} > "$5/metadata.json"\n')
    build.chmod(0o755)
    cache = tmp_path / "cache"
    logged: list[str] = []
    first = ensure_index(docs, IndexConfig(), cache_dir=cache, build_program=str(build), log=logged.append)
    again = ensure_index(docs, IndexConfig(), cache_dir=cache, build_program=str(build), log=logged.append)
    assert first == again == cache / "indexes" / index_key(docs, IndexConfig())
    assert (first / "metadata.json").is_file()
    assert counter.read_text().count("run") == 1 and len(logged) == 1


def _git(*args: str, cwd: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env, timeout=60)


@pytest.mark.integration
def test_docs_spec_is_fetched_once_and_given_its_manifest(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    docs_folder(origin / "docs")
    _git("init", "--quiet", "--initial-branch", "main", cwd=origin)
    _git("add", ".", cwd=origin)
    _git("commit", "--quiet", "-m", "docs", cwd=origin)
    spec = DocsRepoSpec(
        url=origin.as_uri(),
        ref="main",
        docs_path="docs",
        docs_config={"version": "1", "strategy": {"chunk_by": "h2"}},
    )
    cache = tmp_path / "cache"
    logged: list[str] = []
    docs = ensure_repo(spec, cache_dir=cache, log=logged.append)
    assert (docs / "guides" / "a.md").read_text() == "# A\n\ntext\n"
    assert '"chunk_by": "h2"' in (docs / ".docs-mcp.json").read_text()
    assert (docs.parent / CLONE_MARKER).is_file()
    # the cached copy is used from now on, even without the origin
    shutil.rmtree(origin)
    assert ensure_repo(spec, cache_dir=cache, log=logged.append) == docs
    assert len(logged) == 1
    missing = DocsRepoSpec(url=(tmp_path / "nowhere").as_uri(), ref="main")
    with pytest.raises(EvalError, match=r"cannot fetch docsSpec .*nowhere at 'main'"):
        ensure_repo(missing, cache_dir=cache, log=logged.append)
    assert sorted(p.name for p in (cache / "repos").iterdir()) == [docs.parent.name]
