"""An unusable index directory is reported at start-up with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_server.boot import load_index_metadata
from docs_mcp_server.errors import BootError
from tests.support.hostile_json import HUGE_NUMBER, TOO_DEEP
from tests.support.index_stubs import metadata_document, write_index_stub


def boot_error(index_dir: Path) -> str:
    with pytest.raises(BootError) as info:
        load_index_metadata(index_dir)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_directory(tmp_path: Path) -> None:
    assert boot_error(tmp_path / "nope").startswith(f"index directory does not exist: '{tmp_path / 'nope'}'")


def test_missing_metadata(tmp_path: Path) -> None:
    message = boot_error(tmp_path)
    assert message.startswith(f"metadata.json not found in index directory: '{tmp_path / 'metadata.json'}'")
    assert "docs-mcp build --docs-dir DOCS --out" in message


def test_a_docs_folder_given_as_the_index_folder(examples_docs: Path) -> None:
    message = boot_error(examples_docs)
    assert message.startswith(
        f"metadata.json not found in index directory: '{examples_docs / 'metadata.json'}'"
    )
    assert message.endswith(
        "That folder holds markdown files: it is a docs folder, not an index. Build the index into a "
        f"folder of its own (`docs-mcp build --docs-dir {examples_docs} --out ./idx`) and pass that "
        "folder as --index-dir."
    )


def test_metadata_that_is_not_json(tmp_path: Path) -> None:
    message = boot_error(write_index_stub(tmp_path, "{not json"))
    assert message.startswith(f"Invalid metadata.json at '{tmp_path / 'metadata.json'}': not valid JSON")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"x": ' + TOO_DEEP + "}", "it nests arrays or objects too deeply to read"),
        ('{"x": ' + HUGE_NUMBER + "}", "it holds a number too long to read (over 4,300 digits)"),
    ],
)
def test_metadata_too_deep_or_with_a_huge_number(tmp_path: Path, text: str, reason: str) -> None:
    # json.loads raised RecursionError / ValueError: the server died with a bare traceback
    message = boot_error(write_index_stub(tmp_path, text))
    assert message == (
        f"Invalid metadata.json at '{tmp_path / 'metadata.json'}': {reason}; "
        "re-run docs-mcp build to write the index again"
    )


def test_metadata_with_an_invalid_field(tmp_path: Path) -> None:
    message = boot_error(write_index_stub(tmp_path, metadata_document(corpus_description="")))
    assert "Invalid metadata.json" in message
    assert "corpus_description" in message


def test_unsupported_metadata_major(tmp_path: Path) -> None:
    message = boot_error(write_index_stub(tmp_path, metadata_document(metadata_version="2.0.0")))
    assert "Unsupported metadata_version major: expected 1.x.x, got 2.0.0" in message


def test_missing_lancedb(tmp_path: Path) -> None:
    message = boot_error(write_index_stub(tmp_path, table=False))
    assert message == (
        f"LanceDB index not found at '{tmp_path / '.lancedb'}'. Re-run docs-mcp build to generate the index."
    )


def test_missing_table(tmp_path: Path) -> None:
    write_index_stub(tmp_path, table=False)
    (tmp_path / ".lancedb").mkdir()
    assert boot_error(tmp_path).startswith(f"LanceDB table 'chunks' not found in '{tmp_path / '.lancedb'}'")


def test_valid_stub_gives_a_view(tmp_path: Path) -> None:
    view = load_index_metadata(write_index_stub(tmp_path))
    assert list(view.taxonomy) == ["language", "scope"]
    assert view.taxonomy["scope"].resource_values == ("global-guide",)
    assert view.stats["total_chunks"] == 2
