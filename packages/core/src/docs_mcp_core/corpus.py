"""A documentation corpus on disk: discovery, manifest lookup and per-file preparation.

Shared by ``validate``, ``fix`` and ``build`` so that all three see the same files, the same
manifests and the same problems, reported as :class:`~docs_mcp_core.findings.Finding` objects (path, line, severity).
:meth:`Corpus.open` checks the docs folder and walks it once; every step of a command then uses
that walk (markdown files, prompt templates, manifests) and its one :class:`ManifestResolver`.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docs_mcp_core.chunking import Chunk, IdCollision, Strategy, build_chunks
from docs_mcp_core.errors import DocsDirError, FindingError, ManifestError, YamlExpansionError
from docs_mcp_core.findings import Finding
from docs_mcp_core.manifest import (
    MANIFEST_FILENAME,
    Manifest,
    ManifestIssue,
    ResolvedConfig,
    parse_manifest,
    resolve_file_config,
)
from docs_mcp_core.markdown import ParsedMarkdown, parse_markdown
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.yaml_load import load_yaml

TEMPLATE_SUFFIXES = (".template.md", ".template.yaml")
BOM = "\ufeff"
"""A UTF-8 byte-order mark: ignored at the start of a markdown file or a manifest, with a warning."""
BOM_WARNING = (
    "the file starts with a UTF-8 byte-order mark, which is ignored; save it as UTF-8 without one "
    "to silence this warning"
)


def is_template(relpath: str) -> bool:
    return relpath.endswith(TEMPLATE_SUFFIXES)


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


_NOT_A_DOCUMENT = (
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
            if _is_file(entry):
                manifests.append(child_rel)
            else:  # was ignored without a word: its folder's files silently used another manifest
                findings.append(Finding(child_rel, None, "warning", _NOT_A_MANIFEST))
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
            findings.append(_external_link(child_rel, real, is_dir))
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
        files.findings.append(Finding(rel, None, "warning", _NOT_A_DOCUMENT))  # was skipped unsaid
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


def _external_link(rel: str, target: str, is_dir: bool) -> Finding:
    what = "folder" if is_dir else "file"
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


@dataclass
class ManifestEntry:
    path: str  # relative path of the .docs-mcp.json
    base: str  # its folder ("" for the corpus root)
    manifest: Manifest
    issues: list[ManifestIssue] = field(default_factory=list)


class ManifestResolver:
    """Finds the nearest manifest of a file (walking up to the corpus root), with caching."""

    def __init__(self, docs_dir: Path) -> None:
        self.docs_dir = docs_dir
        self._by_dir: dict[str, ManifestEntry | None] = {}
        self._errors: dict[str, FindingError] = {}
        self.loaded: dict[str, ManifestEntry] = {}

    def _load(self, rel_dir: str) -> ManifestEntry | None:
        if rel_dir in self._errors:
            raise self._errors[rel_dir]
        if rel_dir in self._by_dir:
            return self._by_dir[rel_dir]
        rel_path = f"{rel_dir}/{MANIFEST_FILENAME}" if rel_dir else MANIFEST_FILENAME
        full = self.docs_dir / rel_path
        entry: ManifestEntry | None = None
        if full.is_file():
            try:
                text = full.read_text(encoding="utf-8")
                manifest, issues = parse_manifest(text.removeprefix(BOM), source=rel_path)
                if text.startswith(BOM):
                    issues.insert(0, ManifestIssue(BOM_WARNING, "warning"))
            except UnicodeDecodeError:
                err = FindingError(Finding(rel_path, None, "error", "manifest is not valid UTF-8"))
                self._errors[rel_dir] = err
                raise err from None
            except OSError as exc:
                err = FindingError(Finding(rel_path, None, "error", cannot_read("manifest", exc)))
                self._errors[rel_dir] = err
                raise err from None
            except ManifestError as exc:
                msg = str(exc)
                line = None
                prefix = rel_path + ":"
                if msg.startswith(prefix):
                    rest = msg[len(prefix) :]
                    head, _, tail = rest.partition(":")
                    if head.strip().isdigit():
                        line, msg = int(head), tail.strip()
                    else:
                        msg = rest.strip()
                err = FindingError(Finding(rel_path, line, "error", msg))
                self._errors[rel_dir] = err
                raise err from None
            entry = ManifestEntry(rel_path, rel_dir, manifest, issues)
            self.loaded[rel_path] = entry
        self._by_dir[rel_dir] = entry
        return entry

    def nearest(self, relpath: str) -> ManifestEntry | None:
        parts = relpath.split("/")[:-1]
        while True:
            entry = self._load("/".join(parts))
            if entry is not None:
                return entry
            if not parts:
                return None
            parts.pop()

    def configure(
        self,
        relpath: str,
        markdown: str,
        *,
        front_matter: dict[str, Any] | None,
        first_h1: str | None,
    ) -> tuple[ManifestEntry | None, ResolvedConfig]:
        """The nearest manifest of ``relpath`` and the file's configuration under it (strategy and
        metadata from the manifest's defaults and overrides, then front matter). The one place a
        file's configuration is resolved: a fresh parse and a rebuild's reuse of an unchanged file
        both come here, so a reused file is configured exactly as a parsed one. Raises
        :class:`FindingError` for a manifest that does not load and ``ManifestError`` for a
        configuration it refuses."""
        entry = self.nearest(relpath)
        rel_in_manifest = relpath[len(entry.base) + 1 :] if entry is not None and entry.base else relpath
        config = resolve_file_config(
            rel_in_manifest,
            entry.manifest if entry else None,
            markdown=markdown,
            front_matter=front_matter,
            first_h1=first_h1,
            source=relpath,
        )
        return entry, config

    def load_all(self, manifest_paths: Iterable[str]) -> Iterator[tuple[str, FindingError | None]]:
        """Load the manifests at ``manifest_paths`` (a walk's :attr:`CorpusFiles.manifests`); each
        path with its error if it does not parse."""
        for path in manifest_paths:
            rel_dir = path.rpartition("/")[0]
            try:
                self._load(rel_dir)
                yield path, None
            except FindingError as exc:
                yield exc.finding.path, exc

    def overlaid(self, entries: Iterable[ManifestEntry]) -> ManifestResolver:
        """A copy of this resolver in which ``entries`` take the place of the manifests on disk at
        their paths (``fix`` plans against manifests it has not written yet)."""
        copy = ManifestResolver(self.docs_dir)
        copy._by_dir = dict(self._by_dir)
        copy._errors = dict(self._errors)
        copy.loaded = dict(self.loaded)
        for entry in entries:
            copy._by_dir[entry.base] = entry
            copy._errors.pop(entry.base, None)
            copy.loaded[entry.path] = entry
        return copy


@dataclass
class Corpus:
    """A docs folder as a command sees it: checked and walked once, with one manifest resolver."""

    docs_dir: Path  # as given: messages name the folder the way the user did
    files: CorpusFiles
    resolver: ManifestResolver

    @classmethod
    def open(cls, docs_dir: str | os.PathLike[str], *, follow_external_symlinks: bool = False) -> Corpus:
        """Check that ``docs_dir`` is a folder and walk it (see :func:`walk_corpus` for
        ``follow_external_symlinks``). Raises :class:`DocsDirError` when it is not a folder."""
        folder = Path(docs_dir)
        if not folder.exists():
            raise DocsDirError(f"docs folder not found: {folder}")
        if not folder.is_dir():
            raise DocsDirError(f"docs folder is not a directory: {folder}")
        walked = walk_corpus(folder, follow_external_symlinks=follow_external_symlinks)
        return cls(folder, walked, ManifestResolver(folder))


@dataclass
class PreparedFile:
    """One markdown file read, parsed and configured, ready to chunk."""

    relpath: str
    markdown: str
    parsed: ParsedMarkdown
    config: ResolvedConfig
    manifest: ManifestEntry | None
    front_matter: dict[str, Any] | None
    id_collisions: list[IdCollision] = field(default_factory=list)  # filled by chunks()
    bom: bool = False  # the file started with a byte-order mark (not part of ``markdown``)

    def chunks(self) -> list[Chunk]:
        self.id_collisions = []
        return build_chunks(
            self.relpath, self.parsed, self.config.strategy, self.config.metadata, self.id_collisions
        )

    def fingerprint(self) -> str:
        return file_fingerprint(self.config.strategy, self.config.metadata, self.markdown)


def file_fingerprint(strategy: Strategy, metadata: dict[str, str], markdown: str) -> str:
    """Chunk-cache key of a file: strategy, metadata and source, as the original computes it."""
    payload = "\0".join(
        [
            json.dumps(strategy.to_dict(), separators=(",", ":"), ensure_ascii=False),
            json.dumps(metadata, separators=(",", ":"), ensure_ascii=False),
            markdown,
        ]
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def read_markdown(docs_dir: Path, relpath: str) -> str:
    """The text of a document; a :class:`FindingError` for one that cannot be read, is not UTF-8,
    or is no longer a regular file (replaced since the folder was listed by a named pipe, whose
    read would wait forever, or a link to a device such as /dev/zero, whose read never ends)."""
    try:
        fd = os.open(
            docs_dir / relpath, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        )
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise FindingError(Finding(relpath, None, "error", _NOT_A_DOCUMENT))
            data = handle.read()
    except OSError as exc:
        raise FindingError(Finding(relpath, None, "error", cannot_read("file", exc))) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FindingError(
            Finding(
                relpath,
                line,
                "error",
                f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x}); re-save it as UTF-8",
            )
        ) from None


def parse_front_matter(parsed: ParsedMarkdown, relpath: str) -> dict[str, Any] | None:
    if parsed.front_matter is None:
        return None
    try:
        data = load_yaml(parsed.front_matter)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = parsed.front_matter_line + 1 + mark.line if mark is not None else parsed.front_matter_line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise FindingError(
            Finding(relpath, line, "error", f"front matter is not valid YAML: {problem}")
        ) from None
    except YamlExpansionError as exc:
        raise FindingError(
            Finding(relpath, parsed.front_matter_line, "error", f"front matter cannot be read: {exc}")
        ) from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise FindingError(
            Finding(relpath, parsed.front_matter_line, "error", "front matter must be a YAML mapping")
        )
    return {str(k): v for k, v in data.items()}


def first_h1(parsed: ParsedMarkdown) -> str | None:
    for node in parsed.nodes:
        if node.kind == "heading" and node.depth == 1:
            text = node.heading_text.strip()
            return text or None
    return None


def prepare_file(docs_dir: Path, relpath: str, resolver: ManifestResolver) -> PreparedFile:
    """Read, parse and configure one file. Raises :class:`FindingError` on any problem.

    A byte-order mark at the start is dropped before parsing (it would hide the front matter and
    a first-line heading) and noted in ``bom``.
    """
    markdown = read_markdown(docs_dir, relpath)
    bom = markdown.startswith(BOM)
    markdown = markdown.removeprefix(BOM)
    parsed = parse_markdown(markdown)
    front_matter = parse_front_matter(parsed, relpath)
    try:
        entry, config = resolver.configure(
            relpath, markdown, front_matter=front_matter, first_h1=first_h1(parsed)
        )
    except ManifestError as exc:
        msg = str(exc).removeprefix(relpath + ": ")
        line = parsed.front_matter_key_line(exc.front_matter_key)
        raise FindingError(Finding(relpath, line, "error", msg)) from None
    return PreparedFile(relpath, markdown, parsed, config, entry, front_matter, bom=bom)
