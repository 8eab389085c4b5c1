"""Fetch the fourth evaluation corpus: the Cargo book, a command-line tool's book, at a pinned commit.

    uv run python scripts/evalsets/fetch_book_corpus.py --git-dir PATH   # -> evals/corpora/cargo-book/

The Cargo book (the documentation of Rust's package manager; MIT or Apache-2.0, at the user's
choice) is the other common shape of a command-line tool's documentation, beside uv's
(``fetch_cli_corpus.py``): hand-written guides, a reference of its configuration keys
(``reference/config.md``: one ``###`` section per table such as ``[build]``, one ``####`` per key such
as ``build.jobs``), a reference of the manifest format and of environment variables, and **one
generated page per command** (``commands/cargo-build.md``, written from the man pages), whose options
are HTML definition lists with element ids and anchors that name the command and the option
(``<dt class="option-term" id="option-cargo-build---release">``). The same option groups
(``### Display Options``, ``### Manifest Options``, ``### Common Options``) repeat nearly verbatim on
dozens of command pages.

The script reads a clone of the Cargo repository (``--git-dir``; a bare one is fine), checks that the
pinned commit is there, and copies out of it, with ``git archive``, the markdown files under
``doc/book/src/`` (the book; the contributor guide is left out) and both licence files, unchanged. It
writes a ``.docs-mcp.json`` manifest (``chunk_by: h2``; larger sections are split at their own
headings by the build) with a ``kind`` taxonomy (``guide``, ``reference``, ``command``) and a
``SOURCE.txt`` that records the repository, the commit and what was added.

The output folder is git-ignored; never commit it. An existing output folder is replaced only after
the new one is complete.
"""

from __future__ import annotations

import io
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

from corpus_fetch import archive_at, clone_fetch_main, copy_members, replace_folder, write_provenance
from evalset_common import EVALS_DIR, EvalSetError

REPOSITORY = "rust-lang/cargo"
COMMIT = "af373f761aa4e42b093c2e453078fd73c8ce54dd"  # 2026-08-22
LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")
BOOK = "doc/book/src/"
NAME = "cargo-book"

MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h2"},
    "taxonomy": {
        "kind": {
            "description": (
                "Filter by kind of page: 'guide' (getting started and how-tos), 'reference' (the manifest, "
                "configuration keys, environment variables, registries, build scripts) or 'command' (one "
                "page per cargo command, with its options)."
            )
        }
    },
    "mcpServerInstructions": (
        "The Cargo book: guides, the reference (Cargo.toml manifest, .cargo/config.toml keys, environment "
        "variables, profiles, features, workspaces, registries) and one page per cargo command."
    ),
    "overrides": [
        {"pattern": "**", "metadata": {"kind": "guide"}},
        {"pattern": "reference/**", "metadata": {"kind": "reference"}},
        {"pattern": "appendix/**", "metadata": {"kind": "reference"}},
        {"pattern": "CHANGELOG.md", "metadata": {"kind": "reference"}},
        {"pattern": "commands/**", "metadata": {"kind": "command"}},
    ],
}


def book_path(name: str) -> str | None:
    """Where an archive member goes in the corpus: the book's markdown and the licences."""
    if name in LICENSES:
        return name
    if name.startswith(BOOK) and name.endswith(".md"):
        return name.removeprefix(BOOK)
    return None


def unpack(archive_bytes: bytes, dest: Path) -> int:
    """Write the archive's book markdown and licences into ``dest``; the number of files."""
    with tarfile.open(fileobj=io.BytesIO(archive_bytes), mode="r:") as archive:
        return copy_members(archive, dest, book_path)


def fetch(out: Path, git_dir: Path) -> str:
    archive = archive_at(git_dir, REPOSITORY, COMMIT, BOOK.rstrip("/"), *LICENSES)

    def fill(staging: Path) -> int:
        files = unpack(archive, staging)
        if not (staging / "commands").is_dir():
            raise EvalSetError(f"{BOOK}commands/ is missing at {COMMIT[:12]}; is the commit right?")
        write_provenance(
            staging,
            MANIFEST,
            f"https://github.com/{REPOSITORY} at commit {COMMIT}: {BOOK}**/*.md and {', '.join(LICENSES)}.\n"
            f"Licence: MIT or Apache-2.0 (both files beside this one).\n"
            f"Unchanged; .docs-mcp.json added (scripts/evalsets/fetch_book_corpus.py).\n",
        )
        return files

    files = replace_folder(out, "fetch-book-", fill)
    return f"{REPOSITORY}@{COMMIT[:12]}: {files} files (book markdown and licences) -> {out}"


def main(argv: Sequence[str] | None = None) -> int:
    return clone_fetch_main(
        argv,
        description="Copy the Cargo book at a pinned commit out of a clone.",
        repository=REPOSITORY,
        default_out=EVALS_DIR / "corpora" / NAME,
        fetch=fetch,
    )


if __name__ == "__main__":
    sys.exit(main())
