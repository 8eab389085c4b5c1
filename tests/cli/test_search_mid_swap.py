"""``docs-mcp search`` and ``docs-mcp get`` on a folder a build was stopped in while it swapped a
new index in read the complete index there, the one a server serves and the next build keeps, and
say so: not the new table with the previous ``metadata.json``, nor an error while a complete index
is there."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from docs_mcp_cli.app import app
from docs_mcp_core.search import SearchEngine
from tests.support.mid_swap import NEW_HIT, build_two_indexes, stopped

runner = CliRunner(env={"COLUMNS": "400"})
NEW_GUIDE = (
    "# Zephyr quokkas\n\n## Feeding zephyr quokkas\n\nZephyrquokka rations are served at dawn.\n\n"
    "## Housing zephyr quokkas\n\nA zephyrquokka burrow faces east.\n"
)


@pytest.fixture(scope="module")
def two_indexes(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> tuple[Path, Path]:
    return build_two_indexes(tmp_path_factory.mktemp("cli-mid-swap"), examples_docs, NEW_GUIDE)


@pytest.mark.parametrize(("renames", "which"), [(1, "previous"), (2, "new"), (3, "new")])
def test_search_reads_the_complete_index_of_a_folder_left_mid_swap(
    two_indexes: tuple[Path, Path], tmp_path: Path, renames: int, which: str
) -> None:
    out = stopped(two_indexes, tmp_path / "idx", renames)
    complete = SearchEngine.open(two_indexes[0] if which == "previous" else two_indexes[1])
    cursors = 0
    for query in ("zephyrquokka rations", "retry configuration"):
        result = runner.invoke(app, ["search", "--index-dir", str(out), query, "--limit", "1", "--json"])
        assert result.exit_code == 0, result.stderr
        # the same hits and the same cursor (signed with the complete index's metadata.json)
        expected = complete.search(query, limit=1)
        cursors += expected.next_cursor is not None
        assert result.stdout.strip() == expected.text()
        assert f"reading the {which} complete index there as it is" in result.stderr
    assert cursors == 1  # one query has a second page, in the complete index only
    chunk = NEW_HIT if which == "new" else "guides/retries.md#retries-and-idempotency/backoff-strategy"
    result = runner.invoke(app, ["get", "--index-dir", str(out), chunk])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == complete.get_doc(chunk).strip()


def test_an_ordinary_folder_gets_no_warning(two_indexes: tuple[Path, Path]) -> None:
    result = runner.invoke(app, ["search", "--index-dir", str(two_indexes[1]), "zephyrquokka"])
    assert result.exit_code == 0, result.stderr
    assert NEW_HIT in result.stdout and "warning" not in result.stderr
