"""Fetch the API-reference evaluation corpus: the generated Novu SDK docs in Python and TypeScript.

    uv run python scripts/evalsets/fetch_api_reference_corpus.py            # clones from GitHub
    uv run python scripts/evalsets/fetch_api_reference_corpus.py \\
        --source python=/path/to/novu-py.git --source typescript=/path/to/novu-ts.git

Novu (a notification API: subscribers, topics, workflows, messages, integrations...) publishes
Speakeasy-generated SDKs whose repositories hold the API reference as markdown: one
``docs/sdks/<resource>/README.md`` per resource (an overview, then one ``##`` section per
operation: a sentence, a usage example, parameters, response, errors) and one
``docs/models/**.md`` per request, response, component and error type. Many resources offer the
same list/get/create/update/delete operations, so near-duplicate sections abound.

For each language the script reads the pinned commit of the public repository (a local git
directory, or a clone it makes of the GitHub URL), checks that the commit's tree hash is the one
pinned here (the tree hash is a checksum of every file), and copies ``docs/sdks/**``,
``docs/models/**``, ``README.md``, ``USAGE.md`` and ``LICENSE`` into
``evals/corpora/novu/<language>/`` (git-ignored; never commit it). Both repositories are MIT
licensed; each ``LICENSE`` lands beside its docs. It then writes one ``.docs-mcp.json`` per
language (``chunk_by: h2``; taxonomy ``language``, as the sdk-docs corpus does).

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


SOURCES = (
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
)
PATHS = ("docs/sdks", "docs/models", "README.md", "USAGE.md", "LICENSE")


def manifest(language: str) -> dict[str, object]:
    return {
        "version": "1",
        "strategy": {"chunk_by": "h2"},
        "metadata": {"language": language, "service": "novu"},
        "taxonomy": {"language": {"description": "Filter by SDK language: 'python' or 'typescript'."}},
        "mcpServerInstructions": (
            "API reference of the Novu notification API's Python and TypeScript SDKs: one page per "
            "resource (subscribers, topics, workflows, messages, integrations...) and one per model."
        ),
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


def copy_language(source: Source, git_dir: Path, dest: Path) -> tuple[int, str]:
    """Copy the pinned commit's docs into ``dest``; returns the file count and the tree hash."""
    tree = git(git_dir, "rev-parse", f"{source.commit}^{{tree}}").decode().strip()
    if tree != source.tree:
        raise EvalSetError(
            f"{source.url}@{source.commit}: tree {tree}, expected {source.tree}; the repository's history"
            " was rewritten, so the corpus would not match the cases"
        )
    archive = git(git_dir, "archive", "--format=tar", source.commit, *PATHS)
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
        json.dumps(manifest(source.language), indent=2) + "\n", encoding="utf-8"
    )
    return count, tree


def fetch(out: Path, given: dict[str, str]) -> list[str]:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="fetch-api-reference-", dir=out.parent) as tmp:
        workdir = Path(tmp)
        staging = workdir / "corpus"
        for source in SOURCES:
            git_dir = git_dir_for(source, given.get(source.language), workdir)
            count, tree = copy_language(source, git_dir, staging / source.language)
            lines.append(f"{source.url}@{source.commit[:12]} (tree {tree[:12]}): {count} files")
        if out.exists():
            shutil.move(str(out), str(workdir / "old"))
        staging.rename(out)
    lines.append(f"-> {out}")
    return lines


def parse_sources(values: Sequence[str]) -> dict[str, str]:
    known = {source.language for source in SOURCES}
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
    parser = argparse.ArgumentParser(description="Fetch the Novu SDK API reference corpus at pinned commits.")
    parser.add_argument(
        "--out", type=Path, default=EVALS_DIR / "corpora" / "novu", help="default: evals/corpora/novu"
    )
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        help="LANGUAGE=GIT_DIR: read that language's repository locally",
    )
    args = parser.parse_args(argv)
    try:
        for line in fetch(args.out, parse_sources(args.source)):
            print(line)
    except EvalSetError as exc:
        return fail(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
