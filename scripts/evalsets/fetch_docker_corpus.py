"""Fetch a fourth corpus of the command-line-tool kind: the Docker CLI reference, at a pinned commit.

    uv run python scripts/evalsets/fetch_docker_corpus.py                 # clones docker/cli
    uv run python scripts/evalsets/fetch_docker_corpus.py --source DIR    # a local clone (bare or not)
                                                                          # -> evals/corpora/docker-cli-docs/

The Docker CLI (Apache-2.0, Copyright 2013-2017 Docker, Inc.) keeps its reference in
``docs/reference/`` of the ``docker/cli`` repository: **one page per command** under
``commandline/`` (``container_run.md``, ``image_ls.md``, ``swarm_init.md``: a ``#`` title that is
the command's last word or words, ``# run``, ``# ps``, ``# volume create``; between the
``<!---MARKER_GEN_START-->`` comments a generated one-line description, ``### Aliases`` and
``### Options``, a **table** with one row per flag whose name links to the example that explains
it, ``[`--filter`](#filter)``; then ``## Description`` and ``## Examples`` with one ``###`` section
per option, its anchor an HTML element in the heading, ``### <a name="filter"></a> Filtering
(--filter)``). The short forms (``run.md``, ``ps.md``, ``create.md``: ``# docker run``) repeat
only the generated part, with the same table without links. ``commandline/docker.md`` documents
the ``docker`` command itself with the CLI's environment variables and its ``config.json``
properties; ``run.md`` (running containers), ``dockerd.md`` (the daemon, its flags and
``daemon.json``), ``glossary.md`` and ``index.md`` sit one level up. The manifest says
``chunk_by: h3`` with ``max_chunk_size: 6000`` for ``commandline/**``, so that the options table
and each option's example are chunks of their own (``## Description`` has no ``###`` of its own on
most pages and joins the options chunk before it), and ``chunk_by: h2`` with ``max_chunk_size:
6000`` for the four other pages, whose ``##`` sections carry text of their own before their
``###`` ones (a longer section is refined at its deeper headings). An options table longer than
6000 characters (``docker run``, ``docker create``, ``docker service create`` and ``update``) stays
one chunk: a table is not cut.

The script reads a clone of the repository (``--source``; without it, a bare clone it makes from
GitHub for the run), checks that the pinned commit is there and that its tree hash is the one pinned
here (a checksum of every file), and copies out of it, with ``git archive``, the markdown pages
under ``docs/reference/``, the ``LICENSE`` and the ``NOTICE``, unchanged. The plugin pages
(``docs/extend/``) and ``docs/deprecated.md`` are not read. It writes a ``.docs-mcp.json`` manifest
with a ``kind`` taxonomy (``command``, ``reference``) and a ``SOURCE.txt`` that records the
repository, the commit and the licence.

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
    copy_members,
    replace_folder,
    source_fetch_main,
    write_provenance,
)
from evalset_common import EVALS_DIR, EvalSetError

REPOSITORY = "docker/cli"
COMMIT = "28f756087eea5fa301f3fbf12b01ae62f91521c2"  # 2026-08-20
TREE = "00723e106f9ebf94867d3509128c02f6a338c71a"
LICENSE = "LICENSE"
NOTICE = "NOTICE"
DOCS = "docs/reference/"
NAME = "docker-cli-docs"

MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h2", "max_chunk_size": 6000},
    "taxonomy": {
        "kind": {
            "description": (
                "Filter by kind of page: 'command' (one page per docker command: its options table and"
                " examples; docker.md also holds the CLI's environment variables and config.json) or"
                " 'reference' (running containers with docker run, the dockerd daemon and its"
                " daemon.json, the glossary)."
            )
        }
    },
    "mcpServerInstructions": (
        "The Docker CLI reference: one page per docker command (container, image, network, volume,"
        " swarm, service, stack, context, plugin, system... subcommands) with its options and examples,"
        " the CLI's environment variables and config.json, running containers with docker run, and"
        " the dockerd daemon with its options and daemon.json."
    ),
    "overrides": [
        {"pattern": "**", "metadata": {"kind": "reference"}},
        {
            "pattern": "commandline/**",
            "strategy": {"chunk_by": "h3", "max_chunk_size": 6000},
            "metadata": {"kind": "command"},
        },
    ],
}


def docs_path(name: str) -> str | None:
    """Where an archive member goes: the markdown pages of ``docs/reference/``, the licence and notice."""
    if name in (LICENSE, NOTICE):
        return name
    if name.startswith(DOCS) and name.endswith(".md"):
        return name.removeprefix(DOCS)
    return None


def fetch(out: Path, git_dir: Path) -> str:
    archive = archive_at(git_dir, REPOSITORY, COMMIT, DOCS.rstrip("/"), LICENSE, NOTICE)
    check_tree(git_dir, REPOSITORY, COMMIT, TREE)

    def fill(staging: Path) -> int:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
            files = copy_members(tar, staging, docs_path, f"{REPOSITORY}@{COMMIT[:12]}")
        if not (staging / "commandline").is_dir():
            raise EvalSetError(f"{DOCS}commandline/ is missing at {COMMIT[:12]}; is the commit right?")
        write_provenance(
            staging,
            MANIFEST,
            f"https://github.com/{REPOSITORY} at commit {COMMIT} (tree {TREE}): {DOCS}**/*.md, {LICENSE}"
            f" and {NOTICE}.\n"
            f"Licence: Apache-2.0, Copyright 2013-2017 Docker, Inc. ({LICENSE} and {NOTICE} beside this one).\n"
            f"Unchanged; .docs-mcp.json added (scripts/evalsets/fetch_docker_corpus.py).\n",
        )
        return files

    files = replace_folder(out, "fetch-docker-", fill)
    return f"{REPOSITORY}@{COMMIT[:12]}: {files} files (reference markdown, licence and notice) -> {out}"


def main(argv: Sequence[str] | None = None) -> int:
    return source_fetch_main(
        argv,
        description="Copy the Docker CLI reference at a pinned commit out of a clone.",
        repository=REPOSITORY,
        default_out=EVALS_DIR / "corpora" / NAME,
        fetch=fetch,
    )


if __name__ == "__main__":
    sys.exit(main())
