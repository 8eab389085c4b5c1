"""``docs-mcp validate``: the fast CI gate for a documentation corpus.

:func:`validate_corpus` looks at everything ``build`` will read and reports every problem it can find
in one pass, as :class:`~docs_mcp_core.findings.Finding` objects (path relative to the docs folder,
line when known, severity, message). Errors mean ``build`` would fail or silently do something the
author did not intend; warnings are worth a look but do not fail the gate.

What is checked:

* manifests: invalid JSON (with line), unknown ``version``/``chunk_by``, empty or non-string metadata,
  metadata keys with a control character or named like a ``search_docs`` argument, bad overrides
  (errors); unknown keys, manifests that govern no markdown file, override patterns
  that match no file, taxonomy settings for keys or values no chunk carries (warnings);
* markdown files: not valid UTF-8, front matter that is not YAML or breaks the strategy/metadata
  schema (errors, with the line of the key at fault); files with no manifest, empty files, unknown
  ``mcp_*`` front matter keys, a ``title`` that is not text, and chunks whose id had to differ from the original's to be unique (warnings). Every file
  is chunked, so ``build`` cannot fail on it later;
* HTML comment directives ``<!-- mcp_... -->`` (:mod:`.file_checks`, with the other checks of one
  file): a chunking hint whose JSON is invalid, whose
  ``chunk_by`` is unknown or that does not have the ``<!-- mcp_chunking_hint: {...} -->`` shape is an
  error; an unknown directive (``<!-- mcp_metadata: ... -->``) is an error. A valid hint that has no
  effect (not the first hint of its file, or overridden by front matter) is a warning. The chunker
  reads hints anywhere in the file, code blocks included, so a hint inside a code block or inline
  code that takes effect is a warning ("it still applies"); comments in code that have no effect
  are treated as examples and not reported;
* metadata after resolution, across the corpus, against the ``metadata.json`` limits (number of
  taxonomy keys, key length, distinct values per key, value length; errors) and keys some clients
  refuse as argument names (warning), reported on the file that first introduced the key or value;
* prompt templates: invalid or duplicate templates (errors), a markdown and a yaml template for the
  same prompt (warning);
* the corpus: no markdown files at all (error); symbolic links that loop (an error for a document,
  a warning for a folder), dangle, or lead out of the docs folder (warnings; such files are skipped).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from docs_mcp_core.corpus import MAX_DOCUMENT_BYTES, Corpus, ManifestEntry, too_large
from docs_mcp_core.corpus_pool import DEFAULT_WORKERS, ChunkedFile, chunk_corpus_parallel
from docs_mcp_core.corpus_walk import cannot_read
from docs_mcp_core.errors import FindingError, PromptTemplateError
from docs_mcp_core.file_checks import inspect_prepared_file
from docs_mcp_core.findings import Finding
from docs_mcp_core.json_lines import JsonLines
from docs_mcp_core.manifest import unportable_key_warning
from docs_mcp_core.metadata import (
    MAX_TAXONOMY_KEYS,
    MAX_VALUES_PER_KEY,
    taxonomy_key_problem,
    taxonomy_value_problem,
)
from docs_mcp_core.metadata_origins import MetadataOrigins
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.prompts import (
    MARKDOWN_SUFFIX,
    discover_prompt_templates,
    parse_prompt_markdown,
    parse_prompt_yaml,
)

CORPUS_PATH = "."
"""The ``path`` of findings about the corpus as a whole."""


@dataclass
class ValidationReport:
    """The outcome of validating one corpus: findings in a deterministic order, plus counts."""

    docs_dir: Path
    files: int  # markdown files found (prompt templates excluded)
    chunks: int  # chunks the valid files produce
    findings: list[Finding] = field(default_factory=list)
    results: list[ChunkedFile] = field(default_factory=list, repr=False)
    """Every file that chunked, in corpus order (with its chunks when asked for ``keep_chunks``)."""

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings are allowed)."""
        return self.errors == 0

    def summary(self) -> str:
        files, errors, warnings = self.files, self.errors, self.warnings
        return (
            f"validated {files} markdown file{'s' * (files != 1)}, {errors} error{'s' * (errors != 1)}, "
            f"{warnings} warning{'s' * (warnings != 1)}"
        )

    def lines(self) -> list[str]:
        """``path:line: severity: message`` for every finding, then the summary line."""
        return [f.render() for f in self.findings] + [self.summary()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "errors": self.errors,
            "warnings": self.warnings,
            "findings": [f.to_dict() for f in self.findings],
        }


