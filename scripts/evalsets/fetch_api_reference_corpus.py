"""Fetch an API-reference evaluation corpus: the generated docs of a pair of SDKs, Python and TypeScript.

    uv run python scripts/evalsets/fetch_api_reference_corpus.py            # Novu, cloned from GitHub
    uv run python scripts/evalsets/fetch_api_reference_corpus.py \\
        --source python=/path/to/novu-py.git --source typescript=/path/to/novu-ts.git
    uv run python scripts/evalsets/fetch_api_reference_corpus.py --corpus unified \\
        --source python=/path/to/unified-python-sdk.git --source typescript=/path/to/unified-typescript-sdk.git

Speakeasy-generated SDKs hold their API reference as markdown: one ``docs/sdks/<resource>/README.md``
per resource (an overview, then one ``##`` section per operation: a sentence, a usage example,
parameters, response, errors) and one page per request, response, component and error type
(``docs/models/**.md``; TypeScript SDKs of newer generators put them under ``docs/sdk/models/``).
Many resources offer the same list/get/create/update/delete operations, so near-duplicate
sections abound. Two corpora are defined (``--corpus``):

- ``novu`` (the default): the Novu notification API (subscribers, topics, workflows, messages,
  integrations...), ``novuhq/novu-py`` and ``novuhq/novu-ts``, MIT; into ``evals/corpora/novu/``.
- ``unified``: the Unified.to unified API (one API over many products: accounting, CRM, HRIS, ATS,
  commerce, file storage, ticketing...), ``unified-to/unified-python-sdk`` and
  ``unified-to/unified-typescript-sdk``, MIT; into ``evals/corpora/unified/``. Every operation is
  documented twice: on its product's page (``docs/sdks/accounting/``) and on its resource's page
  (``docs/sdks/invoice/``).

For each language the script reads the pinned commit of the public repository (a local git
directory, or a clone it makes of the GitHub URL), checks that the commit's tree hash is the one
pinned here (the tree hash is a checksum of every file), and copies the reference (``docs/sdks/**``
and the model pages), ``README.md``, ``USAGE.md`` and the licence into
``evals/corpora/<corpus>/<language>/`` (git-ignored; never commit it); each licence lands beside its
docs. It then writes one ``.docs-mcp.json`` per language (``chunk_by: h2``; taxonomy ``language``,
as the sdk-docs corpus does).

An existing output folder is replaced only after the new one is complete.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalset_common import EVALS_DIR, EvalSetError, fail


@dataclass(frozen=True)
class Source:
    language: str
    url: str
    commit: str
    tree: str
    paths: tuple[str, ...] = ("docs/sdks", "docs/models", "README.md", "USAGE.md", "LICENSE")


@dataclass(frozen=True)
class Corpus:
    """A pair of SDKs whose reference makes one corpus: where each comes from, where it goes and
    what its manifest says."""

    name: str
    sources: tuple[Source, ...]
    service: str
    instructions: str


NOVU = Corpus(
    "novu",
    (
        Source(
            "python",
            "https://github.com/novuhq/novu-py.git",
            "09cbb0167c8394a90b6ec309a1187e675cb32e13",
            "2c53115989af9a8738e2213e7769c9b9f4507bdc",
        ),
        Source(
            "typescript",
            "https://github.com/novuhq/novu-ts.git",
            "6025377fa7e17412b128bb8241825c633e390630",
            "96ebdde117337cf4e416ee1a145110497a8b8955",
        ),
    ),
    "novu",
    "API reference of the Novu notification API's Python and TypeScript SDKs: one page per "
    "resource (subscribers, topics, workflows, messages, integrations...) and one per model.",
)
UNIFIED = Corpus(
    "unified",
    (
        Source(
            "python",
            "https://github.com/unified-to/unified-python-sdk.git",
            "049ff6f8d1dc18c84a42658f195a741016ca29a7",
            "6932d091078bae92a8dc74d4e7e5c65c08d2c60d",
            ("docs/sdks", "docs/models", "README.md", "USAGE.md", "LICENSE.md"),
        ),
        Source(
            "typescript",
            "https://github.com/unified-to/unified-typescript-sdk.git",
            "2c5cfb23a044b777d35e30ccc4825bad6771220c",
            "0347fc169f874960f819b51175677ea25c1fcb43",
            ("docs/sdks", "docs/sdk/models", "docs/lib", "README.md", "USAGE.md", "LICENSE.md"),
        ),
    ),
    "unified",
    "API reference of the Unified.to unified API's Python and TypeScript SDKs (accounting, CRM, "
    "HRIS, ATS, commerce, file storage, ticketing and more): one page per product and per "
    "resource, listing its operations, and one per model.",
)
CORPORA = {corpus.name: corpus for corpus in (NOVU, UNIFIED)}


def manifest(language: str, corpus: Corpus = NOVU) -> dict[str, object]:
    return {
        "version": "1",
        "strategy": {"chunk_by": "h2"},
        "metadata": {"language": language, "service": corpus.service},
        "taxonomy": {"language": {"description": "Filter by SDK language: 'python' or 'typescript'."}},
        "mcpServerInstructions": corpus.instructions,
    }


def git(git_dir: Path, *args: str) -> bytes:
    command = ["git", "--git-dir", str(git_dir), *args]
    done = subprocess.run(command, capture_output=True, timeout=600, check=False)
    if done.returncode != 0:
        raise EvalSetError(f"`{' '.join(command)}` failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def git_dir_for(source: Source, given: str | None, workdir: Path) -> Path:
    """A git directory holding ``source.commit``: the given one, or a fresh bare clone."""
    if given is not None:
        path = Path(given)
        if (path / ".git").is_dir():
            path = path / ".git"
        if not path.is_dir():
            raise EvalSetError(f"--source {source.language}={given}: no such git directory")
        return path
    target = workdir / f"{source.language}.git"
    command = ["git", "clone", "--bare", "--quiet", source.url, str(target)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    except subprocess.TimeoutExpired:
        raise EvalSetError(f"`{' '.join(command)}` took more than 900 s; try again later") from None
    if done.returncode != 0:
        raise EvalSetError(
            f"`{' '.join(command)}` failed: {done.stderr.strip()}; pass --source {source.language}=GIT_DIR"
        )
    return target


def copy_language(source: Source, git_dir: Path, dest: Path, corpus: Corpus = NOVU) -> tuple[int, str]:
    """Copy the pinned commit's docs into ``dest``; returns the file count and the tree hash."""
    tree = git(git_dir, "rev-parse", f"{source.commit}^{{tree}}").decode().strip()
    if tree != source.tree:
        raise EvalSetError(
            f"{source.url}@{source.commit}: tree {tree}, expected {source.tree}; the repository's history"
            " was rewritten, so the corpus would not match the cases"
        )
    archive = git(git_dir, "archive", "--format=tar", source.commit, *source.paths)
    count = 0
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            if member.name.startswith("/") or ".." in member.name.split("/"):
                raise EvalSetError(f"{source.url}: refusing the unsafe member path {member.name!r}")
            handle = tar.extractfile(member)
            if handle is None:
                continue
            target = dest / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(handle.read())
            count += 1
    (dest / ".docs-mcp.json").write_text(
        json.dumps(manifest(source.language, corpus), indent=2) + "\n", encoding="utf-8"
    )
    return count, tree


