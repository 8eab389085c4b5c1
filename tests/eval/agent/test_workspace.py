"""The agent's workspace tools: confined to the folder, commands time-limited, fresh folders per run."""

from __future__ import annotations

import os
import select
from pathlib import Path

import pytest

from docs_mcp_eval.agent.runner import WORKSPACE_MARKER, prepare_workspace
from docs_mcp_eval.agent.workspace import Workspace
from docs_mcp_eval.errors import WorkspaceError

pytestmark = pytest.mark.anyio


async def test_write_read_and_list(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    written = await ws.call("write_file", {"path": "src/app.py", "content": "print('hé')\n"})
    assert not written.is_error and written.text == "wrote 13 bytes to src/app.py"
    assert (ws.root / "src" / "app.py").read_text(encoding="utf-8") == "print('hé')\n"
    assert (await ws.call("read_file", {"path": "./src/app.py"})).text == "print('hé')\n"
    absolute = await ws.call("read_file", {"path": str(ws.root / "src" / "app.py")})
    assert absolute.text == "print('hé')\n"
    (ws.root / "node_modules" / "pkg").mkdir(parents=True)
    (ws.root / "node_modules" / "pkg" / "index.js").write_text("x")
    listing = (await ws.call("list_files", {})).text.splitlines()
    assert listing == ["node_modules/", "src/app.py", "(contents of node_modules not listed)"]
    assert ws.recorded_files() == [{"path": "src/app.py", "content": "print('hé')\n", "lang": "python"}]
    folder = await ws.call("read_file", {"path": "src"})
    assert folder.is_error and "is a folder" in folder.text
    missing = await ws.call("read_file", {"path": "nope.txt"})
    assert missing.is_error and "No such file" in missing.text
    bad = await ws.call("write_file", {"path": "x.txt"})
    assert bad.is_error and "missing or invalid 'content'" in bad.text


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../outside.txt", "~/x.txt"])
async def test_paths_outside_the_workspace_are_refused(tmp_path: Path, path: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root)
    for call in (
        ws.call("read_file", {"path": path}),
        ws.call("write_file", {"path": path, "content": "x"}),
        ws.call("list_files", {"path": path}),
    ):
        outcome = await call
        assert outcome.is_error and "outside the workspace" in outcome.text
    assert not (tmp_path / "outside.txt").exists()


async def test_symlinks_out_are_refused_but_linked_sources_are_readable_not_writable(tmp_path: Path) -> None:
    root, shared = tmp_path / "ws", tmp_path / "shared"
    root.mkdir()
    shared.mkdir()
    (shared / "config.json").write_text("{}")
    (tmp_path / "secret.txt").write_text("secret")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    (root / "config.json").symlink_to(shared / "config.json")
    ws = Workspace(root, link_targets=[shared / "config.json"])
    escape = await ws.call("read_file", {"path": "escape"})
    assert escape.is_error and "through a symlink" in escape.text
    assert (await ws.call("read_file", {"path": "config.json"})).text == "{}"
    write = await ws.call("write_file", {"path": "config.json", "content": "changed"})
    assert write.is_error and "read-only" in write.text
    assert (shared / "config.json").read_text() == "{}"


@pytest.mark.integration
async def test_commands_run_in_the_workspace_without_provider_keys(tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-secret", "VISIBLE": "yes"}
    ws = Workspace(tmp_path, env=env, command_timeout_s=5)
    outcome = await ws.call("run_command", {"command": 'pwd; echo "$VISIBLE-${OPENAI_API_KEY:-none}"'})
    assert not outcome.is_error
    assert outcome.text.splitlines() == ["exit code 0", str(tmp_path.resolve()), "yes-none"]
    failed = await ws.call("run_command", {"command": "echo broken >&2; exit 2"})
    assert failed.is_error and failed.text.splitlines() == ["exit code 2", "broken"]


def _exits_within(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` is gone (or a zombie) within ``timeout`` s, waiting on a pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


@pytest.mark.integration
async def test_a_hanging_command_is_stopped_with_its_children(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, command_timeout_s=30)
    outcome = await ws.call("run_command", {"command": "sleep 60 & echo $!; wait", "timeout_seconds": 0.5})
    assert outcome.is_error
    lines = outcome.text.splitlines()
    assert lines[0] == "timed out after 0.5 s (stopped)"
    child = int(lines[1])
    assert _exits_within(child, 5.0)  # the background child was killed with the command's process group
    capped = await ws.call("run_command", {"command": "echo ok", "timeout_seconds": 999})
    assert capped.text.startswith("exit code 0")


def test_workspaces_are_fresh_and_foreign_folders_are_left_alone(tmp_path: Path) -> None:
    base = tmp_path / "work"
    first = prepare_workspace(base, "ts/init")
    assert first == (base / "ts-init").resolve() and first.is_dir()
    assert (base / WORKSPACE_MARKER).is_file()
    (first / "old.txt").write_text("from an earlier run")
    again = prepare_workspace(base, "ts/init")
    assert again == first and list(again.iterdir()) == []
    foreign = tmp_path / "mine"
    (foreign / "ts-init").mkdir(parents=True)
    (foreign / "ts-init" / "keep.txt").write_text("mine")
    with pytest.raises(WorkspaceError, match="was not made by agent-eval"):
        prepare_workspace(foreign, "ts-init")
    assert (foreign / "ts-init" / "keep.txt").read_text() == "mine"
    temporary = prepare_workspace(None, "x")
    try:
        assert temporary.is_dir() and temporary.name.startswith("agent-eval-")
    finally:
        temporary.rmdir()
