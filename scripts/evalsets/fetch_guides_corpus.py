"""Fetch the second evaluation corpus: the Fastify documentation, at a pinned version.

    uv run python scripts/evalsets/fetch_guides_corpus.py            # -> evals/corpora/fastify/

Fastify (a Node.js web framework, MIT licence) ships its hand-written documentation in its npm
package: ``docs/Guides/*.md`` (tutorials, migration guides, recommendations) and
``docs/Reference/*.md`` (server options, routes, hooks, reply, validation...), 41 files and about
680 KB of prose and examples. The script asks the npm client for the package tarball of the pinned
version (``npm pack``), checks its SHA-256 against the value pinned here, and unpacks the markdown
files of ``docs/`` and the ``LICENSE`` into the output folder (git-ignored; never commit it). It then
writes a ``.docs-mcp.json`` manifest:

* ``chunk_by: h3``: every page opens with a single ``##`` title (``## Routes``) and puts its
  sections at ``###``, so h2 would give one chunk per page;
* a ``kind`` taxonomy, ``guide`` for ``Guides/`` and ``reference`` for ``Reference/``, which the
  index offers as a filter.

An existing output folder is replaced only after the new one is complete.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

from corpus_fetch import copy_members
from evalset_common import EVALS_DIR, EvalSetError, fail

PACKAGE = "fastify"
VERSION = "5.12.8"
SHA256 = "459048aabd9311309f4f95b36e8ca065e3a4613ded292bcf50442926931e4748"
TARBALL = f"{PACKAGE}-{VERSION}.tgz"

MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h3"},
    "taxonomy": {
        "kind": {"description": "Filter by kind of page: 'guide' (tutorials, how-tos) or 'reference' (API)."}
    },
    "mcpServerInstructions": (
        "Fastify documentation: guides (getting started, plugins, testing, serverless, migration) and "
        "the API reference (server, routes, hooks, reply, request, validation, errors)."
    ),
    "overrides": [
        {"pattern": "Guides/**", "metadata": {"kind": "guide"}},
        {"pattern": "Reference/**", "metadata": {"kind": "reference"}},
    ],
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(workdir: Path, tarball: Path | None) -> Path:
    """The package tarball: the given file, or one fetched with ``npm pack``."""
    if tarball is not None:
        if not tarball.is_file():
            raise EvalSetError(f"{tarball}: no such file (pass the {TARBALL} that npm pack wrote)")
        return tarball
    npm = shutil.which("npm")
    if npm is None:
        raise EvalSetError("npm is not on PATH: install Node.js/npm, or pass --tarball with the package file")
    command = [npm, "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", str(workdir), "--silent"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        raise EvalSetError(f"`{' '.join(command)}` took more than 300 s; try again later") from None
    path = workdir / TARBALL
    if done.returncode != 0 or not path.is_file():
        raise EvalSetError(f"`{' '.join(command)}` failed (exit {done.returncode}): {done.stderr.strip()}")
    return path


def docs_path(name: str) -> str | None:
    """Where a package member goes in the corpus: ``package/docs/**/*.md`` and the licence."""
    if name.startswith("package/docs/") and name.endswith(".md"):
        return name.removeprefix("package/docs/")
    return "LICENSE" if name == "package/LICENSE" else None


def unpack(tarball: Path, dest: Path) -> int:
    """Copy ``package/docs/**/*.md`` and ``package/LICENSE`` into ``dest``; returns the file count."""
    with tarfile.open(tarball, "r:gz") as archive:
        return copy_members(archive, dest, docs_path, str(tarball))


def fetch(out: Path, tarball: Path | None) -> str:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fetch-guides-", dir=out.parent) as tmp:
        workdir = Path(tmp)
        package = download(workdir, tarball)
        actual = sha256_of(package)
        if actual != SHA256:
            raise EvalSetError(
                f"{package}: SHA-256 is {actual}, expected {SHA256} for {PACKAGE}@{VERSION};"
                " the registry served different bytes, so the corpus would not match the cases"
            )
        staging = workdir / "corpus"
        staging.mkdir()
        files = unpack(package, staging)
        (staging / ".docs-mcp.json").write_text(json.dumps(MANIFEST, indent=2) + "\n", encoding="utf-8")
        if out.exists():
            old = workdir / "old"
            out.rename(old)
        staging.rename(out)
    return f"{PACKAGE}@{VERSION}: {files} files (docs/**/*.md and LICENSE), sha256 {SHA256[:12]}... -> {out}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch the Fastify docs corpus at a pinned version.")
    parser.add_argument(
        "--out", type=Path, default=EVALS_DIR / "corpora" / PACKAGE, help="default: evals/corpora/fastify"
    )
    parser.add_argument("--tarball", type=Path, help=f"use this {TARBALL} instead of running npm pack")
    args = parser.parse_args(argv)
    try:
        print(fetch(args.out, args.tarball))
    except EvalSetError as exc:
        return fail(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
