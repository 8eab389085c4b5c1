"""Walking a docs folder once: its markdown files, prompt templates and manifests, and the
findings about entries that cannot be followed (loops, dangling links, links out of the folder)."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from docs_mcp_core.findings import Finding
from docs_mcp_core.manifest import MANIFEST_FILENAME
from docs_mcp_core.ordering import sort_key

TEMPLATE_SUFFIXES = (".template.md", ".template.yaml")


@dataclass
class CorpusFiles:
    """What one walk of a docs folder found (POSIX paths relative to the folder, in corpus order)."""

    markdown: list[str]
    templates: list[str]  # prompt templates (``*.template.md`` / ``*.template.yaml``)
    manifests: list[str]  # every ``.docs-mcp.json``
    findings: list[Finding]  # links that loop, dangle or lead out of the folder; unreadable folders


_NOT_UTF8_NAME = "the file name is not valid UTF-8, so it cannot be a chunk id; rename the file"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_NAME = (
    "the path holds a line break or another control character, which its chunk ids carry into every "
    "answer (get_doc's header line for the chunk is cut in two); rename it"
)
_NOT_A_MANIFEST = (
    "not a file (a folder, a device, or a symbolic link that is broken or loops), so it is ignored and "
    "the markdown files here use the nearest manifest above; make it a file or remove it"
)


NOT_A_DOCUMENT = (
    "not a regular file (a named pipe, a socket or a device), so it is not read; make it a file or remove it"
)


_READ_ADVICE = {
    errno.EACCES: "let the user running docs-mcp read it (chmod a+r, a+x for a folder) or move it elsewhere",
    errno.ENOENT: "it was removed or renamed while docs-mcp read the folder; run the command again",
    errno.ENAMETOOLONG: "its path is longer than the system allows; shorten the folder or file names",
}
_READ_ADVICE[errno.EPERM] = _READ_ADVICE[errno.EACCES]


def cannot_read(what: str, exc: OSError) -> str:
    """``cannot read <what>: <reason>``, with what to do about the usual reasons."""
    advice = _READ_ADVICE.get(exc.errno or 0)
    return f"cannot read {what}: {exc.strerror}" + (f"; {advice}" if advice else "")


def _encodes(name: str) -> bool:
    return not any("\udc80" <= ch <= "\udcff" for ch in name)  # bytes os.fsdecode could not decode


def walk_corpus(docs_dir: Path, *, follow_external_symlinks: bool = False) -> CorpusFiles:
    """All non-hidden files below ``docs_dir`` (and its manifests) as sorted POSIX relative paths.

    Symbolic links to folders are followed once; a link that leads back into a folder already being
    walked is reported, not followed. A symbolic link (to a file or a folder) whose target lies
    outside ``docs_dir`` is reported and skipped unless ``follow_external_symlinks``: a docs folder
    must not publish files from elsewhere on the machine by accident. A link that cannot be resolved
    is reported: an error when it looks like a document (a loop of links), a warning otherwise.
    """
    files = CorpusFiles([], [], [], [])
    manifests, findings = files.manifests, files.findings
    other_markdown: list[str] = []  # README.MD, guide.markdown: not indexed, as in the original
    root = docs_dir.resolve()
    inside = str(root).rstrip(os.sep) + os.sep

    # Depth first with a stack of folders being listed, not recursion: a tree 1,500 folders deep
    # ended in a RecursionError. A folder's real path is its parent's plus its name unless it is a
    # link, so only links are resolved (resolving every folder cost time in the square of the depth).
    active: set[str] = set()  # the real paths of the folders being walked (a link to one loops)
    stack: list[tuple[Iterator[os.DirEntry[str]], str, str]] = []  # (entries left, rel, real path)

    def enter(folder: str, rel: str, real: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: sort_key(e.name))
        except OSError as exc:
            findings.append(Finding(rel or ".", None, "error", cannot_read("folder", exc)))
            return
        active.add(real)
        stack.append((iter(entries), rel, real))

    enter(str(root), "", str(root))
    while stack:
        entries, rel, folder_real = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            active.discard(folder_real)
            continue
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        if entry.name == MANIFEST_FILENAME:
            if not _is_file(entry):  # was ignored without a word: its folder's files used another manifest
                findings.append(Finding(child_rel, None, "warning", _NOT_A_MANIFEST))
            elif entry.is_symlink() and not follow_external_symlinks and leads_out(entry.path, inside):
                findings.append(
                    _external_link(child_rel, os.path.realpath(entry.path), "manifest")
                )  # fix wrote there
            else:
                manifests.append(child_rel)
        if entry.name.startswith("."):
            continue
        try:
            is_dir = stat.S_ISDIR(os.stat(entry.path).st_mode)  # follows links
        except OSError as exc:
            findings.extend(_unresolved_entry(child_rel, entry, exc))
            continue
        link = entry.is_symlink()
        real = os.path.realpath(entry.path) if link else os.path.join(folder_real, entry.name)
        if link and not follow_external_symlinks and not (real + os.sep).startswith(inside):
            findings.append(_external_link(child_rel, real, "folder" if is_dir else "file"))
            continue
        if is_dir:
            if real in active:
                loop = "symbolic link loop: this folder links back into one of its parents and is skipped"
                findings.append(Finding(child_rel, None, "warning", loop))
                continue
            enter(entry.path, child_rel, real)
        else:
            _list_file(entry, child_rel, files, other_markdown)
    if other_markdown:
        findings.append(_other_markdown(sorted(other_markdown, key=sort_key)))
    files.markdown.sort(key=sort_key)
    files.templates.sort(key=sort_key)
    return files


def _list_file(entry: os.DirEntry[str], rel: str, files: CorpusFiles, other_markdown: list[str]) -> None:
    """Add a file the walk found to the documents or templates it is, with the findings it calls for."""
    if entry.name.endswith((".md", *TEMPLATE_SUFFIXES)) and not _is_file(entry):
        files.findings.append(Finding(rel, None, "warning", NOT_A_DOCUMENT))  # was skipped unsaid
    elif entry.name.endswith(TEMPLATE_SUFFIXES):
        files.templates.append(rel)
    elif entry.name.endswith(".md"):
        if not rel.isascii() and not _encodes(rel):  # chunk ids and JSON are UTF-8
            files.findings.append(Finding(rel, None, "error", _NOT_UTF8_NAME))
            return
        if _CONTROL.search(rel):
            files.findings.append(Finding(rel, None, "warning", _CONTROL_NAME))
        files.markdown.append(rel)
    elif entry.name.lower().endswith((".md", ".markdown")) and entry.is_file(follow_symlinks=True):
        other_markdown.append(rel)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=True)
    except OSError:  # a link that loops: the manifest's folder reports nothing, its files are unread
        return False


def _other_markdown(paths: list[str]) -> Finding:
    """One warning, at the first, for the markdown files not named ``*.md`` (unindexed, as in the original)."""
    more = len(paths) - 1
    what = f"skipped, with {more:,} more markdown files whose names do" if more else "skipped: its name does"
    fix = "rename them to .md to index them" if more else "rename it to .md to index it"
    rule = "(only *.md, in lower case, is indexed, as in the original)"
    return Finding(paths[0], None, "warning", f"{what} not end in .md {rule}; {fix}")


def leads_out(path: str, inside: str) -> bool:
    """Whether ``path`` leads out of the folder whose real path, with a final separator, is ``inside``."""
    return not (os.path.realpath(path) + os.sep).startswith(inside)


def _external_link(rel: str, target: str, what: str) -> Finding:
    return Finding(
        rel,
        None,
        "warning",
        f"symbolic link to a {what} outside the docs folder ({target}); skipped. Move the {what} into "
        "the docs folder, or pass --follow-external-symlinks to index files that links lead to",
    )


def _unresolved_entry(rel: str, entry: os.DirEntry[str], exc: OSError) -> list[Finding]:
    """The finding for a folder entry that cannot be followed (a loop of links, a dangling link)."""
    document = entry.name.endswith((".md", *TEMPLATE_SUFFIXES))
    if exc.errno == errno.ELOOP:
        return [
            Finding(
                rel,
                None,
                "error" if document else "warning",
                "symbolic link loop: this link leads back to itself through other links; "
                "point it at a real file or remove it",
            )
        ]
    if exc.errno == errno.ENOENT:
        if not entry.is_symlink() or not document:
            return []  # removed while being listed, or not a document
        return [
            Finding(
                rel,
                None,
                "warning",
                "broken symbolic link: its target does not exist; skipped (fix or remove the link)",
            )
        ]
    return [Finding(rel, None, "error" if document else "warning", cannot_read("it", exc))]
