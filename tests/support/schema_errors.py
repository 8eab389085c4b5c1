"""A custom tool's schema validation run in a child process, for tests of its time bounds: a
backtracking ``re`` match holds the interpreter's lock, so no thread of the test's own process
could time it out."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

WAIT_SECONDS = 20.0

_VALIDATE = """
import json, sys
from docs_mcp_server.custom_tools import schema_validator
schema, instance = json.load(sys.stdin)
print(json.dumps([e.message for e in schema_validator(schema).iter_errors(instance)]))
"""


def errors_within(schema: dict[str, Any], instance: Any) -> list[str]:
    """The validator's error messages for ``instance``, from a child process given
    :data:`WAIT_SECONDS` (``subprocess.TimeoutExpired`` beyond)."""
    done = subprocess.run(
        [sys.executable, "-c", _VALIDATE],
        input=json.dumps([schema, instance]),
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=True,
    )
    return json.loads(done.stdout)
