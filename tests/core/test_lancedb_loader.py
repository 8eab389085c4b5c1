"""LanceDB imported with its namespace client's validators deferred: still validating, nothing leaked.

Each check runs in a fresh interpreter, because the deferral only applies to the first import.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # starts processes or listens on ports


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_pydantic_is_left_as_it_was_and_lancedb_works(tmp_path: Path) -> None:
    out = _run(
        f"""
        import pydantic
        from pydantic._internal import _config
        real = pydantic.validate_call
        from docs_mcp_core.index.lancedb_import import import_lancedb
        lancedb = import_lancedb()
        assert pydantic.validate_call is real
        assert _config.config_defaults["defer_build"] is False
        import pyarrow as pa
        db = lancedb.connect({str(tmp_path)!r})
        table = db.create_table("t", pa.table({{"x": [1, 2, 3]}}))
        print(table.count_rows(), import_lancedb() is lancedb)
        """
    )
    assert out.split() == ["3", "True"]


def test_deferred_validators_still_validate() -> None:
    out = _run(
        """
        from docs_mcp_core.index.lancedb_import import import_lancedb
        import_lancedb()
        import pydantic
        from lance_namespace_urllib3_client import ApiClient
        from lance_namespace_urllib3_client.api.namespace_api import NamespaceApi
        from lance_namespace_urllib3_client.models import CreateNamespaceRequest
        try:
            NamespaceApi(ApiClient()).create_namespace(id=5, create_namespace_request=7)
        except pydantic.ValidationError as exc:
            print("call", exc.error_count())
        try:
            CreateNamespaceRequest(id="not a list")
        except pydantic.ValidationError as exc:
            print("model", exc.error_count())
        print(CreateNamespaceRequest(id=["a"]).id)
        """
    )
    assert out.splitlines() == ["call 2", "model 1", "['a']"]
