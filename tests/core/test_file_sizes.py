"""A document or manifest far larger than any written by hand is refused by its size, before it
is read: a 3 GB sparse page.md (or a dump saved as .md) was read whole, then decoded and parsed,
using memory many times its size until the kernel killed validate or build, or, under a memory
limit, 'cannot chunk this file: MemoryError'."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docs_mcp_core.corpus import MAX_DOCUMENT_BYTES, MAX_MANIFEST_BYTES
from docs_mcp_core.validation import validate_corpus


def sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no room on disk (zeros the file system does not store)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)


def test_a_document_over_the_limit_is_an_error_naming_its_size(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# Fine\n\n## Part\n\ntext\n", encoding="utf-8")
    sparse(tmp_path / "dump.md", MAX_DOCUMENT_BYTES + 1)  # one byte over: as refused as 3 GB, and cheap
    report = validate_corpus(tmp_path, workers=1)
    [finding] = [f for f in report.findings if f.path == "dump.md"]
    assert finding.severity == "error"
    assert finding.message.startswith(f"file is {MAX_DOCUMENT_BYTES + 1:,} bytes, over the 64 MiB")


@pytest.mark.integration  # 64 MiB parsed (5 s): out of the fast loop
def test_a_document_at_the_limit_is_read(tmp_path: Path) -> None:
    head = b"# Page\n\n" + b"word " * 1000
    # spaces after the words (zeros would be a NUL byte, which no text file holds)
    (tmp_path / "page.md").write_bytes(head + b" " * (MAX_DOCUMENT_BYTES - len(head)))
    assert os.path.getsize(tmp_path / "page.md") == MAX_DOCUMENT_BYTES
    report = validate_corpus(tmp_path, workers=1)
    assert not [f for f in report.findings if f.severity == "error"]


def test_a_manifest_over_the_limit_is_an_error_naming_its_size(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("# Guide\n\n## Part\n\ntext\n", encoding="utf-8")
    sparse(tmp_path / ".docs-mcp.json", MAX_MANIFEST_BYTES + 1)
    report = validate_corpus(tmp_path, workers=1)
    [finding] = [f for f in report.findings if f.path == ".docs-mcp.json"]
    assert finding.severity == "error"
    assert finding.message.startswith(f"manifest is {MAX_MANIFEST_BYTES + 1:,} bytes, over the 16 MiB")


def test_a_prompt_template_over_the_limit_is_an_error_naming_its_size(tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("# Guide\n\n## Part\n\ntext\n", encoding="utf-8")
    sparse(tmp_path / "prompts" / "review.template.md", MAX_DOCUMENT_BYTES + 1)
    report = validate_corpus(tmp_path, workers=1)
    [finding] = [f for f in report.findings if f.path == "prompts/review.template.md"]
    assert finding.severity == "error"
    assert finding.message.startswith(f"prompt template is {MAX_DOCUMENT_BYTES + 1:,} bytes, over the 64 MiB")
