"""An index in the original's exact format is served by ``docs-mcp-server`` as ours is.

``node/original_index.mjs`` writes the table as the original's build does, through its LanceDB
(0.26.2 for Node): its columns only, full-text indexes at format version 1, Lance files at 2.0, the
same chunks (and vectors) as an index of ``examples/docs`` built by ``docs-mcp build``, beside that
build's ``metadata.json`` and ``chunks.json``. The real server, driven over stdio by the MCP SDK
client, must answer searches and ``get_doc`` on it exactly as on the Python-built index, under the
original's ranking (the only one an index without the search columns gets).
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from docs_mcp_core.index.lancedb_import import import_lancedb
from docs_mcp_core.index.table import BASE_COLUMNS
from tests.support.compat import run_node
from tests.support.programs import SERVER_COMMAND, server_env

pytestmark = pytest.mark.integration  # the original's LanceDB runs in node

QUERIES = [
    "retry configuration",
    "create a link",
    "error handling",
    "pagination cursor next page",
    "how do I install the SDK with pip",
    "webhooks signature verify",
    "refund a payment",
    "rate limit 429 Too Many Requests",
]
FILTERS: list[dict[str, str]] = [{}, {"language": "python"}, {"scope": "global-guide"}]
LANCE_2_0 = (0, 3)  # the major/minor version a Lance file of format 2.0 ends with


def write_original_index(node: str, ours: Path, out: Path) -> Path:
    """The index the original's build writes for the chunks (and vectors) of ``ours``."""
    metadata = json.loads((ours / "metadata.json").read_text(encoding="utf-8"))
    chunks = json.loads((ours / "chunks.json").read_text(encoding="utf-8"))
    table = import_lancedb().connect(str(ours / ".lancedb")).open_table("chunks").to_arrow()
    fingerprints = dict(
        zip(table.column("filepath").to_pylist(), table.column("file_fingerprint").to_pylist(), strict=True)
    )
    vectors = None
    if "vector" in table.column_names:
        vectors = dict(
            zip(table.column("chunk_id").to_pylist(), table.column("vector").to_pylist(), strict=True)
        )
    out.mkdir(parents=True)
    rows = out.parent / f"{out.name}-rows.json"
    keys = list(metadata["taxonomy"])
    document = {"metadata_keys": keys, "chunks": chunks, "fingerprints": fingerprints, "vectors": vectors}
    rows.write_text(json.dumps(document), encoding="utf-8")
    result = run_node(node, "original_index.mjs", str(rows), str(out / ".lancedb"))
    assert result.returncode == 0, result.stderr[-4000:]
    for name in ("metadata.json", "chunks.json"):
        shutil.copyfile(ours / name, out / name)
    return out


@pytest.fixture(scope="module", params=["lexical", "hash"])
def pair(
    request: pytest.FixtureRequest, node: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """(the index ``docs-mcp build`` wrote, the same chunks in the original's format)."""
    ours: Path = request.getfixturevalue(
        "built_index" if request.param == "lexical" else "examples_hash_index"
    )
    return ours, write_original_index(node, ours, tmp_path_factory.mktemp("original") / "index")


def test_the_original_format_is_what_the_original_writes(pair: tuple[Path, Path]) -> None:
    ours, original = pair
    table = import_lancedb().connect(str(original / ".lancedb")).open_table("chunks")
    keys = list(json.loads((ours / "metadata.json").read_text(encoding="utf-8"))["taxonomy"])
    vector = ["vector"] if "vector" in table.schema.names else []
    assert table.schema.names == [*BASE_COLUMNS, *keys, "file_fingerprint", *vector]
    versions = {i.name: (i.index_type, i.index_version) for i in table.list_indices()}
    assert versions["content_text_idx"] == ("FTS", 1) and versions["heading_idx"] == ("FTS", 1)
    assert {versions[f"{c}_idx"][0] for c in ("chunk_id", "filepath", "chunk_index")} == {"BTree"}
    files = list((original / ".lancedb" / "chunks.lance").rglob("*.lance"))
    assert files and {struct.unpack("<HH", f.read_bytes()[-8:-4]) for f in files} == {LANCE_2_0}


async def answers(index: Path, *options: str) -> list[Any]:
    """Every search and get_doc answer of ``docs-mcp-server --ranking original`` on ``index``."""
    params = StdioServerParameters(
        command=SERVER_COMMAND,
        args=["--index-dir", str(index), "--ranking", "original", "--log-level", "warning", *options],
        env=server_env(),
    )
    found: list[Any] = []
    async with Client(params) as client:
        for filters in FILTERS:
            for query in QUERIES:
                result = await client.call_tool("search_docs", {"query": query, "limit": 10, **filters})
                assert not result.is_error, result.content
                found.append(result.structured_content)
        ids = sorted({hit["chunk_id"] for page in found for hit in page["hits"]})
        for chunk_id in ids[:: max(1, len(ids) // 12)]:
            doc = await client.call_tool("get_doc", {"chunk_id": chunk_id, "context": 2})
            assert not doc.is_error, doc.content
            found.append([block.model_dump() for block in doc.content])
    return found


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("pair", "options"),
    # with a slop, the phrase leg is a query on the table's full-text index (format version 1 in both)
    [("lexical", ()), ("lexical", ("--phrase-slop", "1")), ("hash", ())],
    ids=["lexical", "lexical-slop", "hash"],
    indirect=["pair"],
)
async def test_the_server_answers_on_the_original_format_as_on_ours(
    pair: tuple[Path, Path], options: tuple[str, ...]
) -> None:
    ours, original = pair
    expected = await answers(ours, *options)
    assert sum(len(page["hits"]) for page in expected[: len(FILTERS) * len(QUERIES)]) >= 100
    assert await answers(original, *options) == expected