def fetch(out: Path, given: dict[str, str], corpus: Corpus = NOVU) -> list[str]:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fetch-api-reference-", dir=out.parent) as tmp:
        workdir = Path(tmp)
        staging = workdir / "corpus"
        for source in corpus.sources:
            git_dir = git_dir_for(source, given.get(source.language), workdir)
            count, tree = copy_language(source, git_dir, staging / source.language, corpus)
            lines.append(f"{source.url}@{source.commit[:12]} (tree {tree[:12]}): {count} files")
        if out.exists():
            shutil.move(str(out), str(workdir / "old"))
        staging.rename(out)
    lines.append(f"-> {out}")
    return lines


def parse_sources(values: Sequence[str], corpus: Corpus = NOVU) -> dict[str, str]:
    known = {source.language for source in corpus.sources}
    given: dict[str, str] = {}
    for value in values:
        language, sep, path = value.partition("=")
        if not sep or language not in known:
            raise EvalSetError(
                f"--source {value!r}: expected LANGUAGE=GIT_DIR with LANGUAGE one of {sorted(known)}"
            )
        given[language] = path
    return given


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch an SDK API reference corpus at pinned commits.")
    parser.add_argument(
        "--corpus", choices=sorted(CORPORA), default=NOVU.name, help="which pair of SDKs (default: novu)"
    )
    parser.add_argument("--out", type=Path, default=None, help="default: evals/corpora/CORPUS")
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        help="LANGUAGE=GIT_DIR: read that language's repository locally",
    )
    args = parser.parse_args(argv)
    try:
        corpus = CORPORA[args.corpus]
        out = args.out if args.out is not None else EVALS_DIR / "corpora" / corpus.name
        for line in fetch(out, parse_sources(args.source, corpus), corpus):
            print(line)
    except EvalSetError as exc:
        return fail(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
