"""How the code is laid out: short functions and modules in core, every module on the map."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO_ROOT

CORE = REPO_ROOT / "packages" / "core" / "src" / "docs_mcp_core"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_function_in_core_is_longer_than_80_lines() -> None:
    long: list[str] = []
    for path in _modules(CORE):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(CORE)}: {node.name} has {length} lines")
    assert not long, "\n".join(long)


def test_a_core_module_over_500_lines_says_why_at_its_top() -> None:
    unexplained: list[str] = []
    for path in _modules(CORE):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if lines > MAX_MODULE_LINES and f"{MAX_MODULE_LINES} lines" not in docstring:
            unexplained.append(f"{path.relative_to(CORE)}: {lines} lines, and its docstring does not say why")
    assert not unexplained, "\n".join(unexplained)
