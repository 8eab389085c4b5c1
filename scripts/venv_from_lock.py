"""Install docs-mcp distributions into a fresh virtual environment the way a user would get them.

Third-party dependencies come from ``uv.lock`` (exact versions and hashes, nothing resolved anew);
the workspace's own distributions are built as wheels with ``uv build`` and installed from those
wheels, so what lands in the environment is what would be published, not an editable checkout.
``uv pip check`` then proves that the named distributions are complete: forgetting
``docs-mcp-core`` next to ``docs-mcp-server``, for example, fails here rather than at run time.

The Dockerfile runs this script for both of its stages (the indexer and the server runtime), and
``tests/test_docker_recipe.py`` runs it the same way, so the test exercises the image's recipe::

    python scripts/venv_from_lock.py --venv /opt/docs-mcp --wheels /tmp/wheels \\
        docs-mcp-core docs-mcp-server

Pass ``--offline`` to forbid network access (everything must already be in uv's cache).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKSPACE_PACKAGES = ("docs-mcp-core", "docs-mcp-cli", "docs-mcp-server", "docs-mcp-eval")


class RecipeError(RuntimeError):
    """A step of the install failed; the message names the command and what it printed."""


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        raise RecipeError("uv is not on PATH: install it first (pip install uv)")
    return uv


def _run(args: Sequence[str], *, env: dict[str, str] | None = None) -> str:
    """Run a command in the repository root; return what it printed (stdout, then stderr)."""
    print("+ " + " ".join(args), file=sys.stderr, flush=True)
    done = subprocess.run(list(args), cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise RecipeError(f"command failed with exit code {done.returncode}: {' '.join(args)}\n{output}")
    return output


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def install(
    venv: Path,
    wheels: Path,
    packages: Sequence[str],
    *,
    python: str = sys.executable,
    offline: bool = False,
) -> list[Path]:
    """Create ``venv`` holding ``packages`` (workspace distribution names); return the wheels used.

    ``venv`` must not exist yet. Wheels are written to ``wheels`` (created if needed).
    """
    unknown = [name for name in packages if name not in WORKSPACE_PACKAGES]
    if unknown or not packages:
        raise RecipeError(
            f"expected workspace distributions ({', '.join(WORKSPACE_PACKAGES)}), got {list(packages) or 'none'}"
        )
    if venv.exists():
        raise RecipeError(f"{venv} already exists: choose a new directory for the environment")
    uv = _uv()
    network = ["--offline"] if offline else []
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv), "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)

    # 1. Third-party dependencies of the named distributions, exactly as locked.
    selected = [arg for name in packages for arg in ("--package", name)]
    _run(
        [
            uv,
            "sync",
            "--frozen",
            "--no-dev",
            "--no-install-workspace",
            "--python",
            python,
            *network,
            *selected,
        ],
        env=env,
    )
    # 2. The distributions themselves, as wheels.
    wheels.mkdir(parents=True, exist_ok=True)
    built: list[Path] = []
    for name in packages:
        output = _run([uv, "build", "--package", name, "--wheel", "--out-dir", str(wheels), *network])
        # uv reports each artefact as "Successfully built <path>".
        reported = [
            Path(line.split("Successfully built ", 1)[1].strip())
            for line in output.splitlines()
            if "Successfully built " in line and line.rstrip().endswith(".whl")
        ]
        if len(reported) != 1 or not reported[0].is_file():
            raise RecipeError(f"uv build --package {name} did not report one wheel:\n{output}")
        built.append(reported[0])
    venv_python = str(_venv_python(venv))
    _run([uv, "pip", "install", "--python", venv_python, "--no-deps", *network, *map(str, built)])
    # 3. Nothing missing, nothing conflicting.
    _run([uv, "pip", "check", "--python", venv_python])
    return built


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--venv", type=Path, required=True, help="new virtual environment to create")
    parser.add_argument("--wheels", type=Path, required=True, help="where to write the built wheels")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the environment")
    parser.add_argument("--offline", action="store_true", help="use only uv's cache (no network)")
    parser.add_argument("packages", nargs="+", metavar="DISTRIBUTION", help=", ".join(WORKSPACE_PACKAGES))
    args = parser.parse_args(argv)
    try:
        built = install(
            args.venv.absolute(),
            args.wheels.absolute(),
            args.packages,
            python=args.python,
            offline=args.offline,
        )
    except RecipeError as error:
        print(f"venv_from_lock: error: {error}", file=sys.stderr)
        return 1
    for wheel in built:
        print(f"installed {wheel.name} into {args.venv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
