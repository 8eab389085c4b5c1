"""A documentation corpus on disk: discovery, manifest lookup and per-file preparation.

Shared by ``validate``, ``fix`` and ``build`` so that all three see the same files, the same
manifests and the same problems, reported as :class:`~docs_mcp_core.findings.Finding` objects (path, line, severity).
:meth:`Corpus.open` checks the docs folder and walks it once; every step of a command then uses
that walk (markdown files, prompt templates, manifests) and its one :class:`ManifestResolver`.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from docs_mcp_core.chunking import Chunk, IdCollision, Strategy, build_chunks, heading_name
from docs_mcp_core.corpus_walk import (
    NOT_A_DOCUMENT,
    TEMPLATE_SUFFIXES,
    CorpusFiles,
    cannot_read,
    leads_out,
    walk_corpus,
)
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
from docs_mcp_core.yaml_load import load_yaml

BOM = "\ufeff"
"""A UTF-8 byte-order mark: ignored at the start of a markdown file or a manifest, with a warning."""
BOM_WARNING = (
    "the file starts with a UTF-8 byte-order mark, which is ignored; save it as UTF-8 without one "
    "to silence this warning"
)


def is_template(relpath: str) -> bool:
    return relpath.endswith(TEMPLATE_SUFFIXES)


@dataclass
class ManifestEntry:
    path: str  # relative path of the .docs-mcp.json
    base: str  # its folder ("" for the corpus root)
    manifest: Manifest
    issues: list[ManifestIssue] = field(default_factory=list)


class ManifestResolver:
    """Finds the nearest manifest of a file (walking up to the corpus root), with caching. A manifest
    linked from outside ``docs_dir`` is absent unless ``follow_external_symlinks``, as a document is."""

    def __init__(self, docs_dir: Path, *, follow_external_symlinks: bool = False) -> None:
        self.docs_dir = docs_dir
        self.follow_external_symlinks = follow_external_symlinks
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
        inside = os.path.join(os.path.realpath(self.docs_dir), "")
        if full.is_file() and (self.follow_external_symlinks or not leads_out(str(full), inside)):
            try:
                if (size := full.stat().st_size) > MAX_MANIFEST_BYTES:
                    raise ManifestError(f"{rel_path}: {too_large('manifest', size, MAX_MANIFEST_BYTES)}")
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
        copy = ManifestResolver(self.docs_dir, follow_external_symlinks=self.follow_external_symlinks)
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
        follow = follow_external_symlinks
        return cls(
            folder,
            walk_corpus(folder, follow_external_symlinks=follow),
            ManifestResolver(folder, follow_external_symlinks=follow),
        )


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


MAX_DOCUMENT_BYTES = 64 << 20
"""A document (or manifest) larger than this is refused unread: a sparse or generated file of
gigabytes was read whole and parsed, in memory many times its size (a 50 MB page builds in 1 GB)."""
MAX_MANIFEST_BYTES = 16 << 20  # a manifest's parse holds about 150 bytes per byte of it


_ADVICE = {
    "file": "split it into smaller pages, or move it out of the docs folder if it is no documentation",
    "manifest": "give fewer overrides (one pattern such as guides/** covers a folder)",
    "prompt template": "shorten it, or move it out of the docs folder",
}


def too_large(what: str, size: int, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """Why a ``what`` (file, manifest, prompt template) of ``size`` bytes is refused unread."""
    return f"{what} is {size:,} bytes, over the {limit >> 20} MiB one {what} may have, so it is not read; {_ADVICE[what]}"


def read_markdown(docs_dir: Path, relpath: str) -> str:
    """The text of a document; a :class:`FindingError` for one that cannot be read, is not UTF-8,
    or is no longer a regular file (replaced since the folder was listed by a named pipe, whose
    read would wait forever, or a link to a device such as /dev/zero, whose read never ends)."""
    try:
        fd = os.open(
            docs_dir / relpath, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        )
        with open(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise FindingError(Finding(relpath, None, "error", NOT_A_DOCUMENT))
            data = handle.read(MAX_DOCUMENT_BYTES + 1)  # + 1: one that grew since fstat is refused too
            if max(info.st_size, len(data)) > MAX_DOCUMENT_BYTES:
                size = max(info.st_size, len(data))
                raise FindingError(
                    Finding(relpath, None, "error", too_large("file", size, MAX_DOCUMENT_BYTES))
                )
    except OSError as exc:
        raise FindingError(Finding(relpath, None, "error", cannot_read("file", exc))) from None
    return decode_markdown(data, relpath)


def decode_markdown(data: bytes, relpath: str) -> str:
    """The text of a document's bytes; a :class:`FindingError` naming the line for bytes that are not
    UTF-8 text. A NUL byte is refused although it is UTF-8: no text file holds one, but UTF-16 text
    (every other byte of ASCII is NUL) and binary files do, and were indexed as text full of NULs."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        problem = "file is UTF-16 (it starts with a UTF-16 byte-order mark), not UTF-8"
        raise FindingError(Finding(relpath, 1, "error", f"{problem}; re-save it as UTF-8"))
    nul = data.find(b"\0")
    if nul >= 0:
        problem = "file holds a NUL byte (0x00), as UTF-16 text and binary files do, not UTF-8 text"
        line = data.count(b"\n", 0, nul) + 1
        raise FindingError(Finding(relpath, line, "error", f"{problem}; re-save it as UTF-8"))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
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
        data = load_yaml(parsed.front_matter, first_line=parsed.front_matter_line + 1)
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
            return heading_name(node.heading_text) or None
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
