"""The four distributions as users get them: built wheels and sdists, their metadata, one version.

Everything here works on real artefacts: ``uv build`` output, wheels installed into fresh virtual
environments (third-party dependencies exactly as locked, see ``scripts/venv_from_lock.py``), and the
console scripts run as subprocesses.
"""

from __future__ import annotations

import configparser
import hashlib
import importlib
import importlib.util
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import Message
from email.parser import Parser
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.requirements import Requirement

REPO_ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = REPO_ROOT / "scripts"
DISTRIBUTIONS = {
    "docs-mcp-core": "core",
    "docs-mcp-cli": "cli",
    "docs-mcp-server": "server",
    "docs-mcp-eval": "eval",
}
COMMAND_TIMEOUT = 120.0


def _load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_scripts_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bump_version = _load_script("bump_version")
venv_from_lock = _load_script("venv_from_lock")


def _uv() -> str:
    uv = shutil.which("uv")
    assert uv is not None, "uv must be on PATH to build the distributions"
    return uv


def run(args: list[str], *, cwd: Path = REPO_ROOT, env: dict[str, str] | None = None) -> str:
    """Run a command to completion (bounded); fail with its output when it does not exit 0."""
    done = subprocess.run(
        args,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def pyproject(dist: str, root: Path = REPO_ROOT) -> dict[str, Any]:
    return tomllib.loads((root / "packages" / DISTRIBUTIONS[dist] / "pyproject.toml").read_text("utf-8"))[
        "project"
    ]


def import_name(dist: str) -> str:
    return dist.replace("-", "_")


@dataclass(frozen=True)
class Built:
    """The wheel and sdist of one distribution."""

    wheel: Path
    sdist: Path

    def wheel_names(self) -> list[str]:
        with zipfile.ZipFile(self.wheel) as archive:
            return archive.namelist()

    def wheel_text(self, suffix: str) -> str:
        with zipfile.ZipFile(self.wheel) as archive:
            (name,) = [n for n in archive.namelist() if n.endswith(suffix) and ".dist-info/" in n]
            return archive.read(name).decode("utf-8")

    def wheel_metadata(self) -> Message:
        return Parser().parsestr(self.wheel_text(".dist-info/METADATA"))

    def sdist_names(self) -> list[str]:
        with tarfile.open(self.sdist) as archive:
            return archive.getnames()

    def sdist_metadata(self) -> Message:
        with tarfile.open(self.sdist) as archive:
            (member,) = [
                m for m in archive.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
            ]
            handle = archive.extractfile(member)
            assert handle is not None
            return Parser().parsestr(handle.read().decode("utf-8"))


def build_all(out_dir: Path, root: Path = REPO_ROOT) -> dict[str, Built]:
    """``uv build --package X`` for each distribution: an sdist, then a wheel built from that sdist."""
    out_dir.mkdir(parents=True, exist_ok=True)
    built: dict[str, Built] = {}
    for dist in DISTRIBUTIONS:
        run([_uv(), "build", "--package", dist, "--out-dir", str(out_dir), "--offline"], cwd=root)
        version = pyproject(dist, root)["version"]
        stem = f"{import_name(dist)}-{version}"
        wheel, sdist = out_dir / f"{stem}-py3-none-any.whl", out_dir / f"{stem}.tar.gz"
        assert wheel.is_file() and sdist.is_file(), f"uv build --package {dist} did not write {stem}.*"
        built[dist] = Built(wheel=wheel, sdist=sdist)
    return built


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    return build_all(tmp_path_factory.mktemp("dist"))


def _requirements(values: list[str]) -> set[str]:
    return {str(Requirement(value)) for value in values}


# --- one version ------------------------------------------------------------------------------------


def test_the_four_distributions_and_their_pins_share_one_version() -> None:
    places = bump_version.places(REPO_ROOT)
    assert bump_version.problems(REPO_ROOT) == []
    assert {place.pyproject.parent.name for place in places if place.what == "version"} == set(
        DISTRIBUTIONS.values()
    )
    # The cli and the server pin the exact core they were released with.
    pins = {(place.pyproject.parent.name, place.what) for place in places if place.what != "version"}
    assert {("cli", "pin on docs-mcp-core"), ("server", "pin on docs-mcp-core")} <= pins


def test_each_package_reports_the_installed_distribution_version() -> None:
    version = bump_version.current_version(REPO_ROOT)
    for dist in DISTRIBUTIONS:
        module = importlib.import_module(import_name(dist))
        assert module.__version__ == version, dist


def test_no_source_file_spells_out_the_version() -> None:
    """``__version__`` comes from the installed metadata, never from a literal in the package."""
    literal = f'"{bump_version.current_version(REPO_ROOT)}"'
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{number}"
        for package in DISTRIBUTIONS.values()
        for path in sorted((REPO_ROOT / "packages" / package / "src").rglob("__init__.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if "__version__" in line and literal in line
    ]
    assert offenders == []


def test_bump_check_reports_every_place_that_disagrees(tmp_path: Path) -> None:
    root = _copy_workspace(tmp_path)
    server = root / "packages" / "server" / "pyproject.toml"
    server.write_text(
        server.read_text("utf-8").replace('"docs-mcp-core==', '"docs-mcp-core==7.7.7+'), "utf-8"
    )
    issues = bump_version.problems(root)
    assert any("server/pyproject.toml: pin on docs-mcp-core" in issue for issue in issues), issues
    assert "disagree" in issues[0]
    assert bump_version.main(["--check", "--root", str(root)]) == 1


def test_bump_rejects_invalid_versions_and_loose_pins(tmp_path: Path) -> None:
    root = _copy_workspace(tmp_path)
    with pytest.raises(bump_version.VersionError, match="not a PEP 440 version"):
        bump_version.bump("v1.2", root)
    cli = root / "packages" / "cli" / "pyproject.toml"
    cli.write_text(cli.read_text("utf-8").replace('"docs-mcp-core==', '"docs-mcp-core>='), "utf-8")
    with pytest.raises(bump_version.VersionError, match="must be an exact pin"):
        bump_version.bump("1.2.3", root)


def _copy_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    shutil.copy2(REPO_ROOT / "pyproject.toml", root)
    shutil.copy2(REPO_ROOT / "uv.lock", root)
    artefacts = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "dist", "*.egg-info")

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(artefacts(folder, names))
        if Path(folder).parent == REPO_ROOT / "packages":  # a package's build output, not a package
            skipped.update(n for n in names if n == "build")
        return skipped

    shutil.copytree(REPO_ROOT / "packages", root / "packages", ignore=ignore)
    return root


# --- metadata ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
@pytest.mark.integration
def test_wheel_and_sdist_metadata_match_the_pyproject(dists: dict[str, Built], dist: str) -> None:
    project = pyproject(dist)
    for metadata in (dists[dist].wheel_metadata(), dists[dist].sdist_metadata()):
        assert metadata["Name"] == dist
        assert metadata["Version"] == project["version"] == bump_version.current_version(REPO_ROOT)
        assert metadata["Summary"] == project["description"]
        assert metadata["License-Expression"] == "AGPL-3.0-only"
        assert metadata["Requires-Python"] == ">=3.11"
        classifiers = metadata.get_all("Classifier") or []
        assert classifiers == project["classifiers"]
        assert "Programming Language :: Python :: 3" in classifiers
        assert "Typing :: Typed" in classifiers
        extras = [
            f'{requirement}; extra == "{extra}"'
            for extra, group in project.get("optional-dependencies", {}).items()
            for requirement in group
        ]
        assert _requirements(metadata.get_all("Requires-Dist") or []) == _requirements(
            [*project.get("dependencies", []), *extras]
        )
        assert metadata["Description-Content-Type"] == "text/markdown"
        description = metadata.get_payload()
        assert isinstance(description, str)
        assert description.strip().startswith(f"# {dist}"), "the README is the long description"


@pytest.mark.slow
@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
@pytest.mark.integration
def test_wheel_entry_points_are_the_pyproject_scripts(dists: dict[str, Built], dist: str) -> None:
    scripts: dict[str, str] = dict(pyproject(dist).get("scripts", {}))
    names = dists[dist].wheel_names()
    if not scripts:
        assert not any(name.endswith(".dist-info/entry_points.txt") for name in names)
        return
    parser = configparser.ConfigParser()
    parser.read_string(dists[dist].wheel_text(".dist-info/entry_points.txt"))
    assert dict(parser["console_scripts"]) == scripts
    for target in scripts.values():  # each entry point names a module shipped in the wheel
        module = target.split(":", 1)[0]
        assert module.replace(".", "/") + ".py" in names, target


EXPECTED_SCRIPTS = {
    "docs-mcp-core": set(),
    "docs-mcp-cli": {"docs-mcp"},
    "docs-mcp-server": {"docs-mcp-server"},
    "docs-mcp-eval": {"docs-mcp-eval"},
}


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
def test_each_distribution_declares_its_command(dist: str) -> None:
    assert set(pyproject(dist).get("scripts", {})) == EXPECTED_SCRIPTS[dist]


@pytest.mark.slow
@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
@pytest.mark.integration
def test_wheel_ships_every_module_and_nothing_else(dists: dict[str, Built], dist: str) -> None:
    package = import_name(dist)
    source = REPO_ROOT / "packages" / DISTRIBUTIONS[dist] / "src" / package
    expected = {
        f"{package}/{path.relative_to(source).as_posix()}"
        for path in source.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    names = dists[dist].wheel_names()
    shipped = {name for name in names if not name.split("/", 1)[0].endswith(".dist-info")}
    assert shipped == expected
    assert f"{package}/py.typed" in shipped


@pytest.mark.slow
@pytest.mark.integration
def test_core_wheel_ships_the_offline_token_encoding(dists: dict[str, Built]) -> None:
    from docs_mcp_core.tokens import ENCODING_SHA256, ENCODINGS

    with zipfile.ZipFile(dists["docs-mcp-core"].wheel) as archive:
        encoding = archive.getinfo("docs_mcp_core/data/cl100k_base.tiktoken")
        assert encoding.file_size > 1_000_000
        assert "docs_mcp_core/data/NOTICE" in archive.namelist()
        data = archive.read(encoding)
        budget_table = lzma.decompress(archive.read("docs_mcp_core/data/o200k_base.tiktoken.xz"))
    assert hashlib.sha256(data).hexdigest() == ENCODING_SHA256  # the genuine table, as tests/core checks
    assert hashlib.sha256(budget_table).hexdigest() == ENCODINGS["o200k_base"].sha256


@pytest.mark.slow
@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
@pytest.mark.integration
def test_sdist_holds_the_sources_and_no_build_debris(dists: dict[str, Built], dist: str) -> None:
    version = pyproject(dist)["version"]
    top = f"{import_name(dist)}-{version}"
    names = dists[dist].sdist_names()
    for required in ("pyproject.toml", "README.md", "PKG-INFO", f"src/{import_name(dist)}/__init__.py"):
        assert f"{top}/{required}" in names, required
    debris = [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "/.venv" in n or "/tests/" in n]
    assert debris == []


# --- installing -------------------------------------------------------------------------------------


def _venv_env(venv: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["LANCEDB_LOG"] = "error"
    return env


def _installed(venv: Path) -> set[str]:
    listing = run([_uv(), "pip", "list", "--python", str(venv / "bin" / "python"), "--format", "freeze"])
    return {line.split("==", 1)[0].lower() for line in listing.splitlines() if "==" in line}


_IMPORT_EVERY_MODULE = """
import importlib, pkgutil, sys
for top in sys.argv[1:]:
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    print(top, package.__version__)
"""


@pytest.fixture(scope="module")
def server_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("server-venv")
    venv = base / "venv"
    venv_from_lock.install(venv, base / "wheels", ["docs-mcp-core", "docs-mcp-server"], offline=True)
    yield venv
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.integration
def test_server_wheel_runs_with_only_the_core_wheel(server_venv: Path) -> None:
    installed = _installed(server_venv)
    assert {"docs-mcp-core", "docs-mcp-server"} <= installed
    assert not installed & {"docs-mcp-cli", "docs-mcp-eval", "typer", "pytest"}
    env = _venv_env(server_venv)
    help_text = run([str(server_venv / "bin" / "docs-mcp-server"), "--help"], cwd=server_venv, env=env)
    assert "--index-dir" in help_text and "--transport" in help_text
    # Every module of both packages imports with nothing but their declared dependencies.
    imported = run(
        [str(server_venv / "bin" / "python"), "-c", _IMPORT_EVERY_MODULE, "docs_mcp_core", "docs_mcp_server"],
        cwd=server_venv,
        env=env,
    )
    version = bump_version.current_version(REPO_ROOT)
    assert f"docs_mcp_core {version}" in imported and f"docs_mcp_server {version}" in imported


@pytest.mark.slow
@pytest.mark.integration
def test_core_wheel_needs_neither_mcp_nor_typer(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv_from_lock.install(venv, tmp_path / "wheels", ["docs-mcp-core"], offline=True)
    installed = _installed(venv)
    assert "docs-mcp-core" in installed
    assert not installed & {"mcp", "typer", "docs-mcp-server", "docs-mcp-cli"}
    imported = run(
        [str(venv / "bin" / "python"), "-c", _IMPORT_EVERY_MODULE, "docs_mcp_core"],
        cwd=venv,
        env=_venv_env(venv),
    )
    assert imported.startswith("docs_mcp_core ")


BUMPED = "9.8.7rc1"


@dataclass(frozen=True)
class Bumped:
    """A copy of the workspace set to another version with the bump script, built and installed."""

    root: Path
    built: dict[str, Built]
    venv: Path

    def command(self, *args: str) -> str:
        return run(
            [str(self.venv / "bin" / args[0]), *args[1:]], cwd=self.root, env=_venv_env(self.venv)
        ).strip()


@pytest.fixture(scope="module")
def bumped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bumped]:
    base = tmp_path_factory.mktemp("bumped")
    root = _copy_workspace(base)
    assert bump_version.main(["--root", str(root), "--no-lock", BUMPED]) == 0
    built = build_all(base / "dist", root)
    # Third-party dependencies as locked (by the real workspace), then the bumped wheels.
    venv = base / "venv"
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)}
    env.pop("VIRTUAL_ENV", None)
    selected = [arg for dist in DISTRIBUTIONS for arg in ("--package", dist)]
    sync = [_uv(), "sync", "--frozen", "--no-dev", "--no-install-workspace", "--offline"]
    run(
        [*sync, "--python", sys.executable, *selected],
        env=env,
    )
    python = str(venv / "bin" / "python")
    run([_uv(), "pip", "install", "--python", python, "--no-deps", *(str(b.wheel) for b in built.values())])
    run([_uv(), "pip", "check", "--python", python])
    yield Bumped(root=root, built=built, venv=venv)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.integration
def test_a_bumped_version_reaches_every_artefact(bumped: Bumped) -> None:
    assert bump_version.problems(bumped.root, expected=BUMPED) == []
    for dist, artefacts in bumped.built.items():
        for metadata in (artefacts.wheel_metadata(), artefacts.sdist_metadata()):
            assert metadata["Version"] == BUMPED, dist
            pins = [r for r in metadata.get_all("Requires-Dist") or [] if r.startswith("docs-mcp-")]
            assert all(pin.split(";")[0].strip().endswith(f"=={BUMPED}") for pin in pins), pins
    imported = bumped.command("python", "-c", _IMPORT_EVERY_MODULE, *map(import_name, DISTRIBUTIONS))
    for dist in DISTRIBUTIONS:
        assert f"{import_name(dist)} {BUMPED}" in imported


@pytest.mark.slow
@pytest.mark.integration
def test_a_bumped_version_is_what_the_commands_print(bumped: Bumped) -> None:
    assert bumped.command("docs-mcp", "--version") == f"docs-mcp {BUMPED}"
    assert bumped.command("docs-mcp-eval", "--version") == f"docs-mcp-eval {BUMPED}"


@pytest.mark.slow
@pytest.mark.integration
def test_a_bumped_version_is_what_the_server_reports(bumped: Bumped) -> None:
    """``--about``, and with it /healthz and the DOCS-MCP header, follow the distribution version."""
    assert bumped.command("docs-mcp-server", "--about") == f"docs-mcp-server {BUMPED}"
