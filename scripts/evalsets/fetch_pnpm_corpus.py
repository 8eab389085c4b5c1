"""Fetch a third corpus of the command-line-tool kind: the pnpm documentation, at a pinned commit.

    uv run python scripts/evalsets/fetch_pnpm_corpus.py                 # clones pnpm/pnpm.io
    uv run python scripts/evalsets/fetch_pnpm_corpus.py --source DIR    # a local clone (bare or not)
                                                                        # -> evals/corpora/pnpm-docs/

pnpm (a JavaScript package manager; MIT, (c) Zoltan Kochan and contributors) keeps the current
documentation of its website in ``docs/`` of the ``pnpm/pnpm.io`` repository, written for
Docusaurus: **one page per command** (``cli/add.md``, ``cli/install.md``: a description, then
``## Options`` with one ``###`` section per flag, ``### --save-dev, -D``), the configuration
reference (``settings.md`` and nine ``settings/*.md`` pages with one ``###`` section per
``pnpm-workspace.yaml`` key, ``### nodeLinker``; ``package_json.md``, ``npmrc.md``, ``pnpmfile.md``),
the feature pages and recipes (workspaces, catalogs, filtering, CI, Docker...), the error codes and
a FAQ. No page has a ``#`` heading: each takes its title from its front matter (``id``, ``title``),
and its sections are at ``##`` and ``###``. The manifest says ``chunk_by: h2`` with
``max_chunk_size: 6000`` (a longer section is refined at its deeper headings: the ``## Settings``
summary of ``settings.md``, the hooks and custom resolvers of ``pnpmfile.md``, the exotic sources
of ``package-sources.md``; the table of projects in Workspaces' usage examples is cut in two), and
``chunk_by: h3`` for ``settings/**``, whose pages put one key per ``###`` (``### nodeLinker``)
either with no ``##`` at all or under ``##`` group headings with no text of their own
(``## Store Settings``), and for ``supply-chain-security.md``, all of whose sections are ``###``:
at ``h2`` each of these pages would be one chunk of six to twenty sections. ``h3`` is not used
elsewhere because only headings of the chosen level start a chunk: a command page's ``## Options``
after ``### subcommand`` sections, or a guide's ``##`` sections, would be glued to the section
before them.

The script reads a clone of the repository (``--source``; without it, a bare clone it makes from
GitHub for the run), checks that the pinned commit is there and that its tree hash is the one pinned
here (a checksum of every file), and copies out of it, with ``git archive``, the markdown pages under
``docs/`` and the ``LICENSE``. One change: nine sections live in MDX fragments
(``settings/_scriptShell.mdx``, ``_catalogMode.mdx``, ``_cpuFlag.mdx``...) that pages import and
render (``import ScriptShell from './_scriptShell.mdx'``, then ``<ScriptShell />``); the script
writes each fragment's text in place of those two lines, as the website shows the page, so that
``### scriptShell`` is a section of ``settings/other.md`` and ``### --cpu=<name>`` one of
``cli/install.md`` and ``cli/add.md``. The fragments themselves are not written. Translations,
versioned docs and the blog live elsewhere in the repository and are not read. It writes a
``.docs-mcp.json`` manifest with a ``kind`` taxonomy (``command``, ``configuration``, ``guide``) and
a ``SOURCE.txt`` that records the repository, the commit, the licence and that change.

The output folder is git-ignored; never commit it. An existing output folder is replaced only after
the new one is complete.
"""

from __future__ import annotations

import io
import posixpath
import re
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

from corpus_fetch import (
    archive_at,
    check_tree,
    replace_folder,
    source_fetch_main,
    tar_files,
    write_into,
    write_provenance,
)
from evalset_common import EVALS_DIR, EvalSetError

REPOSITORY = "pnpm/pnpm.io"
COMMIT = "4096ad35b19c7d7e0c2c64c704c57daf5bb91668"  # 2026-08-18
TREE = "c9f15fb5a67eb274c442b4d2c0613737ac973f47"
LICENSE = "LICENSE"
DOCS = "docs/"
NAME = "pnpm-docs"

MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h2", "max_chunk_size": 6000},
    "taxonomy": {
        "kind": {
            "description": (
                "Filter by kind of page: 'command' (one page per pnpm command, with its options), "
                "'configuration' (pnpm-workspace.yaml settings, package.json fields, .npmrc, .pnpmfile) "
                "or 'guide' (installation, workspaces, catalogs, filtering, CI, Docker, errors, FAQ)."
            )
        }
    },
    "mcpServerInstructions": (
        "The pnpm documentation: one page per command with its options, the settings of "
        "pnpm-workspace.yaml, package.json fields, .npmrc and .pnpmfile hooks, and the guides "
        "(workspaces, catalogs, filtering, CI, Docker, global packages, errors, FAQ)."
    ),
    "overrides": [
        {"pattern": "**", "metadata": {"kind": "guide"}},
        {"pattern": "cli/**", "metadata": {"kind": "command"}},
        {"pattern": "settings.md", "metadata": {"kind": "configuration"}},
        {
            "pattern": "settings/**",
            "strategy": {"chunk_by": "h3", "max_chunk_size": 6000},
            "metadata": {"kind": "configuration"},
        },
        {"pattern": "package_json.md", "metadata": {"kind": "configuration"}},
        {"pattern": "npmrc.md", "metadata": {"kind": "configuration"}},
        {"pattern": "pnpmfile.md", "metadata": {"kind": "configuration"}},
        {"pattern": "supply-chain-security.md", "strategy": {"chunk_by": "h3", "max_chunk_size": 6000}},
    ],
}


# ``import Name from './_fragment.mdx'``, blank lines, then ``<Name />`` on a line of its own.
_FRAGMENT_USE_RE = re.compile(
    r"^import (?P<name>[A-Za-z]\w*) from '(?P<path>[^']+\.mdx)';?[ \t]*\n(?:[ \t]*\n)*<(?P=name) ?/>[ \t]*$",
    re.MULTILINE,
)


def docs_path(name: str) -> str | None:
    """Where an archive member goes: the pages and fragments of ``docs/``, and the licence."""
    if name == LICENSE:
        return name
    if name.startswith(DOCS) and name.endswith((".md", ".mdx")):
        return name.removeprefix(DOCS)
    return None


def inline_fragments(page: str, text: str, fragments: dict[str, str]) -> str:
    """``text`` of ``page`` with each imported MDX fragment written in place of its import and use."""

    def fragment(match: re.Match[str]) -> str:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(page), match.group("path")))
        if path not in fragments:
            raise EvalSetError(f"{DOCS}{page}: imports {match.group('path')}, which is not in {DOCS}")
        return fragments[path].strip("\n")

    inlined = _FRAGMENT_USE_RE.sub(fragment, text)
    if ".mdx'" in inlined:
        raise EvalSetError(f"{DOCS}{page}: an MDX import is left that the script cannot write in")
    return inlined


def unpack(archive_bytes: bytes, dest: Path) -> int:
    """Write the archive's pages, their fragments written in, and licence into ``dest``; the number
    of files."""
    with tarfile.open(fileobj=io.BytesIO(archive_bytes), mode="r:") as archive:
        files = dict(tar_files(archive, docs_path))
    fragments = {path: data.decode("utf-8") for path, data in files.items() if path.endswith(".mdx")}
    count = 0
    for path, data in files.items():
        if path.endswith(".mdx"):
            continue
        if path.endswith(".md"):
            data = inline_fragments(path, data.decode("utf-8"), fragments).encode("utf-8")
        write_into(dest, path, data)
        count += 1
    return count


def fetch(out: Path, git_dir: Path) -> str:
    archive = archive_at(git_dir, REPOSITORY, COMMIT, DOCS.rstrip("/"), LICENSE)
    check_tree(git_dir, REPOSITORY, COMMIT, TREE)

    def fill(staging: Path) -> int:
        files = unpack(archive, staging)
        for folder in ("cli", "settings"):
            if not (staging / folder).is_dir():
                raise EvalSetError(f"{DOCS}{folder}/ is missing at {COMMIT[:12]}; is the commit right?")
        write_provenance(
            staging,
            MANIFEST,
            f"https://github.com/{REPOSITORY} at commit {COMMIT} (tree {TREE}): {DOCS}**/*.md and {LICENSE}.\n"
            f"Licence: MIT, (c) 2016-2022 Zoltan Kochan and other contributors ({LICENSE} beside this one).\n"
            f"Changed: the MDX fragments {DOCS}settings/_*.mdx written into the pages that import them, in"
            f" place of the import and the component (as the site renders them), and not copied themselves;"
            f" .docs-mcp.json added (scripts/evalsets/fetch_pnpm_corpus.py).\n",
        )
        return files

    files = replace_folder(out, "fetch-pnpm-", fill)
    return f"{REPOSITORY}@{COMMIT[:12]}: {files} files (docs markdown and licence) -> {out}"


def main(argv: Sequence[str] | None = None) -> int:
    return source_fetch_main(
        argv,
        description="Copy the pnpm documentation at a pinned commit out of a clone.",
        repository=REPOSITORY,
        default_out=EVALS_DIR / "corpora" / NAME,
        fetch=fetch,
    )


if __name__ == "__main__":
    sys.exit(main())
