"""How the code is laid out: short functions and modules in core, every module on the map."""

from __future__ import annotations

import ast
import builtins
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


def _base_names(node: ast.ClassDef) -> set[str]:
    return {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}


def test_every_public_exception_class_is_in_its_package_errors_module() -> None:
    """One error module per package; a private class (``_Invalid``) may stay where it is raised."""
    builtin = {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    classes = [
        (path, node)
        for path in _modules(REPO_ROOT / "packages")
        if "src" in path.parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    ]
    exceptions = set(builtin)
    while True:  # subclasses of subclasses, by name
        more = {node.name for _, node in classes if _base_names(node) & exceptions} - exceptions
        if not more:
            break
        exceptions |= more
    misplaced = [
        f"{path.relative_to(REPO_ROOT)}: {node.name}"
        for path, node in classes
        if node.name in exceptions and path.name != "errors.py" and not node.name.startswith("_")
    ]
    assert not misplaced, "\n".join(misplaced)


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


ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"
PACKAGES = {
    "docs_mcp_core": "core",
    "docs_mcp_cli": "cli",
    "docs_mcp_server": "server",
    "docs_mcp_eval": "eval",
}


def _module_names(package: str) -> list[str]:
    """Every module of a package, dotted and relative to it (sub-packages by their own name)."""
    root = REPO_ROOT / "packages" / PACKAGES[package] / "src" / package
    names: list[str] = []
    for path in _modules(root):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and parts[-1] != "__main__":
            names.append(".".join(parts))
    return names


def _architecture_section(package: str) -> str:
    """The part of docs/architecture.md about ``package``: core's module map, or the paragraph that
    starts with the package's name."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    if package == "docs_mcp_core":
        start = text.index("## Module map of `docs_mcp_core`")
        return text[start : text.index("\n## ", start + 1)]
    start = text.index(f"\n`{package}` ")
    end = text.find("\n\n", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_architecture_page_names_every_module_of_every_package() -> None:
    missing = [
        f"{package}.{name}"
        for package in PACKAGES
        for name in _module_names(package)
        if f"`{name}`" not in _architecture_section(package)
    ]
    assert not missing, f"docs/architecture.md does not name {', '.join(missing)}"


def test_the_docs_index_lists_every_page() -> None:
    index = (REPO_ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (REPO_ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert [p for p in pages if f"]({p})" not in index] == []
