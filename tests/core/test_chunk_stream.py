"""chunks.json is written a chunk at a time, byte for byte what ``json.dump(indent=2)`` writes."""

from __future__ import annotations

import enum
import json
import math
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.chunk_stream import ChunksJsonWriter, dumps_indented


class Colour(enum.IntEnum):
    RED = 1


class Name(str, enum.Enum):  # noqa: UP042 - the (str, Enum) mix-in is what json.dumps must handle
    ADA = "ada"


VALUES: list[Any] = [
    "plain",
    "",
    'quotes " and \\\\ backslashes, tabs\\t, a raw\ttab and\nnewline, NUL \x00, DEL \x7f',
    "unicode: café, 日本語, emoji 🚀, surrogate-free \u2028 \u2029",
    0,
    -17,
    10**30,
    1.5,
    -0.0,
    1e-300,
    float("nan"),
    math.inf,
    -math.inf,
    True,
    False,
    None,
    [],
    {},
    [1, "two", [3, []], {}],
    (1, 2),
    {"nested": {"deeper": {"deepest": [None, {"k": "v"}]}}, "empty": {}, "list": []},
    {1: "int key", "s": "str key"},  # not every key a str: json.dumps's own rules
    Colour.RED,
    Name.ADA,
    {"enum": Colour.RED, "str enum": Name.ADA},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
@pytest.mark.parametrize("indent", ["", "  ", "    "])
def test_dumps_indented_equals_json_dumps(value: Any, indent: str) -> None:
    assert dumps_indented(value, indent) == json.dumps(value, indent=2, ensure_ascii=False).replace(
        "\n", "\n" + indent
    )


def test_a_chunk_like_dict() -> None:
    chunk = {
        "chunk_id": "docs/a.md#intro",
        "filepath": "docs/a.md",
        "heading": 'Intro "quoted"',
        "heading_level": 2,
        "content": "# Intro\n\n```python\nprint('hi')\n```\n",
        "content_text": "Intro\n\nprint('hi')",
        "breadcrumb": "A > Intro",
        "chunk_index": 0,
        "metadata": {"language": "python", "scope": "sdk-specific"},
    }
    assert dumps_indented(chunk, "  ") == json.dumps(chunk, indent=2, ensure_ascii=False).replace(
        "\n", "\n  "
    )


@pytest.mark.parametrize("count", [0, 1, 3])
def test_the_writer_writes_what_json_dump_writes(tmp_path: Path, count: int) -> None:
    items = [{"chunk_id": f"c{i}", "n": i, "metadata": {"k": "v" * i}} for i in range(count)]
    path = tmp_path / "chunks.json"
    with ChunksJsonWriter(path) as writer:
        for item in items:
            writer.add(item)
    assert path.read_text(encoding="utf-8") == json.dumps(items, indent=2, ensure_ascii=False)
