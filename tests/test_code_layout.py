"""How the code is laid out: short functions and modules in core, every module on the map."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO_ROOT

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


def _is_test_module(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last == "conftest" or last.startswith("test_")


def test_no_test_module_imports_another_test_module_or_a_conftest() -> None:
    """Shared helpers live in ``tests/support`` or ``tests/fakes``, so each folder runs alone."""
    tests = REPO_ROOT / "tests"
    found: list[str] = []
    for path in _modules(tests):
        package = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against the importing module's package
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                names = [base] if base else []
                names += [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            bad = [n for n in names if n.startswith("tests.") and _is_test_module(n)]
            if bad:
                found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} imports {bad[0]}")
    assert not found, "\n".join(found)
