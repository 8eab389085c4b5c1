"""Fetch the third evaluation corpus: the documentation of a command-line tool (uv), at a pinned commit.

    uv run python scripts/evalsets/fetch_cli_corpus.py --git-dir PATH   # -> evals/corpora/uv-docs/

uv (a Python package manager; MIT or Apache-2.0, at the user's choice) documents itself with
hand-written guides and concepts pages, a reference of its configuration keys
(``reference/settings.md``: one ``###`` section per key, nested tables at ``####``), a reference of
its environment variables, and a generated command-line reference whose options are HTML definition
lists with element ids and anchors (``<dt id="uv-sync--frozen"><a href="#uv-sync--frozen">``). The
generated reference pages were committed up to the pinned commit (later ones generate them at
publish time), so that commit is the one read.

The script reads a clone of the uv repository (``--git-dir``; a bare one is fine), checks that the
pinned commit is there, and copies out of it, with ``git archive``, the markdown files under
``docs/`` and both licence files. The command-line reference is one 890 KB page upstream; the
script writes it as **one page per command** (``reference/cli/uv-tool-install.md``, each opening
with ``# uv tool install`` and holding that command's section unchanged), the layout that many
command-line tools' books use (one generated page per command), so a command's name is in its
page's path and title. Nothing else is changed. It then writes a ``.docs-mcp.json`` manifest
(``chunk_by: h2``, the guides' sections; the configuration reference, one key per ``###`` under
two ``##`` groups, is refined to ``###`` because each group outgrows the chunk size) with a ``kind`` taxonomy (``guide``, ``concept``, ``reference``, ``cli``) and
a ``SOURCE.txt`` that records the repository, the commit and what was changed.

The output folder is git-ignored; never commit it. An existing output folder is replaced only after
the new one is complete.
"""

from __future__ import annotations

import io
import re
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path

from corpus_fetch import archive_at, clone_fetch_main, replace_folder, tar_files, write_into, write_provenance
from evalset_common import EVALS_DIR, EvalSetError

REPOSITORY = "astral-sh/uv"
COMMIT = "28a8194a67726b93524e3ade42d0db884519ec73"  # 2025-12-06, the last with the generated reference
LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")
CLI_PAGE = "reference/cli.md"
NAME = "uv-docs"

MANIFEST = {
    "version": "1",
    "strategy": {"chunk_by": "h2"},
    "taxonomy": {
        "kind": {
            "description": (
                "Filter by kind of page: 'guide' (how-tos), 'concept' (how uv works), "
                "'reference' (settings, environment variables, policies) or 'cli' (one page per command)."
            )
        }
    },
    "mcpServerInstructions": (
        "uv documentation: guides, concepts (projects, tools, Python versions, caching, resolution), the "
        "configuration reference, environment variables and one page per command-line command."
    ),
    "overrides": [
        {"pattern": "guides/**", "metadata": {"kind": "guide"}},
        {"pattern": "getting-started/**", "metadata": {"kind": "guide"}},
        {"pattern": "concepts/**", "metadata": {"kind": "concept"}},
        {"pattern": "pip/**", "metadata": {"kind": "concept"}},
        {"pattern": "reference/**", "metadata": {"kind": "reference"}},
        {"pattern": "reference/cli/**", "metadata": {"kind": "cli"}},
    ],
}

_COMMAND_HEADING_RE = re.compile(r"^(#{2,4}) (uv(?: [a-z0-9-]+)*)[ \t]*$", re.MULTILINE)


def split_cli_page(text: str) -> dict[str, str]:
    """One page per command of the generated CLI reference: ``{"uv-tool-install.md": text}``.

    A command's section runs from its heading (``## uv tool``, ``### uv tool install``) to the next
    command heading; its heading becomes the page's ``#`` title and the rest is kept as written.
    """
    found = list(_COMMAND_HEADING_RE.finditer(text))
    if not found:
        raise EvalSetError(f"{CLI_PAGE}: no command headings (`## uv ...`); is the commit right?")
    pages: dict[str, str] = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        command = match.group(2)
        body = text[match.end() : end].strip("\n")
        pages[command.replace(" ", "-") + ".md"] = f"# {command}\n\n{body}\n"
    return pages


def docs_path(name: str) -> str | None:
    """Where an archive member goes in the corpus: the docs' markdown and the licences."""
    if name in LICENSES:
        return name
    if name.startswith("docs/") and name.endswith(".md"):
        return name.removeprefix("docs/")
    return None


def unpack(archive_bytes: bytes, dest: Path) -> int:
    """Write the archive's docs markdown (the CLI page split) and licences into ``dest``."""
    count = 0
    with tarfile.open(fileobj=io.BytesIO(archive_bytes), mode="r:") as archive:
        for relative, data in tar_files(archive, docs_path):
            if relative == CLI_PAGE:
                for page, text in split_cli_page(data.decode("utf-8")).items():
                    write_into(dest / "reference" / "cli", page, text.encode("utf-8"))
                    count += 1
                continue
            write_into(dest, relative, data)
            count += 1
    return count


def fetch(out: Path, git_dir: Path) -> str:
    archive = archive_at(git_dir, REPOSITORY, COMMIT, "docs", *LICENSES)

    def fill(staging: Path) -> int:
        files = unpack(archive, staging)
        write_provenance(
            staging,
            MANIFEST,
            f"https://github.com/{REPOSITORY} at commit {COMMIT}: docs/**/*.md and {', '.join(LICENSES)}.\n"
            f"Licence: MIT or Apache-2.0 (both files beside this one).\n"
            f"Changed: docs/{CLI_PAGE} written as one page per command under reference/cli/ "
            f"(scripts/evalsets/fetch_cli_corpus.py); .docs-mcp.json added.\n",
        )
        return files

    files = replace_folder(out, "fetch-cli-", fill)
    return f"{REPOSITORY}@{COMMIT[:12]}: {files} files (docs markdown and licences) -> {out}"


def main(argv: Sequence[str] | None = None) -> int:
    return clone_fetch_main(
        argv,
        description="Copy uv's documentation at a pinned commit out of a clone.",
        repository=REPOSITORY,
        default_out=EVALS_DIR / "corpora" / NAME,
        fetch=fetch,
    )


if __name__ == "__main__":
    sys.exit(main())
