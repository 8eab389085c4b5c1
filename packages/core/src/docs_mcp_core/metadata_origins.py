"""Where a metadata key of a markdown file is written, for a finding about it (see :mod:`.validation`).

A file's metadata merges its manifest's (the root ``metadata`` and the overrides that match it)
with its front matter's ``metadata`` and ``mcp_metadata``. A problem with a key or value (too long,
one value too many, a name some clients refuse) is the author's to fix where it is written: the
front matter's line when the file itself says it, else the governing manifest's line of the key.
Looked up only for a finding, so a corpus without problems reads nothing more.
"""

from __future__ import annotations

from pathlib import Path

from docs_mcp_core.corpus import BOM, parse_front_matter, read_markdown
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.errors import FindingError
from docs_mcp_core.json_lines import JsonLines
from docs_mcp_core.markdown import parse_markdown

__all__ = ["MetadataOrigins"]

_FRONT_MATTER_BLOCKS = ("mcp_metadata", "metadata")  # the first wins when both set a key


class MetadataOrigins:
    """Where the metadata keys of one corpus's files are written, for the findings of one
    validation: each manifest is read and scanned once, however many findings point into it (read
    again for each, 4,000 findings in one manifest of 4,000 overrides took 100 s)."""

    def __init__(self, docs_dir: Path | None) -> None:
        self._docs_dir = docs_dir
        self._manifests: dict[str, JsonLines | None] = {}

    def of(self, file: ChunkedFile, key: str, value: str | None = None) -> tuple[str, int | None]:
        """The path and line (``None`` when unknown) where ``file``'s metadata ``key`` (as written,
        untrimmed), or that key with ``value``, is written: its front matter, else its manifest,
        else the file itself without a line."""
        docs_dir = self._docs_dir
        if docs_dir is None:
            return file.relpath, None
        try:
            markdown = read_markdown(docs_dir, file.relpath).removeprefix(BOM)
            parsed = parse_markdown(markdown) if markdown.startswith("---") else None
            front_matter = parse_front_matter(parsed, file.relpath) if parsed is not None else None
        except FindingError:
            parsed = front_matter = None
        if parsed is not None and front_matter:
            for block in _FRONT_MATTER_BLOCKS:
                written = front_matter.get(block)
                if not isinstance(written, dict) or key not in written:
                    continue
                if value is None or str(written[key]).strip() == value:
                    line = parsed.front_matter_key_lines([key]).get(key)
                    return file.relpath, line or parsed.front_matter_key_line(block)
        if file.manifest_path is None:
            return file.relpath, None
        lines = self._manifest_lines(docs_dir, file.manifest_path)
        if lines is None:
            return file.manifest_path, None
        return file.manifest_path, lines.key_line(key, after="metadata") or lines.key_line(key)

    def _manifest_lines(self, docs_dir: Path, manifest_path: str) -> JsonLines | None:
        if manifest_path not in self._manifests:
            try:
                text = (docs_dir / manifest_path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self._manifests[manifest_path] = None
            else:
                self._manifests[manifest_path] = JsonLines(text)
        return self._manifests[manifest_path]
