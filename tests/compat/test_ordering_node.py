"""The project's string order against Node's ``localeCompare``, the original's, on random strings.

Exact for ASCII text: every printable character and the whitespace ICU orders, in strings shaped
like paths and chunk ids and in strings of any printable characters.
"""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from docs_mcp_core.ordering import sorted_strings
from tests.support.compat import NODE_SECONDS

pytestmark = pytest.mark.integration  # Node sorts

SORT = "const v = JSON.parse(require('fs').readFileSync(0, 'utf8')); v.sort((a, b) => a.localeCompare(b)); process.stdout.write(JSON.stringify(v));"
PATH_CHARACTERS = "abcxyzABCXYZ0129_-./#"
PRINTABLE = "".join(chr(code) for code in range(32, 127)) + "\t\n"


def node_order(node: str, values: list[str]) -> list[str]:
    done = subprocess.run(
        [node, "-e", SORT],
        input=json.dumps(values),
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("alphabet", [PATH_CHARACTERS, PRINTABLE], ids=["path-like", "printable"])
def test_ascii_strings_sort_exactly_as_node_sorts_them(node: str, alphabet: str) -> None:
    rng = random.Random(7)
    values = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(5000)})
    rng.shuffle(values)
    assert sorted_strings(values) == node_order(node, values)
