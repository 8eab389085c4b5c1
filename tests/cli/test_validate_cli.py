"""``docs-mcp validate`` through typer: output lines, JSON, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from docs_mcp_cli.validate_cmd import validate

runner = CliRunner()
WIDE = {"COLUMNS": "400"}  # keep typer's error box from wrapping long tmp paths


def make_app() -> typer.Typer:
    app = typer.Typer()
    app.command("validate")(validate)
    app.command("noop")(lambda: None)  # keep "validate" a sub-command, as in the real app
    return app


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_clean_corpus_exits_0_with_summary(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{"version": "1"}')
    write(tmp_path, "a.md", "# A\n\n## B\n\ntext\n")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout == "validated 1 markdown file, 0 errors, 0 warnings\n"


def test_warnings_only_exit_0(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "a.md: warning: no manifest found; using default strategy 'h2'",
        "validated 1 markdown file, 0 errors, 1 warning",
    ]


def test_errors_exit_1_with_one_line_per_problem(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h2"}}')
    write(tmp_path, "guides/a.md", '# A\n\n<!-- mcp_chunking_hint: {"chunk_by": "h7"} -->\n')
    write(tmp_path, "guides/b.md", "---\nmcp_strategy: [\n---\n# B\n")
    (tmp_path / "c.md").write_bytes(b"\xfe\xff")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines[:-1]] == ["c.md:1", "guides/a.md:3", "guides/b.md:2"]
    assert all(": error: " in line for line in lines[:-1])
    assert lines[-1] == "validated 3 markdown files, 3 errors, 0 warnings"
    assert "Traceback" not in result.output


def test_json_format(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{"version": "1", "extra": true}')
    write(tmp_path, "a.md", "<!-- mcp_nope -->\n")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path), "--format", "json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["files"] == 1 and data["errors"] == 1 and data["warnings"] == 1
    assert data["findings"] == [
        {
            "path": ".docs-mcp.json",
            "line": 1,
            "severity": "warning",
            "message": "unknown manifest key 'extra' is ignored",
        },
        {
            "path": "a.md",
            "line": 1,
            "severity": "error",
            "message": "unknown directive 'mcp_nope' in an HTML comment; the only comment directive is "
            "mcp_chunking_hint",
        },
    ]


def test_empty_docs_dir_fails(tmp_path: Path) -> None:
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f".: error: no markdown files found under {tmp_path}",
        "validated 0 markdown files, 1 error, 0 warnings",
    ]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    app = make_app()
    missing = runner.invoke(app, ["validate"])
    assert missing.exit_code == 2 and "Missing option '--docs-dir'" in missing.output
    absent = runner.invoke(app, ["validate", "--docs-dir", str(tmp_path / "absent")], env=WIDE)
    assert absent.exit_code == 2 and "does not exist" in absent.output
    write(tmp_path, "file.md", "x")
    not_dir = runner.invoke(app, ["validate", "--docs-dir", str(tmp_path / "file.md")], env=WIDE)
    assert not_dir.exit_code == 2 and "is a file" in not_dir.output
    bad_format = runner.invoke(app, ["validate", "--docs-dir", str(tmp_path), "--format", "xml"], env=WIDE)
    assert bad_format.exit_code == 2 and "--format" in bad_format.output
    assert "'xml' is not one of 'text', 'json'" in bad_format.output
    assert "Value error" not in bad_format.output  # a validation library's wording, not the command's


def test_examples_docs_validate_clean(examples_docs: Path) -> None:
    if not any(examples_docs.rglob("*.md")):
        return
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(examples_docs)])
    assert result.exit_code == 0, result.output
    assert " 0 errors" in result.stdout.splitlines()[-1]


def test_a_link_out_of_the_docs_folder_is_a_warning_unless_followed(tmp_path: Path) -> None:
    write(tmp_path, "elsewhere/creds.md", "# Creds\n\nsecret\n")
    docs = tmp_path / "docs"
    write(docs, ".docs-mcp.json", '{"version": "1"}')
    write(docs, "a.md", "# A\n")
    (docs / "creds.md").symlink_to(tmp_path / "elsewhere" / "creds.md")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(docs)], env=WIDE)
    assert result.exit_code == 0
    target = (tmp_path / "elsewhere" / "creds.md").resolve()
    assert result.stdout.splitlines() == [
        f"creds.md: warning: symbolic link to a file outside the docs folder ({target}); skipped. Move the file "
        "into the docs folder, or pass --follow-external-symlinks to index files that links lead to",
        "validated 1 markdown file, 0 errors, 1 warning",
    ]
    followed = runner.invoke(
        make_app(), ["validate", "--docs-dir", str(docs), "--follow-external-symlinks"], env=WIDE
    )
    assert followed.exit_code == 0
    assert followed.stdout == "validated 2 markdown files, 0 errors, 0 warnings\n"


def test_markdown_files_not_named_md_are_named_once_as_skipped(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{"version": "1"}')
    write(tmp_path, "a.md", "# A\n")
    write(tmp_path, "README.MD", "# Readme\n")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "README.MD: warning: skipped: its name does not end in .md (only *.md, in lower case, is indexed, as "
        "in the original); rename it to .md to index it",
        "validated 1 markdown file, 0 errors, 1 warning",
    ]
    for n in range(3):
        write(tmp_path, f"guides/page-{n}.markdown", "# Page\n")
    result = runner.invoke(make_app(), ["validate", "--docs-dir", str(tmp_path)])
    assert result.stdout.splitlines() == [
        "guides/page-0.markdown: warning: skipped, with 3 more markdown files whose names do not end in .md "
        "(only *.md, in lower case, is indexed, as in the original); rename them to .md to index them",
        "validated 1 markdown file, 0 errors, 1 warning",
    ]
