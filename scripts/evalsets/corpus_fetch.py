"""Pieces the scripts that fetch an evaluation corpus share: a pinned commit's files out of a clone
(one given, or a bare clone made for the run) after checking its tree hash, the files of an archive,
an output folder replaced only once its new contents are complete, the manifest and provenance
written beside the files, and the command lines of a fetch from a clone."""

from __future__ import annotations

import argparse
import json
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from evalset_common import EvalSetError, fail

T = TypeVar("T")


def git(git_dir: Path, *args: str) -> bytes:
    """The output of ``git --git-dir=git_dir args...`` (an :class:`EvalSetError` when it fails)."""
    command = ["git", f"--git-dir={git_dir}", *args]
    try:
        done = subprocess.run(command, capture_output=True, timeout=300, check=False)
    except FileNotFoundError:
        raise EvalSetError("git is not on PATH: install git") from None
    except subprocess.TimeoutExpired:
        raise EvalSetError(f"`{' '.join(command)}` took more than 300 s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise EvalSetError(f"`{' '.join(command)}` failed (exit {done.returncode}): {message}")
    return done.stdout


def resolve_git_dir(path: Path, repository: str) -> Path:
    """The git directory of a clone (its ``.git``) or of a bare repository of ``repository``."""
    if (path / ".git").is_dir():
        path = path / ".git"
    if not (path / "HEAD").is_file():
        raise EvalSetError(f"{path}: not a git repository; pass a clone of {repository} (bare or not)")
    return path


def check_tree(git_dir: Path, repository: str, commit: str, tree: str) -> None:
    """Refuse a clone whose ``commit`` has another tree than ``tree`` (a rewritten history): the
    tree hash is a checksum of every file, so the corpus would not match the cases."""
    actual = git(resolve_git_dir(git_dir, repository), "rev-parse", f"{commit}^{{tree}}").decode().strip()
    if actual != tree:
        raise EvalSetError(
            f"{repository}@{commit}: tree {actual}, expected {tree}; the repository's history was rewritten,"
            " so the corpus would not match the cases"
        )


def bare_clone(url: str, target: Path) -> Path:
    """A bare clone of ``url`` at ``target`` (an :class:`EvalSetError` naming ``--source`` when it fails)."""
    command = ["git", "clone", "--bare", "--quiet", url, str(target)]
    try:
        done = subprocess.run(command, capture_output=True, timeout=900, check=False)
    except FileNotFoundError:
        raise EvalSetError("git is not on PATH: install git") from None
    except subprocess.TimeoutExpired:
        raise EvalSetError(
            f"`{' '.join(command)}` took more than 900 s; try again later, or pass --source"
        ) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise EvalSetError(
            f"`{' '.join(command)}` failed (exit {done.returncode}): {message}; pass --source DIR"
        )
    return target


def archive_at(git_dir: Path, repository: str, commit: str, *paths: str) -> bytes:
    """A tar of ``paths`` at ``commit`` of a clone of ``repository`` (``git_dir``: the clone or its
    ``.git``), after checking that the commit is there."""
    git_dir = resolve_git_dir(git_dir, repository)
    git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
    return git(git_dir, "archive", "--format=tar", commit, *paths)


def tar_files(
    archive: tarfile.TarFile, relative: Callable[[str], str | None], where: str = ""
) -> Iterator[tuple[str, bytes]]:
    """The regular files of ``archive`` that ``relative`` gives a path in the corpus (``None``: left
    out), with their bytes; a path that would leave the corpus is refused (``where`` names the
    archive in the error)."""
    for member in archive.getmembers():
        if not member.isfile():
            continue
        path = relative(member.name)
        if path is None:
            continue
        if path.startswith("/") or ".." in path.split("/"):
            named = f"{where}: " if where else ""
            raise EvalSetError(f"{named}refusing the unsafe member path {member.name!r}")
        source = archive.extractfile(member)
        if source is not None:
            yield path, source.read()


def copy_members(
    archive: tarfile.TarFile, dest: Path, relative: Callable[[str], str | None], where: str = ""
) -> int:
    """Write into ``dest`` each file of ``archive`` that ``relative`` gives a path in the corpus
    (see :func:`tar_files`); the number of files written."""
    count = 0
    for path, data in tar_files(archive, relative, where):
        write_into(dest, path, data)
        count += 1
    return count


def write_into(dest: Path, relative: str, data: bytes) -> None:
    """Write ``data`` at ``dest / relative``, making its folders."""
    target = dest / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def replace_folder(out: Path, prefix: str, fill: Callable[[Path], T]) -> T:
    """``fill`` a new folder beside ``out``, then put it in place of ``out``: an existing folder is
    replaced only once the new one is complete (and kept if ``fill`` fails)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=out.parent) as tmp:
        staging = Path(tmp) / "corpus"
        staging.mkdir()
        result = fill(staging)
        if out.exists():
            out.rename(Path(tmp) / "old")
        staging.rename(out)
    return result


def write_provenance(folder: Path, manifest: Mapping[str, Any], source: str) -> None:
    """The corpus's ``.docs-mcp.json`` and its ``SOURCE.txt`` (where the files came from, under
    which licence, and what was changed or added)."""
    (folder / ".docs-mcp.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (folder / "SOURCE.txt").write_text(source, encoding="utf-8")


def clone_fetch_main(
    argv: Sequence[str] | None,
    *,
    description: str,
    repository: str,
    default_out: Path,
    fetch: Callable[[Path, Path], str],
) -> int:
    """The command line of a script that copies a corpus out of a clone: ``--git-dir`` and ``--out``;
    ``fetch(out, git_dir)`` says what it wrote."""
    parser = _parser(description, default_out)
    parser.add_argument("--git-dir", type=Path, required=True, help=f"a clone of {repository} (bare or not)")
    args = parser.parse_args(argv)
    return _run(lambda: fetch(args.out, args.git_dir))


def source_fetch_main(
    argv: Sequence[str] | None,
    *,
    description: str,
    repository: str,
    default_out: Path,
    fetch: Callable[[Path, Path], str],
) -> int:
    """The command line of a script that copies a corpus out of a clone: ``--source`` (a clone,
    bare or not; without it the script makes a bare clone of ``repository`` from GitHub for the run)
    and ``--out``; ``fetch(out, git_dir)`` says what it wrote."""
    parser = _parser(description, default_out)
    parser.add_argument(
        "--source", type=Path, help=f"a clone of {repository} (bare or not); default: clone it from GitHub"
    )
    args = parser.parse_args(argv)

    def cloned() -> str:
        if args.source is not None:
            return fetch(args.out, args.source)
        with tempfile.TemporaryDirectory(prefix="fetch-clone-") as tmp:
            return fetch(args.out, bare_clone(f"https://github.com/{repository}.git", Path(tmp) / "repo.git"))

    return _run(cloned)


def _parser(description: str, default_out: Path) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--out", type=Path, default=default_out, help=f"default: evals/corpora/{default_out.name}"
    )
    return parser


def _run(fetch: Callable[[], str]) -> int:
    """Print what ``fetch`` wrote; exit 0, or 1 with its error."""
    try:
        print(fetch())
    except EvalSetError as exc:
        return fail(str(exc))
    return 0
