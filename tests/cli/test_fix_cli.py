"""``docs-mcp fix`` through typer: diffs, --dry-run, writes, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from docs_mcp_cli.fix_cmd import fix
from tests.support.programs import docs_mcp_command, run_in_private_mount

runner = CliRunner()
WIDE = {"COLUMNS": "400"}  # keep typer's error box from wrapping long tmp paths


def make_app() -> typer.Typer:
    app = typer.Typer()
    app.command("fix")(fix)
    app.command("noop")(lambda: None)
    return app


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def corpus(root: Path) -> None:
    write(root, "docs/a.md", "# A\n\n## One\n\nx\n\n## Two\n\ny\n")
    write(root, "docs/b.md", "# B\n\n## One\n\nx\n\n## Two\n\ny\n")
    write(root, "docs/c.md", "no headings at all\n")


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    corpus(tmp_path)
    result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path), "--dry-run"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "# docs/c.md: headings suggest chunk_by file\n--- /dev/null\n+++ b/.docs-mcp.json\n" in out
    assert '+      "pattern": "docs/c.md",\n' in out
    assert out.endswith("dry run: 1 manifest(s) would change; nothing written\n")
    assert not (tmp_path / ".docs-mcp.json").exists()


def test_fix_writes_then_has_nothing_to_do(tmp_path: Path) -> None:
    corpus(tmp_path)
    app = make_app()
    first = runner.invoke(app, ["fix", "--docs-dir", str(tmp_path)])
    assert first.exit_code == 0
    assert first.stdout.splitlines()[-1] == "created .docs-mcp.json (default=h2, overrides=1)"
    written = (tmp_path / ".docs-mcp.json").read_text(encoding="utf-8")
    assert json.loads(written) == {
        "version": "1",
        "strategy": {"chunk_by": "h2"},
        "overrides": [{"pattern": "docs/c.md", "strategy": {"chunk_by": "file"}}],
    }
    assert written.endswith("\n")
    again = runner.invoke(app, ["fix", "--docs-dir", str(tmp_path)])
    assert again.exit_code == 0 and again.stdout == "nothing to fix\n"


def test_output_is_deterministic(tmp_path: Path) -> None:
    corpus(tmp_path)
    app = make_app()
    runs = {runner.invoke(app, ["fix", "--docs-dir", str(tmp_path), "--dry-run"]).stdout for _ in range(2)}
    assert len(runs) == 1


def test_unparsable_manifest_exits_1_with_its_location(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{"version": "1",')
    write(tmp_path, "a.md", "# A\n")
    result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: .docs-mcp.json:1: manifest is not valid JSON")
    assert "Traceback" not in result.output
    assert (tmp_path / ".docs-mcp.json").read_text() == '{"version": "1",'


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    app = make_app()
    assert runner.invoke(app, ["fix"]).exit_code == 2
    result = runner.invoke(app, ["fix", "--docs-dir", str(tmp_path / "missing")], env=WIDE)
    assert result.exit_code == 2 and "does not exist" in result.output


def _edited_meanwhile(monkeypatch: pytest.MonkeyPatch, manifest: Path, text: str) -> None:
    """The author saves ``text`` to ``manifest`` after fix read the folder, before it writes."""
    import docs_mcp_cli.fix_cmd as fix_cmd
    from docs_mcp_core.fix import plan_fixes

    def plan_then_edit(docs_dir: Path) -> Any:
        plan = plan_fixes(docs_dir)
        manifest.write_text(text, encoding="utf-8")
        return plan

    monkeypatch.setattr(fix_cmd, "plan_fixes", plan_then_edit)


DRIFTING = "# G\n\n## One\n\nintro\n\n### A\n\n" + "word " * 600 + "\n\n### B\n\n" + "more " * 600 + "\n"


def test_a_manifest_edited_while_fix_runs_is_left_as_the_author_saved_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "docs/g.md", DRIFTING)  # h2 sections over max_chunk_size: fix proposes h3
    write(
        tmp_path,
        "docs/.docs-mcp.json",
        '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 5000}}\n',
    )
    write(tmp_path, "a.md", "no headings at all\n")  # the root manifest fix creates is written
    edited = '{"version": "1", "strategy": {"chunk_by": "h3", "max_chunk_size": 5000}, "x-note": "mine"}\n'
    _edited_meanwhile(monkeypatch, tmp_path / "docs" / ".docs-mcp.json", edited)
    result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)], env=WIDE)
    assert result.exit_code == 1, result.output
    assert (tmp_path / "docs" / ".docs-mcp.json").read_text(encoding="utf-8") == edited
    assert result.stderr == (
        "error: docs/.docs-mcp.json changed while fix was running, so fix left it as it is (nothing of "
        "it is lost); run docs-mcp fix again\n"
    )
    assert "created .docs-mcp.json" in result.stdout and (tmp_path / ".docs-mcp.json").is_file()
    assert not list(tmp_path.rglob(".docs-mcp.*.tmp"))


def test_a_manifest_created_while_fix_runs_is_not_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus(tmp_path)
    mine = '{"version": "1", "strategy": {"chunk_by": "file"}}\n'
    _edited_meanwhile(monkeypatch, tmp_path / ".docs-mcp.json", mine)
    result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)], env=WIDE)
    assert result.exit_code == 1, result.output
    assert (tmp_path / ".docs-mcp.json").read_text(encoding="utf-8") == mine
    assert result.stderr.startswith("error: .docs-mcp.json was created while fix was running")
    assert not list(tmp_path.rglob(".docs-mcp.*.tmp"))


def test_a_read_only_manifest_is_left_as_it_is(tmp_path: Path) -> None:
    write(tmp_path, "docs/g.md", DRIFTING)
    manifest = tmp_path / "docs" / ".docs-mcp.json"
    write(
        tmp_path,
        "docs/.docs-mcp.json",
        '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 5000}}\n',
    )
    before = manifest.read_bytes()
    manifest.chmod(0o444)  # a rename needs only the folder's permission: it replaced the file anyway
    try:
        result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)], env=WIDE)
    finally:
        manifest.chmod(0o644)
    assert result.exit_code == 1, result.output
    assert manifest.read_bytes() == before
    assert result.stderr == (
        "error: docs/.docs-mcp.json is read-only, so fix left it as it is; make it writable (chmod u+w) "
        "and run docs-mcp fix again\n"
    )


@pytest.mark.integration  # runs chattr
def test_a_folder_fix_cannot_write_in_is_named_with_the_manifest(tmp_path: Path) -> None:
    import subprocess

    write(tmp_path, "docs/g.md", DRIFTING)
    write(
        tmp_path,
        "docs/.docs-mcp.json",
        '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 5000}}\n',
    )
    folder = tmp_path / "docs"
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not available here (not root, or a file system without it)")
    try:
        result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)], env=WIDE)
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    assert result.exit_code == 1, result.output
    # it named a random temporary file (.docs-mcp.<hex>.tmp) and not what fix was writing
    assert result.stderr == (
        f"error: cannot write {folder / '.docs-mcp.json'}: Operation not permitted (fix writes a new file "
        "beside it first)\n"
    )


def test_a_manifest_is_created_where_the_file_system_has_no_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    def no_links(source: object, target: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")  # vfat, exFAT, some network shares

    monkeypatch.setattr(os, "link", no_links)
    corpus(tmp_path)
    result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / ".docs-mcp.json").read_text(encoding="utf-8"))["version"] == "1"
    assert not list(tmp_path.rglob(".docs-mcp.*.tmp"))
    (tmp_path / ".docs-mcp.json").unlink()
    mine = '{"version": "1"}\n'
    _edited_meanwhile(monkeypatch, tmp_path / ".docs-mcp.json", mine)  # and never over one made meanwhile
    result = runner.invoke(make_app(), ["fix", "--docs-dir", str(tmp_path)], env=WIDE)
    assert result.exit_code == 1 and (tmp_path / ".docs-mcp.json").read_text(encoding="utf-8") == mine
    assert not list(tmp_path.rglob(".docs-mcp.*.tmp")) and os.path.exists(tmp_path / ".docs-mcp.json")


_FIX_ON_A_FULL_DISK = r"""
set -u
mount -t tmpfs -o size=256k tmpfs "$1" || exit 77
cp -R "$3" "$1/docs"
before=$(cat "$1/docs/docs/.docs-mcp.json")
dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
"$2" fix --docs-dir "$1/docs" >/dev/null 2>"$1/../stderr"
echo "rc=$?"
[ "$before" = "$(cat "$1/docs/docs/.docs-mcp.json")" ] && echo "manifest unchanged"
ls -A "$1/docs" "$1/docs/docs"
"""


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) for a private tmpfs")
@pytest.mark.skipif(len(docs_mcp_command()) != 1, reason="needs the installed docs-mcp script")
def test_a_full_disk_names_the_manifest_fix_could_not_write_and_leaves_every_file_as_it_was(
    tmp_path: Path,
) -> None:
    """A real full disk (a tmpfs in a private mount namespace): writing the new text fails with an
    error that names no file, and fix said ``cannot write None``."""
    source = tmp_path / "source"
    write(source, "docs/g.md", DRIFTING)  # fix rewrites this manifest ...
    write(
        source,
        "docs/.docs-mcp.json",
        '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 5000}}\n',
    )
    write(source, "a.md", "no headings at all\n")  # ... and creates the root one
    (tmp_path / "disk").mkdir()
    done = run_in_private_mount(
        [_FIX_ON_A_FULL_DISK, "sh", str(tmp_path / "disk"), docs_mcp_command()[0], str(source)]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "rc=1",
        "manifest unchanged",
        f"{tmp_path / 'disk' / 'docs'}:",
        "a.md",
        "docs",
        "",
        f"{tmp_path / 'disk' / 'docs' / 'docs'}:",
        ".docs-mcp.json",
        "g.md",
    ]  # no root manifest, no temporary file left
    stderr = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert stderr.splitlines()[-1] == (
        f"error: cannot write {tmp_path / 'disk' / 'docs' / '.docs-mcp.json'}: No space left on device "
        "(the manifest is left as it was)"
    ), stderr