def finding_order(finding: Finding) -> tuple[Any, ...]:
    """Sort key of findings: corpus-level first, then by path, line, severity and message."""
    return (
        finding.path != CORPUS_PATH,
        sort_key(finding.path),
        finding.line or 0,
        finding.severity != "error",
        finding.message,
    )


def validate_corpus(
    corpus: Corpus | Path,
    *,
    workers: int | None = None,
    keep_chunks: bool = False,
    progress: Callable[[int, int], None] | None = None,
    follow_external_symlinks: bool = False,
) -> ValidationReport:
    """Validate a corpus (a :class:`~docs_mcp_core.corpus.Corpus`, or the folder to open as one:
    :class:`DocsDirError` if it is not a folder).

    ``workers`` is the number of processes used to parse and chunk files (default: up to 2, one
    process for small corpora). With ``keep_chunks`` the report's ``results`` carry every file's
    chunks. ``progress(done, total)`` is called as files are chunked. ``follow_external_symlinks``
    applies when a folder is given (see :func:`~docs_mcp_core.corpus.walk_corpus`). A build reads
    the corpus once through a :class:`CorpusScan` of its own instead.
    """
    if not isinstance(corpus, Corpus):
        corpus = Corpus.open(corpus, follow_external_symlinks=follow_external_symlinks)
    scan = CorpusScan(corpus, workers=workers, chunks=keep_chunks, keep_chunks=keep_chunks, progress=progress)
    for _ in scan:
        pass
    return scan.report()


