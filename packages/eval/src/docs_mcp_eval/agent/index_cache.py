"""Indexes for scenarios that name their docs: built once with ``docs-mcp build``, then reused.

The eval package imports no other part of docs-mcp: it runs the ``docs-mcp build`` command (the one
installed next to this Python, else the one on ``PATH``) as a subprocess, like any user would, and
serves the result with ``docs-mcp-server`` over stdio.

An index lives in ``<cache>/indexes/<key>``, where the key is the first 16 hex digits of a SHA-256
over the docs folder's file list (relative path, size, modification time), its ``.docs-mcp.json``
and the scenario's index settings (``description``, ``toolDescriptions``, ``mcpServerInstructions``).
Editing a doc therefore builds a new index; an unchanged folder reuses the old one. A build writes to
a temporary folder that is renamed into place only when it succeeded, so a failed or interrupted
build never leaves a half-written index behind.

``docsSpec`` scenarios get their docs from git first: ``url`` at ``ref`` is fetched (depth 1) into
``<cache>/repos/<key>`` (key: SHA-256 of url and ref), once; ``docsConfig`` is written as the docs
folder's ``.docs-mcp.json`` when the repository has none.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

from docs_mcp_eval.agent.scenarios import DocsRepoSpec, IndexConfig
from docs_mcp_eval.errors import BuildCommandError, EvalError
from docs_mcp_eval.runner import CommandSpec, run_build

Log = Callable[[str], None]
CLONE_MARKER = ".clone-complete"
GIT_TIMEOUT_S = 600.0


def index_key(docs_dir: Path, config: IndexConfig) -> str:
    digest = hashlib.sha256()
    entries: list[tuple[str, int, int]] = []
    for current, dirs, files in os.walk(docs_dir):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(current) / name
            try:
                stat = path.stat()
            except OSError:
                continue
            entries.append((path.relative_to(docs_dir).as_posix(), stat.st_size, stat.st_mtime_ns))
    for relative, size, mtime in sorted(entries):
        digest.update(f"{relative}\0{size}\0{mtime}\0".encode())
    manifest = docs_dir / ".docs-mcp.json"
    if manifest.is_file():
        digest.update(manifest.read_bytes())
    settings = {
        "description": config.description,
        "toolDescriptions": dict(config.tool_descriptions),
        "mcpServerInstructions": config.mcp_server_instructions,
    }
    digest.update(b"\0index_config\0" + json.dumps(settings, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def ensure_index(
    docs_dir: Path,
    config: IndexConfig,
    *,
    cache_dir: Path,
    build_program: str,
    log: Log,
    build_timeout_s: float | None = None,
) -> Path:
    """The cached index of ``docs_dir`` with ``config``, built with ``<build_program> build`` if missing."""
    if not docs_dir.is_dir():
        raise EvalError(f"docs folder {docs_dir} does not exist or is not a folder")
    key = index_key(docs_dir, config)
    final = cache_dir / "indexes" / key
    if (final / "metadata.json").is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(f"{key}.partial-{uuid.uuid4().hex[:8]}")
    spec = CommandSpec(
        command=build_program,
        args=("build", "--docs-dir", str(docs_dir), "--out", str(partial), *config.build_args()),
    )
    log(f"building the index of {docs_dir} -> {final}")
    try:
        run_build(spec, build_timeout_s)
        if (final / "metadata.json").is_file():
            return final  # built meanwhile by a concurrent run
        if final.exists():
            shutil.rmtree(final)  # a leftover without metadata.json: never a usable index
        os.replace(partial, final)
    except BuildCommandError as exc:
        raise BuildCommandError(f"index build for {docs_dir} failed: {exc}") from None
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return final


def ensure_repo(spec: DocsRepoSpec, *, cache_dir: Path, log: Log) -> Path:
    """The docs folder of ``spec``, fetched into the cache the first time."""
    key = hashlib.sha256(f"{spec.url}\0{spec.ref}".encode()).hexdigest()[:16]
    repo = cache_dir / "repos" / key
    if not (repo / CLONE_MARKER).is_file():
        repo.parent.mkdir(parents=True, exist_ok=True)
        partial = repo.with_name(f"{key}.partial-{uuid.uuid4().hex[:8]}")
        log(f"fetching {spec.url} at {spec.ref} -> {repo}")
        try:
            partial.mkdir()
            _git(["init", "--quiet"], partial, spec)
            _git(["fetch", "--quiet", "--depth", "1", spec.url, spec.ref], partial, spec)
            _git(["checkout", "--quiet", "FETCH_HEAD"], partial, spec)
            (partial / CLONE_MARKER).write_text(f"{spec.url} {spec.ref}\n", encoding="utf-8")
            if repo.exists():
                shutil.rmtree(repo)
            os.replace(partial, repo)
        finally:
            if partial.exists():
                shutil.rmtree(partial, ignore_errors=True)
    docs = (repo / spec.docs_path).resolve()
    if not docs.is_relative_to(repo.resolve()) or not docs.is_dir():
        raise EvalError(f"docsSpec {spec.url}@{spec.ref}: docsPath {spec.docs_path!r} is not a folder of it")
    manifest = docs / ".docs-mcp.json"
    if spec.docs_config is not None and not manifest.exists():
        manifest.write_text(json.dumps(spec.docs_config, indent=2) + "\n", encoding="utf-8")
    return docs


def _git(args: list[str], cwd: Path, spec: DocsRepoSpec) -> None:
    try:
        completed = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except FileNotFoundError:
        raise EvalError("docsSpec needs git, which is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise EvalError(f"git {args[0]} of {spec.url} did not finish within {GIT_TIMEOUT_S:g} s") from None
    if completed.returncode != 0:
        detail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
        raise EvalError(f"cannot fetch docsSpec {spec.url} at {spec.ref!r}: " + " / ".join(detail))
