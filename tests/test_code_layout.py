"""How the code is laid out: short functions and modules in every package, imports in one direction,
every module on the map."""

from __future__ import annotations

import ast
import builtins
import re
import tomllib
from pathlib import Path

from tests.support.paths import REPO_ROOT

PACKAGES_DIR = REPO_ROOT / "packages"
SOURCES = {package: PACKAGES_DIR / package / "src" for package in ("core", "cli", "server", "eval")}
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 500

# Today's offenders outside core, each to be split; an entry that no longer offends fails the test,
# so the lists only shrink.
LONG_FUNCTIONS_ALLOWED: set[str] = set()
LONG_MODULES_ALLOWED: set[str] = set()
IMPORT_CIRCLES_ALLOWED: set[str] = set()


def _modules(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _source_modules() -> list[tuple[str, Path]]:
    """Every module of the four packages with its name as the allow-lists write it."""
    return [
        (f"{package}/{path.relative_to(src).as_posix()}", path)
        for package, src in SOURCES.items()
        for path in _modules(src)
    ]


def _check_allowed(found: set[str], allowed: set[str], what: str) -> None:
    new = sorted(found - allowed)
    fixed = sorted(allowed - found)
    problems = [f"{item}: {what}" for item in new]
    problems += [f"{item}: fixed, remove it from the allow-list" for item in fixed]
    assert not problems, "\n".join(problems)


def test_no_function_is_longer_than_80_lines() -> None:
    long: dict[str, int] = {}
    for name, path in _source_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{name}: {node.name}"] = length
    _check_allowed(set(long), LONG_FUNCTIONS_ALLOWED, f"over {MAX_FUNCTION_LINES} lines")


def test_a_module_over_500_lines_says_why_at_its_top() -> None:
    """The reason is part of the module's docstring and names the limit ("... 500 lines ...")."""
    unexplained: set[str] = set()
    for name, path in _source_modules():
        text = path.read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if text.count("\n") > MAX_MODULE_LINES and f"{MAX_MODULE_LINES} lines" not in docstring:
            unexplained.add(name)
    _check_allowed(
        unexplained,
        LONG_MODULES_ALLOWED,
        f"over {MAX_MODULE_LINES} lines, and its docstring does not say why",
    )


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


# A dotted module name of a sub-package, as the page writes it (`search.ranker`, `agent.loop`).
_SUBPACKAGE_MODULE = re.compile(r"`((?:build|index|search|embedding|agent)\.[a-z_]+)`")


def test_the_architecture_page_names_no_module_that_does_not_exist() -> None:
    """The first column of the module map's tables, and every sub-package module the page names."""
    core_map = _architecture_section("docs_mcp_core")
    named = {
        ("docs_mcp_core", name)
        for line in core_map.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`([a-z_][\w.]*)`", line.split("|")[1])
    }
    text = ARCHITECTURE.read_text(encoding="utf-8")
    for name in _SUBPACKAGE_MODULE.findall(text):
        named.add(("docs_mcp_eval" if name.startswith("agent.") else "docs_mcp_core", name))
    existing = {package: set(_module_names(package)) for package in PACKAGES}
    gone = sorted(f"{package}.{name}" for package, name in named if name not in existing[package])
    assert not gone, f"docs/architecture.md names modules that do not exist: {', '.join(gone)}"


def test_the_docs_index_lists_every_page() -> None:
    index = (REPO_ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (REPO_ROOT / "docs").glob("*.md") if p.name != "README.md")
    assert [p for p in pages if f"]({p})" not in index] == []


def _imports(path: Path, module: str, *, data_reads: bool = False) -> list[tuple[int, str]]:
    """Every module ``path`` imports (at its top or inside a function), absolute and dotted; with
    ``data_reads``, also every project package it names in a string (its data read by name)."""
    is_package = path.name == "__init__.py"
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif data_reads and isinstance(node, ast.Constant) and node.value in PROJECT:
            found.append((node.lineno, str(node.value)))
    return found


def _dotted_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for src in SOURCES.values():
        for path in _modules(src):
            parts = path.relative_to(src).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _declared_project_packages(package: str) -> set[str]:
    """The project packages ``package``'s pyproject declares (dependencies and extras), by import name."""
    project = tomllib.loads((PACKAGES_DIR / package / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    names = {re.split(r"[\s\[<>=!~;]", item, maxsplit=1)[0] for item in requirements}
    return {name.replace("-", "_") for name in names if name.startswith("docs-mcp-")}


PROJECT = {f"docs_mcp_{package}" for package in SOURCES}
FORBIDDEN_IN_CORE = {*PROJECT - {"docs_mcp_core"}, "mcp", "typer"}


def test_imports_run_one_way_between_the_packages() -> None:
    """cli and server import core; core imports neither them nor mcp/typer; eval imports a project
    package only when its pyproject declares it. A package may import only what it declares."""
    assert _declared_project_packages("cli") == {"docs_mcp_core"}
    assert _declared_project_packages("server") == {"docs_mcp_core"}
    assert "docs_mcp_cli" not in _declared_project_packages("eval")
    assert "docs_mcp_server" not in _declared_project_packages("eval")
    wrong: list[str] = []
    for package, src in SOURCES.items():
        own = f"docs_mcp_{package}"
        allowed = _declared_project_packages(package) | {own}
        forbidden = FORBIDDEN_IN_CORE if package == "core" else set()
        for path in _modules(src):
            module = ".".join(path.relative_to(src).with_suffix("").parts)
            for line, name in _imports(path, module, data_reads=True):
                top = name.split(".", 1)[0]
                if top in forbidden or (top.startswith("docs_mcp_") and top not in allowed):
                    wrong.append(f"{path.relative_to(REPO_ROOT)}:{line} imports {name}")
    assert not wrong, "\n".join(sorted(set(wrong)))


def _import_circles() -> set[str]:
    """The modules that import one another, directly or round a longer loop (Tarjan's components)."""
    modules = _dotted_modules()

    def resolve(name: str) -> str | None:
        while name not in modules:
            if "." not in name:
                return None
            name = name.rsplit(".", 1)[0]
        return name

    graph = {
        module: {
            target
            for _, name in _imports(path, module)
            if (target := resolve(name)) is not None and target != module
        }
        for module, path in modules.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: set[str] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                circles.add(" -> ".join(sorted(component)))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_modules_import_each_other() -> None:
    _check_allowed(_import_circles(), IMPORT_CIRCLES_ALLOWED, "an import circle")


def test_only_one_module_reaches_into_lancedb_private_names() -> None:
    """``index.lancedb_async`` is the one place that uses ``LanceTable._table`` and LanceDB's
    background loop (no public API offers them); everything else asks it."""
    helper = SOURCES["core"] / "docs_mcp_core" / "index" / "lancedb_async.py"
    found: list[str] = []
    for _, path in _source_modules():
        if path == helper:
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            private = (
                isinstance(node, ast.Attribute)
                and node.attr == "_table"
                and not (isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"})
            )
            if private or (isinstance(node, ast.ImportFrom) and node.module == "lancedb.background_loop"):
                found.append(f"{path.relative_to(REPO_ROOT)}:{getattr(node, 'lineno', 0)}")
    assert not found, "\n".join(found)


def test_server_modules_import_no_submodule_of_the_search_package_at_their_top() -> None:
    """The server opens the index on a thread of its own, which imports ``docs_mcp_core.search``;
    a server module imported meanwhile on the main thread that imports a submodule of that package
    (``from docs_mcp_core.search.sections import ...``) takes the submodule's import lock and then
    waits for the package's, while the other thread holds the package's and waits for the
    submodule's: Python breaks the cycle with a ``_DeadlockError`` and the index fails to open.
    Importing the package itself, or inside a function run after the index is open, is safe."""
    found: list[str] = []
    for path in _modules(SOURCES["server"]):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("docs_mcp_core.search."):
                found.append(f"{path.name}:{node.lineno}: from {node.module} import ...")
    assert not found, "\n".join(found)