class CorpusScan:
    """One pass over a corpus for validation, and for a build that indexes what it reads.

    Iterating it yields every markdown file that chunked, in corpus order, as soon as it is
    chunked (with its chunks when ``chunks``: a build streams them to disk); the findings of the
    manifests and of every file are gathered on the way. :meth:`report` then adds the checks across
    the corpus (metadata limits, manifest usage, prompt templates). ``reused`` supplies files whose
    result is known without parsing them (a build's chunk cache: unchanged since a build that
    validated them). Without ``keep_chunks`` the report drops each file's chunks once the next file
    is asked for, so memory does not grow with the corpus.
    """

    def __init__(
        self,
        corpus: Corpus,
        *,
        workers: int | None = None,
        chunks: bool = False,
        keep_chunks: bool = False,
        reused: Mapping[str, ChunkedFile] | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.corpus = corpus
        self._workers = min(DEFAULT_WORKERS, os.cpu_count() or 1) if workers is None else workers
        self._chunks = chunks or keep_chunks
        self._keep_chunks = keep_chunks
        self._reused = reused or {}
        self._progress = progress
        self._found: dict[Finding, None] = {}  # ordered set
        self._results: list[ChunkedFile] = []
        self._failed: list[str] = []  # files that did not chunk (their error is a finding)
        self._add(corpus.files.findings)
        if not corpus.files.markdown:
            self._add(
                [Finding(CORPUS_PATH, None, "error", f"no markdown files found under {corpus.docs_dir}")]
            )
        self._manifests = _check_manifests(corpus, self._add)

    def _add(self, items: Iterable[Finding]) -> None:
        for item in items:
            self._found.setdefault(item, None)

    def __iter__(self) -> Iterator[ChunkedFile]:
        with closing(
            _chunk_files(self.corpus, self._workers, self._chunks, self._reused, self._progress)
        ) as chunked:
            for result in chunked:
                if isinstance(result, FindingError):
                    self._add([result.finding])
                    self._failed.append(result.finding.path)
                    continue
                self._add(result.findings)
                yield result
                if not self._keep_chunks:
                    result.chunks = []
                self._results.append(result)

    def report(self) -> ValidationReport:
        """The findings of the pass and of the checks across the corpus, in a deterministic order."""
        corpus, results = self.corpus, self._results
        self._add(_check_metadata_limits(results, corpus.docs_dir))
        self._add(_check_manifest_usage(corpus, self._manifests, results, self._failed))
        self._add(_check_prompt_templates(corpus.docs_dir, corpus.files.templates))
        findings = sorted(self._found, key=finding_order)
        chunk_count = sum(r.chunk_count for r in results)
        return ValidationReport(corpus.docs_dir, len(corpus.files.markdown), chunk_count, findings, results)


def _chunk_files(
    corpus: Corpus,
    workers: int,
    keep_chunks: bool,
    reused: Mapping[str, ChunkedFile],
    progress: Callable[[int, int], None] | None,
) -> Generator[ChunkedFile | FindingError]:
    """Every markdown file's result in corpus order: reused ones interleaved with freshly chunked ones."""
    files = corpus.files.markdown
    todo = [rel for rel in files if rel not in reused]
    chunked = chunk_corpus_parallel(
        corpus.docs_dir,
        todo,
        workers,
        keep_chunks=keep_chunks,
        inspect=inspect_prepared_file,
        resolver=corpus.resolver,
    )
    try:
        done = 0
        for rel in files:
            hit = reused.get(rel)
            if hit is not None:
                yield hit
                continue
            _rel, result = next(chunked)
            done += 1
            if progress is not None and (done % 64 == 0 or done == len(todo)):
                progress(done, len(todo))
            yield result
    finally:
        close = getattr(chunked, "close", None)  # stops the worker pool if we stopped early
        if close is not None:
            close()


# ── manifests ────────────────────────────────────────────────────────────────────────────────────


def _check_manifests(corpus: Corpus, add: Callable[[Iterable[Finding]], None]) -> dict[str, ManifestEntry]:
    """Parse every manifest of the corpus; return the valid ones by path."""
    valid: dict[str, ManifestEntry] = {}
    resolver = corpus.resolver
    for path, error in resolver.load_all(corpus.files.manifests):
        if error is not None:
            add([error.finding])
            continue
        entry = resolver.loaded.get(path)
        if entry is None:
            continue
        valid[path] = entry
        text = _read_text(resolver.docs_dir / path) if entry.issues else None
        lines = JsonLines(text) if text is not None else None
        for issue in entry.issues:
            line = None
            match = re.search(r"'([^']*)'", issue.message)
            if match and lines is not None:
                line = lines.key_line(match.group(1))
            add([Finding(path, line, issue.severity, issue.message)])
    return valid


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _check_manifest_usage(
    corpus: Corpus, manifests: Mapping[str, ManifestEntry], results: list[ChunkedFile], failed: list[str]
) -> list[Finding]:
    """Manifests that govern nothing, overrides that match nothing, taxonomy config that matches nothing."""
    findings: list[Finding] = []
    governed: dict[str, list[str]] = {}
    for relpath in sorted(set(failed) & set(corpus.files.markdown)):  # not chunked, governed all the same
        with suppress(FindingError):  # a broken manifest is reported already
            if (entry := corpus.resolver.nearest(relpath)) is not None:
                governed.setdefault(entry.path, []).append(relpath)
    values: dict[str, set[str]] = {}
    for r in results:
        if r.manifest_path is not None:
            governed.setdefault(r.manifest_path, []).append(r.relpath)
        for key, value in r.metadata.items():
            values.setdefault(key, set()).add(value)
    for path, entry in manifests.items():
        files = governed.get(path)
        lines = JsonLines(_read_text(corpus.docs_dir / path) or "")
        if not files:
            findings.append(
                Finding(
                    path,
                    None,
                    "warning",
                    "this manifest governs no markdown file (each file uses only its nearest manifest); "
                    "its settings have no effect",
                )
            )
            continue
        prefix = f"{entry.base}/" if entry.base else ""
        index = entry.manifest.override_index()  # each pattern was run on each file: 20,000 x 500 took 22 s
        matched = {i for f in files for i in index.matching(f[len(prefix) :])}
        for i, ov in enumerate(entry.manifest.overrides or []):
            if i not in matched:
                findings.append(
                    Finding(
                        path,
                        lines.pattern_line(ov.pattern),
                        "warning",
                        f"overrides[{i}].pattern {json.dumps(ov.pattern)} matches no markdown file governed "
                        "by this manifest (patterns are relative to the manifest's folder)",
                    )
                )
        for key, config in (entry.manifest.taxonomy or {}).items():
            line = lines.key_line(key, after="taxonomy")
            if key.strip() not in values:
                findings.append(
                    Finding(
                        path,
                        line,
                        "warning",
                        f"taxonomy key '{key}' does not match any chunk metadata; this configuration has no "
                        "effect",
                    )
                )
                continue
            for value in config.properties:
                if value.strip() not in values[key.strip()]:
                    findings.append(
                        Finding(
                            path,
                            lines.key_line(value, after="properties"),
                            "warning",
                            f"taxonomy.{key}.properties: no chunk has {key} = '{value}'; this setting has no "
                            "effect",
                        )
                    )
    return findings


# ── metadata limits ──────────────────────────────────────────────────────────────────────────────


def _check_metadata_limits(results: list[ChunkedFile], docs_dir: Path | None = None) -> list[Finding]:
    """The metadata.json taxonomy limits, reported where each problem is written (the front matter
    or manifest of the file that introduced it, :class:`MetadataOrigins`)."""
    findings: list[Finding] = []
    keys: dict[str, str] = {}  # key -> file that introduced it
    values: dict[str, dict[str, str]] = {}  # key -> value -> file
    bad_values: set[tuple[str, str]] = set()
    origins = MetadataOrigins(docs_dir)

    def found(
        r: ChunkedFile, raw_key: str, value: str | None, severity: Literal["error", "warning"], message: str
    ) -> None:
        findings.append(Finding(*origins.of(r, raw_key, value), severity, message))

    for r in results:
        if r.chunk_count == 0:
            continue
        for raw_key, raw_value in r.metadata.items():
            key, value = raw_key.strip(), raw_value.strip()
            if key not in keys:
                keys[key] = r.relpath
                problem = taxonomy_key_problem(key)
                if problem:
                    found(r, raw_key, None, "error", f"metadata key '{key}': {problem}")
                elif warning := unportable_key_warning(key):
                    found(r, raw_key, None, "warning", warning)
                if len(keys) == MAX_TAXONOMY_KEYS + 1:
                    message = (
                        f"metadata key '{key}' is the {MAX_TAXONOMY_KEYS + 1}th distinct key in the corpus;"
                        f" at most {MAX_TAXONOMY_KEYS} taxonomy keys are allowed"
                    )
                    found(r, raw_key, None, "error", message)
            seen = values.setdefault(key, {})
            if value in seen or (key, value) in bad_values:
                continue
            problem = taxonomy_value_problem(value)
            if problem:
                bad_values.add((key, value))
                found(r, raw_key, value, "error", f"metadata {key}: value {problem}")
                continue
            seen[value] = r.relpath
            if len(seen) == MAX_VALUES_PER_KEY + 1:
                message = (
                    f"metadata {key} = '{value}' is the {MAX_VALUES_PER_KEY + 1}th distinct value of '{key}'"
                    f" in the corpus; at most {MAX_VALUES_PER_KEY} values per key are allowed"
                )
                found(r, raw_key, value, "error", message)
    return findings


# ── prompt templates ─────────────────────────────────────────────────────────────────────────────


def _finding_from_message(default_path: str, message: str) -> Finding:
    """Turn ``path:line: message`` / ``path: message`` into a finding."""
    prefix = default_path + ":"
    if message.startswith(prefix):
        rest = message[len(prefix) :]
        head, sep, tail = rest.partition(":")
        if sep and head.strip().isdigit():
            return Finding(default_path, int(head), "error", tail.strip())
        return Finding(default_path, None, "error", rest.strip())
    return Finding(default_path, None, "error", message)


def _check_prompt_templates(docs_dir: Path, paths: Sequence[str]) -> list[Finding]:
    try:
        templates, _warnings = discover_prompt_templates(docs_dir, paths)
    except PromptTemplateError as exc:
        quoted = re.findall(r"'([^']+)'", str(exc))
        path = quoted[-1] if quoted else CORPUS_PATH
        return [Finding(path, None, "error", str(exc))]
    except OSError as exc:  # pragma: no cover - unreadable folder
        return [Finding(CORPUS_PATH, None, "error", f"cannot list prompt templates: {exc}")]
    findings: list[Finding] = []
    for template in templates:
        if template.format == "yaml":
            twin = template.name + MARKDOWN_SUFFIX
            if (docs_dir / twin).is_file():
                findings.append(
                    Finding(
                        twin,
                        None,
                        "warning",
                        f"Found both markdown and yaml templates for '{template.name}' ({twin} and "
                        f"{template.path}); using yaml",
                    )
                )
        try:
            if (size := (docs_dir / template.path).stat().st_size) > MAX_DOCUMENT_BYTES:  # read whole below
                findings.append(Finding(template.path, None, "error", too_large("prompt template", size)))
                continue
            data = (docs_dir / template.path).read_bytes()
        except OSError as exc:
            findings.append(Finding(template.path, None, "error", cannot_read("prompt template", exc)))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            findings.append(Finding(template.path, line, "error", "prompt template is not valid UTF-8"))
            continue
        parse = parse_prompt_yaml if template.format == "yaml" else parse_prompt_markdown
        try:
            parse(text, name=template.name, source=template.path)
        except PromptTemplateError as exc:
            findings.append(_finding_from_message(template.path, str(exc)))
        except Exception as exc:  # noqa: BLE001 - never let a template crash the gate
            findings.append(
                Finding(template.path, None, "error", f"invalid prompt template: {type(exc).__name__}: {exc}")
            )
    return findings


__all__ = [
    "CORPUS_PATH",
    "ValidationReport",
    "finding_order",
    "validate_corpus",
]
