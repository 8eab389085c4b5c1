"""``docs-mcp fix``: write or repair ``.docs-mcp.json`` manifests from what the documents look like.

Two deterministic passes, no model involved:

* **bootstrap** (:func:`bootstrap_manifest`): when the docs folder has no root manifest, propose one
  for the files no manifest governs yet. Each file gets a suggested ``chunk_by`` from its heading
  counts (:func:`suggest_chunk_by`, the original docs-mcp's rules); the most common suggestion becomes
  the default strategy (ties resolved in the order h2, h1, h3, file) and every other file gets an
  override for its exact path, overrides sorted in the project's string order.
* **drift repair** (:func:`drift_repairs`): for files governed by a manifest, chunk them with their
  current strategy. A file whose sections outgrow ``max_chunk_size`` (the chunker then has to split
  them into sub-sections or ``-part-N`` chunks) gets an override with the coarsest finer heading
  level at which every section fits. A file whose chunks are mostly tiny (more than 60 % under 200
  UTF-16 units, with at least 5 chunks) gets the nearest coarser level that fixes that without
  creating oversized sections. The override is appended to the file's nearest manifest (or an
  existing override for exactly that path is updated), keeping the strategy's size limits. Files
  whose strategy is set inside the file (front matter or hint comment) are left alone and listed
  as notes, since a manifest override would have no effect on them.

Both passes return a :class:`FixPlan`: the manifests to create or change, with their old and new
text, a unified diff and a method that writes them. Manifests are written as JSON with a final
newline, indented as the manifest was (2 spaces for a new one); existing keys and their order are
preserved.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs_mcp_core.chunking import DEFAULT_MAX_CHUNK_SIZE, Strategy, build_chunks
from docs_mcp_core.corpus import BOM, Corpus, ManifestEntry, PreparedFile, prepare_file, read_markdown
from docs_mcp_core.errors import DuplicateKeyError, FindingError, ManifestError
from docs_mcp_core.globs import PatternIndex, glob_match
from docs_mcp_core.manifest import MANIFEST_FILENAME, find_hint, parse_manifest
from docs_mcp_core.manifest_change import FixPlan, ManifestChange, read_as_saved
from docs_mcp_core.manifest_text import dump_manifest_text, indent_of, load_manifest_text
from docs_mcp_core.markdown import ParsedMarkdown, utf16_len
from docs_mcp_core.ordering import sort_key

LEVELS: tuple[str, ...] = ("file", "h1", "h2", "h3")
"""Strategies from coarsest to finest."""
TINY_CHUNK_SIZE = 200
TINY_SHARE = 0.6
TINY_MIN_CHUNKS = 5
_DEFAULT_ORDER = ("h2", "h1", "h3", "file")
_UNLIMITED = 1 << 62

_FENCE_RE = re.compile(r"```[\s\S]*?```")
_HEADING_LINE_RE = re.compile(r"^\s{0,3}(#{1,3})\s+\S+")
_LINE_SPLIT_RE = re.compile(r"\r?\n")


# ── heading statistics ───────────────────────────────────────────────────────────────────────────


def suggest_chunk_by(markdown: str) -> str:
    """The ``chunk_by`` the original docs-mcp ``fix`` suggests for one document.

    Fenced code (```` ``` ```` pairs) is ignored; ATX headings of depth 1-3 are counted. No heading:
    ``file``; at least 6 h3 and at least twice as many h3 as h2: ``h3``; 2+ h2: ``h2``; 2+ h1:
    ``h1``; 2+ h3: ``h3``; otherwise ``file``.
    """
    counts = {1: 0, 2: 0, 3: 0}
    for line in _LINE_SPLIT_RE.split(_FENCE_RE.sub("", markdown)):
        match = _HEADING_LINE_RE.match(line)
        if match:
            counts[len(match.group(1))] += 1
    h1, h2, h3 = counts[1], counts[2], counts[3]
    if h1 + h2 + h3 == 0:
        return "file"
    if h3 >= 6 and h3 >= h2 * 2:
        return "h3"
    if h2 >= 2:
        return "h2"
    if h1 >= 2:
        return "h1"
    if h3 >= 2:
        return "h3"
    return "file"


def pick_default_chunk_by(suggestions: list[str]) -> str:
    """Most common suggestion; ties go to the first of h2, h1, h3, file."""
    best, best_count = "h2", -1
    for candidate in _DEFAULT_ORDER:
        count = suggestions.count(candidate)
        if count > best_count:
            best, best_count = candidate, count
    return best


def glob_escape(path: str) -> str:
    """A glob pattern matching exactly ``path`` (special characters put in ``[...]`` classes)."""
    return "".join(f"[{c}]" if c in "*?[{" else c for c in path)


def _check_manifests(corpus: Corpus) -> None:
    for _path, error in corpus.resolver.load_all(corpus.files.manifests):
        if error is not None:
            finding = error.finding
            where = f"{finding.path}:{finding.line}" if finding.line else finding.path
            raise ManifestError(
                f"{where}: {finding.message}; repair this manifest first (docs-mcp validate lists every problem)"
            )


# ── bootstrap ────────────────────────────────────────────────────────────────────────────────────


def bootstrap_manifest(corpus: Corpus | Path) -> FixPlan:
    """Propose a root ``.docs-mcp.json`` when there is none (empty plan otherwise).

    Only files that no manifest governs are considered; when every file already has a manifest
    the plan is empty. Raises :class:`ManifestError` when an existing manifest does not parse.
    """
    corpus = corpus if isinstance(corpus, Corpus) else Corpus.open(corpus)
    docs_dir, resolver, files = corpus.docs_dir, corpus.resolver, corpus.files.markdown
    plan = FixPlan(docs_dir)
    _check_manifests(corpus)
    root = docs_dir / MANIFEST_FILENAME
    for finding in corpus.files.findings:  # links out of the folder: skipped, as the walk said
        if finding.path.rpartition("/")[2] == MANIFEST_FILENAME and os.path.isfile(docs_dir / finding.path):
            plan.notes.append(
                f"{finding.path}: a symbolic link to a file outside the docs folder, so fix neither reads "
                "nor writes it (validate and build skip it too); copy the manifest into the docs folder"
            )
    if root.is_symlink() or root.exists():
        if not root.is_file():  # a folder or a broken link: "nothing to fix" said nothing of it
            plan.notes.append(
                f"{MANIFEST_FILENAME}: not a file (a folder, a device, or a broken symbolic link), so fix "
                "cannot create the root manifest there; make it a file or remove it, then run fix again"
            )
        return plan
    unmanaged = [rel for rel in files if resolver.nearest(rel) is None]
    if files and not unmanaged:
        return plan
    suggestions: list[tuple[str, str]] = []
    for rel in unmanaged:
        try:
            suggestions.append((rel, suggest_chunk_by(read_markdown(docs_dir, rel).removeprefix(BOM))))
        except FindingError as exc:
            plan.notes.append(f"{exc.finding.render()} (skipped)")
    default = pick_default_chunk_by([s for _rel, s in suggestions]) if suggestions else "h2"
    overrides = sorted(
        (
            {"pattern": glob_escape(rel), "strategy": {"chunk_by": chunk_by}}
            for rel, chunk_by in suggestions
            if chunk_by != default
        ),
        key=lambda o: sort_key(str(o["pattern"])),
    )
    manifest: dict[str, Any] = {"version": "1", "strategy": {"chunk_by": default}}
    if overrides:
        manifest["overrides"] = overrides
    reasons = tuple(
        f"{rel}: headings suggest chunk_by {chunk_by}" for rel, chunk_by in suggestions if chunk_by != default
    )
    plan.changes.append(
        ManifestChange(
            MANIFEST_FILENAME,
            None,
            dump_manifest_text(manifest),
            f"created {MANIFEST_FILENAME} (default={default}, overrides={len(overrides)})",
            reasons,
        )
    )
    return plan


# ── drift repair ─────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Assessment:
    """How one document chunks under one strategy."""

    chunk_by: str
    oversized: int  # sections larger than max_chunk_size before any splitting
    chunks: int
    tiny: int  # chunks under TINY_CHUNK_SIZE

    @property
    def mostly_tiny(self) -> bool:
        return self.chunks >= TINY_MIN_CHUNKS and self.tiny > TINY_SHARE * self.chunks

    @property
    def healthy(self) -> bool:
        return self.oversized == 0 and not self.mostly_tiny


def assess(relpath: str, parsed: ParsedMarkdown, strategy: Strategy) -> Assessment:
    """Chunk ``parsed`` with ``strategy`` and measure oversized sections and tiny chunks."""
    limit = strategy.max_chunk_size or DEFAULT_MAX_CHUNK_SIZE
    sections = build_chunks(relpath, parsed, Strategy(strategy.chunk_by, _UNLIMITED, None))
    oversized = sum(1 for c in sections if utf16_len(c.content) > limit)
    chunks = build_chunks(relpath, parsed, strategy)
    tiny = sum(1 for c in chunks if utf16_len(c.content) < TINY_CHUNK_SIZE)
    return Assessment(strategy.chunk_by, oversized, len(chunks), tiny)


@dataclass(frozen=True)
class _Proposal:
    relpath: str
    entry: ManifestEntry
    pattern: str
    strategy: dict[str, Any]
    reason: str


def _propose(prepared: PreparedFile) -> tuple[_Proposal | None, str | None]:
    """The override one file needs, or a note when it needs one that a manifest cannot give."""
    entry = prepared.manifest
    if entry is None:
        return None, None
    strategy = prepared.config.strategy
    rel = prepared.relpath
    current = assess(rel, prepared.parsed, strategy)
    if current.healthy:
        return None, None
    level = LEVELS.index(strategy.chunk_by)
    limit = strategy.max_chunk_size or DEFAULT_MAX_CHUNK_SIZE
    choice: Assessment | None = None
    if current.oversized:
        for candidate in LEVELS[level + 1 :]:
            result = assess(
                rel, prepared.parsed, Strategy(candidate, strategy.max_chunk_size, strategy.min_chunk_size)
            )
            if result.oversized == 0:
                choice = result
                break
        problem = (
            f"{current.oversized} section{'s' if current.oversized != 1 else ''} larger than max_chunk_size "
            f"{limit} at {strategy.chunk_by}"
        )
        if choice is None:
            return None, None  # no strategy fixes it (e.g. one huge table); the chunker splits it
    else:
        for candidate in reversed(LEVELS[:level]):
            result = assess(
                rel, prepared.parsed, Strategy(candidate, strategy.max_chunk_size, strategy.min_chunk_size)
            )
            if result.healthy:
                choice = result
                break
        problem = f"{current.tiny} of {current.chunks} chunks under {TINY_CHUNK_SIZE} characters at {strategy.chunk_by}"
        if choice is None:
            return None, None
    if _strategy_set_in_file(prepared):
        return (
            None,
            f"{rel}: {problem}; its strategy is set in the file itself (front matter or hint comment)",
        )
    rel_in_manifest = rel[len(entry.base) + 1 :] if entry.base else rel
    pattern = glob_escape(rel_in_manifest)
    if not glob_match(pattern, rel_in_manifest):
        return None, f"{rel}: {problem}, but its path cannot be written as an override pattern"
    new_strategy = {**strategy.to_dict(), "chunk_by": choice.chunk_by}
    reason = (
        f"{rel}: {problem}; {choice.chunk_by} gives {choice.chunks} chunk{'s' if choice.chunks != 1 else ''}"
    )
    return _Proposal(rel, entry, pattern, new_strategy, reason), None


def _strategy_set_in_file(prepared: PreparedFile) -> bool:
    fm = prepared.front_matter or {}
    if fm.get("mcp_strategy") is not None or fm.get("mcp_chunking_hint") is not None:
        return True
    return find_hint(prepared.markdown) is not None


def _apply(raw: dict[str, Any], proposals: list[_Proposal], base: str, *, sort_all: bool) -> None:
    """Each proposal updates the last override matching its file when that override is exactly its
    pattern, else is appended. The manifest's overrides are looked up through a ``PatternIndex``;
    an appended pattern matches only its own file (``_propose`` checked it), so no later proposal
    can match it. Running every override on every proposal took 4,000 proposals 36 s."""
    overrides: list[Any] = list(raw.get("overrides") or [])
    written = [ov for ov in overrides if isinstance(ov, dict) and isinstance(ov.get("pattern"), str)]
    index = PatternIndex([ov["pattern"] for ov in written])
    for proposal in proposals:
        rel = proposal.relpath[len(base) + 1 :] if base else proposal.relpath
        found = index.matching(rel)
        last_match = written[found[-1]] if found else None
        if last_match is not None and last_match["pattern"] == proposal.pattern and "strategy" in last_match:
            last_match["strategy"] = proposal.strategy
        else:
            overrides.append({"pattern": proposal.pattern, "strategy": proposal.strategy})
    if sort_all:
        overrides.sort(key=lambda o: sort_key(str(o.get("pattern", ""))))
    raw["overrides"] = overrides


def drift_repairs(corpus: Corpus | Path, base: FixPlan | None = None) -> FixPlan:
    """Propose overrides for files whose chunks no longer fit their manifest's strategy.

    ``base`` is a plan whose manifests are taken as already written (e.g. a bootstrap plan); the
    result then contains ``base``'s changes too, merged with the repairs. Raises
    :class:`ManifestError` when a manifest does not parse.
    """
    corpus = corpus if isinstance(corpus, Corpus) else Corpus.open(corpus)
    docs_dir, files = corpus.docs_dir, corpus.files.markdown
    _check_manifests(corpus)
    base_changes = {c.path: c for c in (base.changes if base else [])}
    texts: dict[str, str] = {}
    planned: list[ManifestEntry] = []
    for change in base_changes.values():
        manifest, issues = parse_manifest(change.new_text, source=change.path)
        planned.append(ManifestEntry(change.path, change.path.rpartition("/")[0], manifest, issues))
        texts[change.path] = change.new_text
    resolver = corpus.resolver.overlaid(planned)  # plan manifests take the place of what is on disk

    proposals: dict[str, list[_Proposal]] = {}
    notes: list[str] = list(base.notes) if base else []
    for rel in files:
        try:
            prepared = prepare_file(docs_dir, rel, resolver)
            proposal, note = _propose(prepared)
        except FindingError:
            continue  # docs-mcp validate reports it
        if note:
            notes.append(note)
        if proposal is not None:
            proposals.setdefault(proposal.entry.path, []).append(proposal)

    changes: list[ManifestChange] = []
    for path in sorted(set(proposals) | set(base_changes), key=sort_key):
        items = sorted(proposals.get(path, []), key=lambda p: sort_key(p.pattern))
        previous = base_changes.get(path)
        if not items:
            if previous is not None:
                changes.append(previous)
            continue
        entry = items[0].entry
        current = texts.get(path)
        if current is None:
            current = read_as_saved(docs_dir / path)
        try:
            raw = load_manifest_text(current.removeprefix(BOM))
        except DuplicateKeyError as exc:  # rewritten, the author's first value would be dropped unseen
            notes.append(
                f"{path}: gives the key {json.dumps(exc.key, ensure_ascii=False)} twice in one object, so fix "
                "leaves it as it is; remove one, then run fix again"
            )
            continue
        creating = previous is not None and previous.old_text is None
        _apply(raw, items, entry.base, sort_all=creating)
        new_text = dump_manifest_text(raw, indent_of(current))
        if current.startswith(BOM):  # as the author's editor saves it: no diff of every line in review
            new_text = BOM + new_text
        if current.partition("\n")[0].endswith("\r"):
            new_text = new_text.replace("\n", "\r\n")
        noun = "override" if len(items) == 1 else "overrides"
        reasons = tuple(p.reason for p in items)
        if previous is not None:
            summary = previous.summary
            if creating:
                summary = f"created {path} (default={raw['strategy']['chunk_by']}, overrides={len(raw['overrides'])})"
            changes.append(
                ManifestChange(path, previous.old_text, new_text, summary, previous.reasons + reasons)
            )
        else:
            changes.append(
                ManifestChange(
                    path, current, new_text, f"updated {path} ({len(items)} {noun} added or changed)", reasons
                )
            )
    return FixPlan(docs_dir, _one_per_file(docs_dir, changes, notes), notes)


def _one_per_file(docs_dir: Path, changes: list[ManifestChange], notes: list[str]) -> list[ManifestChange]:
    """The first change of each manifest file: a folder linked inside the docs folder shows one
    manifest under two paths (the second write found the file changed by the first, and fix ended
    with 'changed while fix was running')."""
    first: dict[str, ManifestChange] = {}
    for change in changes:
        seen = first.setdefault(os.path.realpath(docs_dir / change.path), change)
        if seen is not change and seen.new_text != change.new_text:
            notes.append(
                f"{change.path}: the same file as {seen.path} (a linked folder); run fix again after this one"
            )
    return list(first.values())


def plan_fixes(docs_dir: Path) -> FixPlan:
    """Bootstrap (when there is no root manifest) followed by drift repair: what ``fix`` does.

    The folder is checked and walked once (:class:`DocsDirError` when it is not a folder)."""
    corpus = Corpus.open(docs_dir)
    return drift_repairs(corpus, base=bootstrap_manifest(corpus))


__all__ = [
    "Assessment",
    "FixPlan",
    "ManifestChange",
    "assess",
    "bootstrap_manifest",
    "drift_repairs",
    "glob_escape",
    "pick_default_chunk_by",
    "plan_fixes",
    "suggest_chunk_by",
]
