"""Set, or check, the one version shared by the four docs-mcp distributions.

docs-mcp-core, docs-mcp-cli, docs-mcp-server and docs-mcp-eval are released together under one
version. It is written in each package's ``pyproject.toml`` (``[project] version``) and in the exact
pins between them (``docs-mcp-core==X`` in the cli and the server); nothing else spells it out:
each package's ``__version__`` reads the installed distribution's metadata. This script rewrites all
of those places at once and refreshes ``uv.lock``, or checks that they agree::

    uv run scripts/bump_version.py 0.2.0          # rewrite the pyprojects, then `uv lock`
    uv run scripts/bump_version.py --check        # exit 1 (and say where) if they disagree
    uv run scripts/bump_version.py --check 0.2.0  # ... or if the version is not 0.2.0 (release tags)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = ("core", "cli", "server", "eval")
DISTRIBUTION_PREFIX = "docs-mcp-"
# A public PEP 440 version in canonical form: 1.2.3, 1.2.3rc1, 1.2.3.post1, 1.2.3.dev4 ...
VERSION_RE = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?$")
_PIN_RE = re.compile(r'"(?P<name>docs-mcp-[a-z]+)\s*==\s*(?P<version>[^";\s]+)')
_PROJECT_VERSION_RE = re.compile(r'(?m)^(version\s*=\s*")([^"]*)(")')


class VersionError(ValueError):
    """The requested version is invalid, or a pyproject cannot be read or rewritten."""


@dataclass(frozen=True)
class Place:
    """One spot where the shared version is written."""

    pyproject: Path
    what: str  # "version" or "pin on docs-mcp-core"
    version: str


def pyprojects(root: Path = REPO_ROOT) -> list[Path]:
    """The four packages' pyproject.toml files (all must exist)."""
    paths = [root / "packages" / name / "pyproject.toml" for name in PACKAGE_DIRS]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        raise VersionError(f"pyproject.toml not found: {', '.join(missing)}")
    return paths


def places(root: Path = REPO_ROOT) -> list[Place]:
    """Every project version and every exact pin between the workspace's distributions."""
    found: list[Place] = []
    for path in pyprojects(root):
        try:
            project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        except (tomllib.TOMLDecodeError, KeyError) as error:
            raise VersionError(f"{path}: cannot read [project]: {error}") from error
        if "version" not in project:
            raise VersionError(
                f"{path}: [project] has no static version (dynamic versions are not supported)"
            )
        found.append(Place(path, "version", str(project["version"])))
        optional = [r for group in project.get("optional-dependencies", {}).values() for r in group]
        for requirement in [*project.get("dependencies", []), *optional]:
            name = re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]
            if name.startswith(DISTRIBUTION_PREFIX):
                pin = re.fullmatch(rf"{re.escape(name)}\s*==\s*([^;\s]+)(\s*;.*)?", requirement.strip())
                if pin is None:
                    raise VersionError(
                        f"{path}: dependency {requirement!r} must be an exact pin ({name}==<version>): "
                        "the docs-mcp distributions are released together"
                    )
                found.append(Place(path, f"pin on {name}", pin.group(1)))
    return found


def problems(root: Path = REPO_ROOT, expected: str | None = None) -> list[str]:
    """Human-readable disagreements; empty when every place holds the same (expected) version."""
    found = places(root)
    versions = sorted({place.version for place in found})
    wanted = expected if expected is not None else found[0].version
    issues = [
        f"{place.pyproject.relative_to(root)}: {place.what} is {place.version}, expected {wanted}"
        for place in found
        if place.version != wanted
    ]
    if expected is None and len(versions) > 1:
        issues.insert(0, f"the distributions disagree on their version: {', '.join(versions)}")
    return issues


def current_version(root: Path = REPO_ROOT) -> str:
    """The shared version (raises :class:`VersionError` when the places disagree)."""
    issues = problems(root)
    if issues:
        raise VersionError("\n".join(issues))
    return places(root)[0].version


def _rewrite(text: str, new: str, path: Path) -> str:
    start = re.search(r"(?m)^\[project\]\s*$", text)
    if start is None:
        raise VersionError(f"{path}: no [project] table")
    end = re.search(r"(?m)^\[", text[start.end() :])
    stop = start.end() + end.start() if end else len(text)
    section = text[start.end() : stop]
    section, count = _PROJECT_VERSION_RE.subn(lambda m: f"{m.group(1)}{new}{m.group(3)}", section, count=1)
    if count != 1:
        raise VersionError(f'{path}: no `version = "..."` line in [project]')
    section = _PIN_RE.sub(lambda m: f'"{m.group("name")}=={new}', section)
    text = text[: start.end()] + section + text[stop:]
    # pins in [project.optional-dependencies] are released together too
    extras = re.search(r"(?m)^\[project\.optional-dependencies\]\s*$", text)
    if extras is not None:
        end = re.search(r"(?m)^\[", text[extras.end() :])
        stop = extras.end() + end.start() if end else len(text)
        block = _PIN_RE.sub(lambda m: f'"{m.group("name")}=={new}', text[extras.end() : stop])
        text = text[: extras.end()] + block + text[stop:]
    return text


def bump(new: str, root: Path = REPO_ROOT) -> list[Path]:
    """Write ``new`` into every place; return the files changed (uv.lock is not touched here)."""
    if not VERSION_RE.match(new):
        raise VersionError(f"{new!r} is not a PEP 440 version like 1.2.3, 1.2.3rc1 or 1.2.3.post1")
    places(root)  # refuse files this script would not understand before changing any of them
    changed: list[Path] = []
    for path in pyprojects(root):
        text = path.read_text(encoding="utf-8")
        updated = _rewrite(text, new, path)
        if updated != text:
            path.write_text(updated, encoding="utf-8")
            changed.append(path)
    issues = problems(root, expected=new)
    if issues:
        raise VersionError("the rewrite left places behind:\n" + "\n".join(issues))
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("version", nargs="?", help="new version (with --check: the version expected)")
    parser.add_argument("--check", action="store_true", help="only check that all places agree")
    parser.add_argument("--no-lock", action="store_true", help="do not run `uv lock` after rewriting")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    try:
        if args.check:
            issues = problems(root, expected=args.version)
            for issue in issues:
                print(f"bump_version: {issue}", file=sys.stderr)
            if not issues:
                print(places(root)[0].version)
            return 1 if issues else 0
        if not args.version:
            parser.error("give the new version, or --check")
        old = current_version(root)
        changed = bump(args.version, root)
    except VersionError as error:
        print(f"bump_version: error: {error}", file=sys.stderr)
        return 1
    for path in changed:
        print(f"{path.relative_to(root)}: {old} -> {args.version}")
    if not args.no_lock and changed:
        done = subprocess.run(["uv", "lock"], cwd=root)
        if done.returncode != 0:
            print("bump_version: error: `uv lock` failed; run it by hand", file=sys.stderr)
            return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
