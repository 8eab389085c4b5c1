"""A UTF-8 byte-order mark at the start of a markdown file or a manifest is dropped, with one
warning per file, the same way for both: front matter and a first-line heading still count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, BuildReporter, build_index
from docs_mcp_core.validation import validate_corpus

BOM = "\ufeff".encode()
WARNING = (
    "warning: the file starts with a UTF-8 byte-order mark, which is ignored; save it as UTF-8 "
    "without one to silence this warning"
)
MANIFEST = json.dumps({"version": "1", "taxonomy": {"language": {}}}).encode()
FRONT_MATTER = b"---\nmcp_metadata:\n  language: python\n---\n# Title\n\nintro\n\n## Section\n\nbody\n"
HEADING_FIRST = b"# Only\n\n## Part\n\ntext\n"


def _corpus(folder: Path, bom: bytes) -> Path:
    folder.mkdir()
    (folder / ".docs-mcp.json").write_bytes(bom + MANIFEST)
    (folder / "a.md").write_bytes(bom + FRONT_MATTER)
    (folder / "b.md").write_bytes(bom + HEADING_FIRST)
    return folder


@pytest.fixture
def with_bom(tmp_path: Path) -> Path:
    return _corpus(tmp_path / "bom", BOM)


@pytest.fixture
def without_bom(tmp_path: Path) -> Path:
    return _corpus(tmp_path / "plain", b"")


def test_validate_warns_once_per_file_and_reads_what_the_mark_hid(with_bom: Path) -> None:
    report = validate_corpus(with_bom, workers=1, keep_chunks=True)
    assert [f.render() for f in report.findings] == [
        f".docs-mcp.json: {WARNING}",
        f"a.md: {WARNING}",
        f"b.md: {WARNING}",
    ]
    chunks = {c.chunk_id: c for r in report.results for c in r.chunks}
    assert list(chunks) == ["a.md#_preamble", "a.md#title/section", "b.md#_preamble", "b.md#only/part"]
    assert chunks["a.md#title/section"].metadata == {"language": "python"}  # the front matter was read
    assert chunks["a.md#_preamble"].content == "# Title\n\nintro"  # and is not a chunk
    assert chunks["b.md#only/part"].breadcrumb == "b.md > Only > Part"  # the first line is a heading


def test_chunks_are_those_of_the_file_without_the_mark(with_bom: Path, without_bom: Path) -> None:
    def chunks(folder: Path) -> list[dict[str, object]]:
        report = validate_corpus(folder, workers=1, keep_chunks=True)
        return [c.to_dict() for r in report.results for c in r.chunks]

    assert chunks(with_bom) == chunks(without_bom)
    assert validate_corpus(without_bom, workers=1).findings == []


def test_every_build_warns_even_when_it_reuses_the_files_chunks(with_bom: Path, tmp_path: Path) -> None:
    warned: list[str] = []

    class Reporter(BuildReporter):
        def warn(self, message: str) -> None:
            warned.append(message)

    out = tmp_path / "out"
    for _ in range(2):
        warned.clear()
        build_index(BuildOptions(docs_dir=with_bom, out_dir=out), Reporter())
        assert warned == [f".docs-mcp.json: {WARNING}", f"a.md: {WARNING}", f"b.md: {WARNING}"]
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert meta["taxonomy"]["language"]["values"] == ["python"]
