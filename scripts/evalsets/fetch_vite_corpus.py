"""Fetch the second guides corpus: the Vite documentation, at a pinned commit.

    uv run python scripts/evalsets/fetch_vite_corpus.py --git-dir PATH   # -> evals/corpora/vite-docs/

Vite (a front-end build tool and dev server; MIT licence) keeps its hand-written documentation in
``docs/`` of its repository, written for VitePress: the guide (``guide/*.md``: features, static
assets, env variables and modes, building for production, SSR, deploying, troubleshooting,
migration), the API pages beside it (``guide/api-*.md``: the plugin API, HMR, the JavaScript API,
the Environment API), the configuration reference (``config/*.md``: one ``##`` section per option,
``## server.proxy``, ``## build.rollupOptions``), and the notes on coming breaking changes
(``changes/*.md``). Each page opens with one ``#`` title and puts its sections at ``##`` (a few
long ones at ``###`` below that), so the manifest says ``chunk_by: h2``.

The script reads a clone of the Vite repository (``--git-dir``; a bare one is fine), checks that the
pinned commit is there and that its tree hash is the one pinned here (a checksum of every file), and
copies out of it, with ``git archive``, the documentation pages and the ``LICENSE``, unchanged. Pages
that are not documentation are left out: the blog (release announcements), the home page, the team
and acknowledgements pages and the live-stream page. It writes a ``.docs-mcp.json`` manifest with a
``kind`` taxonomy (``guide``, ``api``, ``config``, ``changes``) and a ``SOURCE.txt`` that records the
repository, the commit, the licence and what was left out.

The output folder is git-ignored; never commit it. An existing output folder is replaced only after
the new one is complete.
"""

from __future__ import annotations

import io
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

from corpus_fetch import (
    archive_at,
    check_tree,
    clone_fetch_main,
    copy_members,
    replace_folder,
    write_provenance,
)
from evalset_common import EVALS_DIR, EvalSetError

REPOSITORY = "vitejs/vite"
COMMIT = "a98c8d95d552c6fa98ab66fb810f5b39ad5abf49"  # 2026-08-22
TREE = "95f94794183b13f300855caefb5ad9db03e30014"
LICENSE = "LICENSE"
DOCS = "docs/"
NAME = "vite-docs"
# Pages under docs/ that are not documentation of Vite.
LEFT_OUT = ("index.md", "blog.md", "team.md", "acknowledgements.md", "live.md")

MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h2", "max_chunk_size": 6000},
    "taxonomy": {
        "kind": {
            "description": (
                "Filter by kind of page: 'guide' (features, assets, env variables, build, SSR, deploying, "
                "troubleshooting, migration), 'api' (plugin API, HMR API, JavaScript API, Environment API), "
                "'config' (one section per config option) or 'changes' (notes on coming breaking changes)."
            )
        }
    },
    "mcpServerInstructions": (
        "The Vite documentation: the guide (features, static assets, env variables and modes, building, "
        "SSR, deploying, troubleshooting, migration), the plugin, HMR, JavaScript and Environment APIs, "
        "and the config reference (shared, server, build, preview, dep optimization, SSR, worker options)."
    ),
    "overrides": [
        {"pattern": "**", "metadata": {"kind": "guide"}},
        {"pattern": "guide/api-*.md", "metadata": {"kind": "api"}},
        {"pattern": "config/**", "metadata": {"kind": "config"}},
        {"pattern": "changes/**", "metadata": {"kind": "changes"}},
    ],
}


def docs_path(name: str) -> str | None:
    """Where an archive member goes in the corpus: the documentation pages and the licence."""
    if name == LICENSE:
        return name
    if not (name.startswith(DOCS) and name.endswith(".md")):
        return None
    relative = name.removeprefix(DOCS)
    if relative in LEFT_OUT or relative.startswith(("blog/", ".vitepress/")):
        return None
    return relative


def unpack(archive_bytes: bytes, dest: Path) -> int:
    """Write the archive's documentation pages and licence into ``dest``; the number of files."""
    with tarfile.open(fileobj=io.BytesIO(archive_bytes), mode="r:") as archive:
        return copy_members(archive, dest, docs_path)


def fetch(out: Path, git_dir: Path) -> str:
    archive = archive_at(git_dir, REPOSITORY, COMMIT, DOCS.rstrip("/"), LICENSE)
    check_tree(git_dir, REPOSITORY, COMMIT, TREE)

    def fill(staging: Path) -> int:
        files = unpack(archive, staging)
        for folder in ("guide", "config"):
            if not (staging / folder).is_dir():
                raise EvalSetError(f"{DOCS}{folder}/ is missing at {COMMIT[:12]}; is the commit right?")
        write_provenance(
            staging,
            MANIFEST,
            f"https://github.com/{REPOSITORY} at commit {COMMIT} (tree {TREE}): {DOCS}**/*.md and {LICENSE}.\n"
            f"Left out (not documentation): {DOCS}blog/**, {', '.join(DOCS + p for p in LEFT_OUT)}.\n"
            f"Licence: MIT, (c) 2019-present VoidZero Inc. and Vite contributors ({LICENSE} beside this one).\n"
            f"Unchanged; .docs-mcp.json added (scripts/evalsets/fetch_vite_corpus.py).\n",
        )
        return files

    files = replace_folder(out, "fetch-vite-", fill)
    return f"{REPOSITORY}@{COMMIT[:12]}: {files} files (docs markdown and licence) -> {out}"


def main(argv: Sequence[str] | None = None) -> int:
    return clone_fetch_main(
        argv,
        description="Copy the Vite documentation at a pinned commit out of a clone.",
        repository=REPOSITORY,
        default_out=EVALS_DIR / "corpora" / NAME,
        fetch=fetch,
    )


if __name__ == "__main__":
    sys.exit(main())
