"""The committed manifest JSON schema is the one generated from the model, and it accepts real manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_core.schema_gen import SCHEMA_RELPATH, main, render_schema


def test_committed_schema_is_current(repo_root: Path) -> None:
    committed = (repo_root / SCHEMA_RELPATH).read_text(encoding="utf-8")
    assert committed == render_schema(), "schema is stale; run: uv run python -m docs_mcp_core.schema_gen"


def test_schema_describes_the_manifest() -> None:
    schema = json.loads(render_schema())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["required"] == ["version"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {
        "$schema",
        "version",
        "strategy",
        "metadata",
        "taxonomy",
        "mcpServerInstructions",
        "overrides",
        "auto_include",
    }
    strategy = schema["$defs"]["StrategyModel"]
    assert strategy["properties"]["chunk_by"]["enum"] == ["h1", "h2", "h3", "file"]
    assert strategy["required"] == ["chunk_by"]


def test_check_mode_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "schemas" / "docs-mcp.schema.json"
    assert main(["--check", "--output", str(target)]) == 1
    assert "missing" in capsys.readouterr().err
    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render_schema()
    assert main(["--check", "--output", str(target)]) == 0
    target.write_text("{}\n", encoding="utf-8")
    assert main(["--check", "--output", str(target)]) == 1
    assert "out of date; run: uv run python -m docs_mcp_core.schema_gen" in capsys.readouterr().err


def test_schema_accepts_valid_and_rejects_invalid_manifests(repo_root: Path) -> None:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads(render_schema()))
    good = {
        "$schema": "./schemas/docs-mcp.schema.json",
        "version": "1",
        "strategy": {"chunk_by": "h2", "max_chunk_size": 8000},
        "metadata": {"language": "go"},
        "taxonomy": {"language": {"vector_collapse": True, "properties": {"go": {"mcp_resource": True}}}},
        "overrides": [{"pattern": "api/**", "strategy": {"chunk_by": "h3"}}],
    }
    assert list(validator.iter_errors(good)) == []
    for manifest in sorted((repo_root / "examples").rglob(".docs-mcp.json")):
        assert list(validator.iter_errors(json.loads(manifest.read_text(encoding="utf-8")))) == [], manifest
    for bad in [
        {"version": "2"},
        {"version": "1", "strategy": {"chunk_by": "h4"}},
        {"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 0}},
        {"version": "1", "metadata": {"k": 1}},
        {"version": "1", "overrides": [{"pattern": ""}]},
    ]:
        assert list(validator.iter_errors(bad)), bad
