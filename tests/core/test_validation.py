"""validate_corpus: every check, with paths, lines and severities."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, build_index
from docs_mcp_core.chunking import Strategy
from docs_mcp_core.corpus_pool import ChunkedFile
from docs_mcp_core.corpus_walk import walk_corpus
from docs_mcp_core.errors import DocsDirError
from docs_mcp_core.file_checks import directive_findings
from docs_mcp_core.findings import Finding
from docs_mcp_core.manifest import find_hint
from docs_mcp_core.metadata import MAX_TAXONOMY_KEYS, MAX_VALUES_PER_KEY
from docs_mcp_core.prompts import discover_prompt_templates
from docs_mcp_core.validation import (
    ValidationReport,
    _check_metadata_limits,  # pyright: ignore[reportPrivateUsage]
    validate_corpus,
)
from tests.support.cpu_time import best_cpu_seconds
from tests.support.hostile_json import HUGE_NUMBER, TOO_DEEP

ROOT_MANIFEST = json.dumps(
    {"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"language": "python"}}
)


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def triples(report: ValidationReport) -> list[tuple[str, int | None, str]]:
    return [(f.path, f.line, f.severity) for f in report.findings]


def only(report: ValidationReport, path: str) -> list[Finding]:
    return [f for f in report.findings if f.path == path]


def test_clean_corpus(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "a.md", "# A\n\n## One\n\ntext\n\n## Two\n\nmore\n")
    write(tmp_path, "sub/b.md", "---\ntitle: B\nmcp_metadata:\n  scope: guide\n---\n# B\n\nbody\n")
    report = validate_corpus(tmp_path)
    assert report.findings == []
    assert (report.files, report.errors, report.warnings, report.ok) == (2, 0, 0, True)
    assert report.chunks == 4
    assert report.summary() == "validated 2 markdown files, 0 errors, 0 warnings"
    assert report.to_dict() == {"files": 2, "errors": 0, "warnings": 0, "findings": []}


def test_keep_chunks_hands_the_chunks_to_the_caller(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "b.md", "# B\n\n## One\n\ntext\n")
    write(tmp_path, "a.md", "# A\n")
    (tmp_path / "bad.md").write_bytes(b"\xff")
    report = validate_corpus(tmp_path, keep_chunks=True)
    assert [r.relpath for r in report.results] == ["a.md", "b.md"]
    assert [c.chunk_id for r in report.results for c in r.chunks] == [
        "a.md#_preamble",
        "b.md#_preamble",
        "b.md#b/one",
    ]
    assert report.results[1].metadata == {"language": "python"}
    assert [r.chunks for r in validate_corpus(tmp_path).results] == [[], []]


def test_missing_or_non_directory_docs_dir(tmp_path: Path) -> None:
    with pytest.raises(DocsDirError, match="not found"):
        validate_corpus(tmp_path / "nope")
    write(tmp_path, "file.md", "x")
    with pytest.raises(DocsDirError, match="not a directory"):
        validate_corpus(tmp_path / "file.md")


def test_empty_docs_dir_is_an_error(tmp_path: Path) -> None:
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [f".: error: no markdown files found under {tmp_path}"]
    assert report.files == 0 and not report.ok


def test_files_without_manifest_are_warnings(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "# A\n")
    write(tmp_path, "b.md", "---\nmcp_chunking_hint: file\n---\n# B\n")
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [
        "a.md: warning: no manifest found; using default strategy 'h2'",
        "b.md: warning: no manifest found; using strategy 'file' set in the file",
    ]
    assert report.ok


def test_invalid_manifest_json_has_a_line_and_files_under_it_are_not_reported_again(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{\n  "version": "1",\n  "strategy" {"chunk_by": "h2"}\n}\n')
    for i in range(3):
        write(tmp_path, f"f{i}.md", "# x\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [(".docs-mcp.json", 3, "error")]
    assert "manifest is not valid JSON" in report.findings[0].message


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"version": "2"}, "version must be '1' (got \"2\")"),
        (
            {"version": "1", "strategy": {"chunk_by": "h5"}},
            'strategy.chunk_by must be one of: h1, h2, h3, file (got "h5")',
        ),
        ({"version": "1", "metadata": {"language": 3}}, "metadata.language must be a string (got 3)"),
        ({"version": "1", "metadata": {"language": ""}}, "metadata.language cannot be empty"),
        ({"version": "1", "overrides": [{"pattern": ""}]}, "overrides[0].pattern"),
        (
            {"version": "1", "overrides": [{"pattern": "*.md", "strategy": {"chunk_by": "h0"}}]},
            "overrides[0].strategy.chunk_by",
        ),
    ],
)
def test_manifest_schema_errors(tmp_path: Path, manifest: dict[str, object], message: str) -> None:
    write(tmp_path, "sub/.docs-mcp.json", json.dumps(manifest))
    write(tmp_path, "sub/a.md", "# A\n")
    report = validate_corpus(tmp_path)
    errors = [f for f in report.findings if f.severity == "error"]
    assert [f.path for f in errors] == ["sub/.docs-mcp.json"]
    assert message in errors[0].message


def test_unknown_manifest_key_is_a_warning_with_line(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{\n  "version": "1",\n  "instructions": "x"\n}\n')
    write(tmp_path, "a.md", "# A\n")
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [
        ".docs-mcp.json:3: warning: unknown manifest key 'instructions' is ignored"
    ]


def test_a_key_given_twice_in_a_manifest_is_a_warning_with_line(tmp_path: Path) -> None:
    # JSON keeps the last value without a word: the author's first strategy was dropped unseen
    text = '{\n  "version": "1",\n  "strategy": {"chunk_by": "h3"},\n  "strategy": {"chunk_by": "h2"}\n}\n'
    write(tmp_path, ".docs-mcp.json", text)
    write(tmp_path, "a.md", "# A\n\n## B\n\nx\n")
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [
        ".docs-mcp.json:3: warning: the key 'strategy' is given twice in one object; only its last value "
        "counts (and docs-mcp fix will not rewrite this manifest); remove the other"
    ]


def test_front_matter_problems(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "yaml.md", "---\ntitle: x\nbad: [1, 2\n---\n# Y\n")
    write(tmp_path, "strategy.md", "---\nmcp_strategy:\n  chunk_by: h9\n---\n# S\n")
    write(tmp_path, "meta.md", "---\nmcp_metadata:\n  scope: 5\n---\n# M\n")
    write(tmp_path, "unknown.md", "---\ntitle: t\nmcp_metdata:\n  a: b\n---\n# U\n")
    report = validate_corpus(tmp_path)
    by_path = {f.path: f for f in report.findings}
    assert by_path["yaml.md"].severity == "error"
    assert by_path["yaml.md"].message.startswith("front matter is not valid YAML")
    assert by_path["yaml.md"].line in (3, 4)
    assert by_path["strategy.md"].severity == "error" and by_path["strategy.md"].line == 2
    assert "mcp_strategy.chunk_by must be one of" in by_path["strategy.md"].message
    assert "mcp_metadata.scope must be a string" in by_path["meta.md"].message
    unknown = by_path["unknown.md"]
    assert (unknown.severity, unknown.line) == ("warning", 3)
    assert "unknown front matter key 'mcp_metdata'" in unknown.message
    assert "did you mean 'mcp_metadata'" in unknown.message
    assert (report.errors, report.warnings) == (3, 1)


def test_front_matter_value_errors_point_at_the_key_at_fault(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "hint.md", "---\ntitle: T\ndescription: d\nmcp_chunking_hint: h7\n---\n# H\n")
    write(tmp_path, "meta.md", "---\ntitle: T\n\nmcp_metadata:\n  scope: [a]\n---\n# M\n")
    write(
        tmp_path, "both.md", "---\nmcp_strategy:\n  chunk_by: h3\ntitle: T\nmcp_chunking_hint: h2\n---\n# B\n"
    )
    report = validate_corpus(tmp_path)
    assert triples(report) == [("both.md", 5, "warning"), ("hint.md", 4, "error"), ("meta.md", 4, "error")]
    assert "mcp_chunking_hint is ignored" in report.findings[0].message


def test_a_title_that_is_not_text_is_a_warning_with_its_line(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "year.md", "---\nmcp_metadata:\n  scope: guide\ntitle: 2024\n---\n# Release notes\n")
    write(tmp_path, "list.md", "---\ntitle: [a, b]\n---\n# L\n")
    write(tmp_path, "fine.md", "---\ntitle: '2024'\n---\n# F\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [("list.md", 2, "warning"), ("year.md", 4, "warning")]
    assert "quote it" not in report.findings[0].message
    assert report.findings[1].message.startswith("front matter title must be a non-empty string (got 2024)")
    assert "quote it in the YAML" in report.findings[1].message


def test_a_title_longer_than_a_heading_is_a_warning_with_its_line(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "long.md", "---\nmcp_metadata:\n  scope: guide\ntitle: " + "t" * 1_001 + "\n---\n## A\n")
    write(tmp_path, "fine.md", "---\ntitle: " + "t" * 1_000 + "\n---\n## F\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [("long.md", 4, "warning")]
    assert report.findings[0].message.startswith("front matter title is 1,001 characters long")


def test_lone_surrogate_escapes_are_named_where_they_are_written(tmp_path: Path) -> None:
    """A ``\\ud800`` escape (JSON or YAML) reads as half a character no index can store: in a
    manifest's or front matter's metadata it failed every file as 'cannot chunk this file:
    UnicodeEncodeError', and in a front-matter title it passed validate and failed the build."""
    manifest = {"version": "1", "metadata": {"scope": "guide", "note": "a\udc80"}}
    write(tmp_path, ".docs-mcp.json", json.dumps(manifest))
    write(tmp_path, "a.md", "# A\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [(".docs-mcp.json", None, "error")]
    assert report.findings[0].message.startswith("metadata.note holds '\\udc80', half of")

    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "a.md", '---\ntitle: ok\nmcp_metadata:\n  note: "\\ud800"\n---\n# A\n')
    write(tmp_path, "b.md", '---\nmcp_metadata:\n  scope: guide\ntitle: "A \\ud800 title"\n---\n## B\n')
    report = validate_corpus(tmp_path)
    assert triples(report) == [("a.md", 3, "error"), ("b.md", 4, "warning")]
    assert "front matter mcp_metadata.note holds '\\ud800', half of" in report.findings[0].message
    assert report.findings[1].message.startswith("front matter title holds '\\ud800', half of")
    assert report.findings[1].message.endswith("it is ignored and the file's first heading is its title")


def test_a_title_with_a_lone_surrogate_is_left_out_of_the_index(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "b.md", '---\ntitle: "A \\ud800 title"\n---\n## B\n\nText.\n')
    out = tmp_path / "out"
    build_index(BuildOptions(docs_dir=tmp_path, out_dir=out))
    assert json.loads((out / "metadata.json").read_text(encoding="utf-8")).get("files", {}) == {}


def test_metadata_keys_that_would_break_the_search_tool_are_errors(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1", "metadata": {"lang\nuage": "go"}}))
    write(tmp_path, "a.md", "# A\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [(".docs-mcp.json", None, "error")]
    assert 'key "lang\\nuage" contains a control character' in report.findings[0].message

    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "a.md", "---\nmcp_metadata:\n  limit: high\n---\n# A\n")
    write(tmp_path, "b.md", '---\ntitle: B\nmetadata:\n  "x\\ty": z\n---\n# B\n')
    report = validate_corpus(tmp_path)
    assert triples(report) == [("a.md", 2, "error"), ("b.md", 3, "error")]
    assert "mcp_metadata.limit would replace search_docs's own 'limit' argument" in report.findings[0].message
    assert "contains a control character" in report.findings[1].message


def test_a_metadata_key_some_clients_refuse_is_a_warning_once(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1", "metadata": {"SDK language": "go"}}))
    write(tmp_path, "a.md", "# A\n")
    write(tmp_path, "b.md", "---\nmcp_metadata:\n  sdk-version: '2'\n---\n# B\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [(".docs-mcp.json", 1, "warning")]  # where the key is written
    assert report.findings[0].message.startswith("metadata key 'SDK language' becomes a search_docs argument")
    assert "(e.g. 'SDK_language')" in report.findings[0].message


_ALIAS_BOMB = "".join(
    [
        "a: &a [x, x, x, x, x, x, x, x, x]\n",
        *(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)),
    ]
)  # 9^9 values once expanded, in 600 bytes


def test_front_matter_that_aliases_or_nesting_blow_up_is_an_error_with_line(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "bomb.md", f"---\n{_ALIAS_BOMB}mcp_chunking_hint: *i\n---\n# B\n")
    write(tmp_path, "loop.md", "---\ntitle: t\nx: &r [1, *r]\nmcp_metadata:\n  scope: *r\n---\n# L\n")
    write(tmp_path, "deep.md", "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n# D\n")
    write(tmp_path, "shared.md", "---\nkeys: &k [a, b]\nagain: *k\n---\n# S\n")  # modest reuse is fine
    report = validate_corpus(tmp_path)
    assert report.files == 4 and report.errors == 3
    by_path = {f.path: f for f in report.findings}
    assert "shared.md" not in by_path
    for path, problem in (
        ("bomb.md", "YAML aliases (*name) expand it to more than"),
        ("loop.md", "a YAML alias (*name) makes a value contain itself"),
        ("deep.md", "it is nested too deeply to read; flatten it"),
    ):
        finding = by_path[path]
        assert (finding.line, finding.severity) == (1, "error")
        assert finding.message.startswith(f"front matter cannot be read: {problem}")


def test_front_matter_numbers_too_long_to_read_are_an_error_at_their_line(tmp_path: Path) -> None:
    # YAML 1.1 reads 1:30 as 90 (base 60) with a loop over big integers: 400,000 parts took 59 s,
    # 4 x the parts 16 x the time; and a number of over 4,300 digits said 'cannot chunk this file:
    # ValueError: Exceeds the limit (4300 digits) ... use sys.set_int_max_str_digits()'
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "base60.md", "---\ntitle: T\nx: " + "59:" * 100_000 + "59\n---\n# B\n")
    write(tmp_path, "digits.md", "---\ntitle: T\n\nx: " + "9" * 5_000 + "\n---\n# D\n")
    write(tmp_path, "float.md", "---\ntitle: T\nx: " + "1:" * 1_000 + "1.5\n---\n# F\n")  # OverflowError
    write(tmp_path, "time.md", "---\ntitle: T\nx: 1:30\ny: 1:30.5\n---\n# T\n")  # ordinary base-60 numbers
    report = validate_corpus(tmp_path, workers=1)
    by_path = {f.path: f for f in report.findings if f.severity == "error"}
    assert sorted(by_path) == ["base60.md", "digits.md", "float.md"]
    assert by_path["base60.md"].line == 3 and by_path["digits.md"].line == 4 and by_path["float.md"].line == 3
    assert "of 1,001 parts is too long" in by_path["float.md"].message
    assert by_path["base60.md"].message == (
        "front matter is not valid YAML: a base-60 number (such as 1:30) of 100,001 parts is too long "
        "to read; quote it to write it as text"
    )
    assert by_path["digits.md"].message == (
        "front matter is not valid YAML: a number of 5,000 digits is too long to read (at most 4,300); "
        "quote it to write it as text"
    )


def test_a_megabyte_value_is_repeated_in_part_by_its_finding(tmp_path: Path) -> None:
    # each message repeated the value whole: a line of a megabyte per finding in validate's output
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "directive.md", "# B\n\n<!-- mcp_" + "y" * 1_000_000 + " -->\n\ntext\n")
    write(tmp_path, "strategy.md", "---\nmcp_strategy:\n  chunk_by: " + "h" * 1_000_000 + "\n---\n# A\n")
    report = validate_corpus(tmp_path, workers=1)
    lines = {f.path: f.render() for f in report.findings if f.severity == "error"}
    assert sorted(lines) == ["directive.md", "strategy.md"]
    for line in lines.values():
        assert len(line) < 2_000 and "characters" in line
    assert lines["directive.md"].endswith("the only comment directive is mcp_chunking_hint")
    assert lines["strategy.md"].startswith(
        "strategy.md:2: error: front matter mcp_strategy.chunk_by must be one of"
    )


def test_invalid_utf8_and_empty_files(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    (tmp_path / "latin1.md").write_bytes(b"# T\n\nline two\ncaf\xe9\n")
    write(tmp_path, "empty.md", "\n\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [("empty.md", None, "warning"), ("latin1.md", 4, "error")]
    assert "not valid UTF-8" in report.findings[1].message


def test_a_character_yaml_does_not_allow_is_named_at_its_line(tmp_path: Path) -> None:
    # PyYAML names only its offset: the front matter's first line was named (a.md:1), and a
    # template's message ended in 'in "<unicode string>", position 96' with no line at all
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "a.md", '---\ntitle: ok\ndescription: "bad \x1b[31m red"\n---\n# A\n\ntext\n')
    write(
        tmp_path, "prompts/p.template.yaml", "title: T\n\nmessages:\n  - role: user\n    content: hi \x7f\n"
    )
    write(tmp_path, "prompts/q.template.md", "---\ntitle: T\n\ufffedescription: d\n---\nhello\n")
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [
        "a.md:3: error: front matter is not valid YAML: the character U+001B is not allowed in YAML; "
        "remove it, or write it as \\u001b inside double quotes",
        "prompts/p.template.yaml:5: error: invalid YAML: the character U+007F is not allowed in YAML; "
        "remove it, or write it as \\u007f inside double quotes",
        "prompts/q.template.md:3: error: invalid YAML: the character U+FFFE is not allowed in YAML; "
        "remove it, or write it as \\ufffe inside double quotes",
    ]


def test_symlink_loop_is_reported(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "sub/a.md", "# A\n")
    os.symlink(tmp_path / "sub", tmp_path / "sub" / "again")
    report = validate_corpus(tmp_path)
    assert triples(report) == [("sub/again", None, "warning")]
    assert report.files == 1


@pytest.fixture
def linked_corpus(tmp_path: Path) -> Path:
    """A docs folder with links out of it (a file, a folder, a prompt template) and links within it."""
    outside = tmp_path / "elsewhere"
    write(outside, "creds.md", "# Credentials\n\n## Key\n\nAKIA-SECRET\n")
    write(outside, "team/.docs-mcp.json", ROOT_MANIFEST)
    write(outside, "team/notes.md", "# Notes\n\n## Private\n\nsalaries\n")
    write(outside, "leak.template.md", "password: hunter2\n")
    docs = tmp_path / "docs"
    write(docs, ".docs-mcp.json", ROOT_MANIFEST)
    write(docs, "guide.md", "# Guide\n\n## Start\n\ntext\n")
    write(docs, "real/page.md", "# Page\n\n## Part\n\ntext\n")
    os.symlink(outside / "creds.md", docs / "creds.md")
    os.symlink(outside / "team", docs / "team")
    os.symlink(outside / "leak.template.md", docs / "leak.template.md")
    os.symlink(docs / "guide.md", docs / "alias.md")  # within the folder: followed
    os.symlink(docs / "real", docs / "mirror")
    return docs


def test_links_out_of_the_docs_folder_are_skipped_with_a_warning(linked_corpus: Path) -> None:
    report = validate_corpus(linked_corpus, keep_chunks=True)
    assert [r.relpath for r in report.results] == ["alias.md", "guide.md", "mirror/page.md", "real/page.md"]
    assert triples(report) == [
        ("creds.md", None, "warning"),
        ("leak.template.md", None, "warning"),
        ("team", None, "warning"),
    ]
    creds, template, team = report.findings
    assert creds.message.startswith("symbolic link to a file outside the docs folder (")
    assert str((linked_corpus.parent / "elsewhere" / "creds.md").resolve()) in creds.message
    assert "--follow-external-symlinks" in creds.message and "skipped" in creds.message
    assert template.message.startswith("symbolic link to a file outside the docs folder")
    assert team.message.startswith("symbolic link to a folder outside the docs folder")
    text = json.dumps([c.to_dict() for r in report.results for c in r.chunks])
    assert "AKIA-SECRET" not in text and "salaries" not in text
    assert discover_prompt_templates(linked_corpus, walk_corpus(linked_corpus).templates)[0] == []


def test_links_out_of_the_docs_folder_are_followed_on_request(linked_corpus: Path) -> None:
    report = validate_corpus(linked_corpus, keep_chunks=True, follow_external_symlinks=True)
    assert report.findings == []
    assert [r.relpath for r in report.results] == [
        "alias.md",
        "creds.md",
        "guide.md",
        "mirror/page.md",
        "real/page.md",
        "team/notes.md",
    ]
    walked = walk_corpus(linked_corpus, follow_external_symlinks=True)
    templates, _warnings = discover_prompt_templates(linked_corpus, walked.templates)
    assert [t.path for t in templates] == ["leak.template.md"]


def test_a_loop_of_file_links_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "ok.md", "# Ok\n")
    os.symlink(tmp_path / "b.md", tmp_path / "a.md")
    os.symlink(tmp_path / "a.md", tmp_path / "b.md")
    os.symlink(tmp_path / "gone.md", tmp_path / "dangling.md")
    report = validate_corpus(tmp_path)
    assert not report.ok and report.files == 1
    assert triples(report) == [
        ("a.md", None, "error"),
        ("b.md", None, "error"),
        ("dangling.md", None, "warning"),
    ]
    assert report.findings[0].message == (
        "symbolic link loop: this link leads back to itself through other links; point it at a real file or remove it"
    )
    assert report.findings[2].message.startswith("broken symbolic link: its target does not exist; skipped")


def test_a_tree_deeper_than_the_recursion_limit_is_walked(tmp_path: Path) -> None:
    # 1,500 levels ended validate, build and fix in 'RecursionError ... please report this' (5.5 s)
    folders = [tmp_path]
    for _ in range(1_200):  # 2,400 characters: within PATH_MAX (mkdir(parents=True) recurses too)
        folders.append(folders[-1] / "d")
        folders[-1].mkdir()
    deep = folders[-1]
    (deep / "x.md").write_text("# X\n", encoding="utf-8")
    (deep / "loop").symlink_to(tmp_path / "d", target_is_directory=True)
    try:
        files = walk_corpus(tmp_path)
    finally:  # removed here: pytest's own clean-up (shutil.rmtree) recurses, once per level
        (deep / "x.md").unlink()
        (deep / "loop").unlink()
        for folder in reversed(folders[1:]):
            folder.rmdir()
    assert files.markdown == ["/".join(["d"] * 1_200) + "/x.md"]
    assert [(f.path.rsplit("/", 1)[-1], f.message.split(":")[0]) for f in files.findings] == [
        ("loop", "symbolic link loop")
    ]


def test_a_path_with_a_line_break_is_indexed_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "bad\nname.md", "# A\n")  # its chunk id cut get_doc's header line in two, unsaid
    write(tmp_path, "tab\tdir/b.md", "# B\n")
    report = validate_corpus(tmp_path)
    assert report.ok and report.files == 2
    assert [(f.path, f.severity) for f in report.findings] == [
        ("bad\nname.md", "warning"),
        ("tab\tdir/b.md", "warning"),
    ]
    assert report.findings[0].message.startswith("the path holds a line break or another control character")


def test_a_document_removed_after_listing_is_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    from docs_mcp_core.corpus import read_markdown
    from docs_mcp_core.errors import FindingError

    # a build that listed the folder while someone moved files said only 'No such file or directory'
    with pytest.raises(FindingError) as info:
        read_markdown(tmp_path, "gone.md")
    assert info.value.finding.render() == (
        "gone.md: error: cannot read file: No such file or directory; it was removed or renamed while "
        "docs-mcp read the folder; run the command again"
    )


def test_a_document_that_is_not_a_regular_file_is_a_warning(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "ok.md", "# Ok\n")
    os.mkfifo(tmp_path / "pipe.md")  # was skipped without a word
    os.mkfifo(tmp_path / "p.template.yaml")
    report = validate_corpus(tmp_path)
    assert report.ok and report.files == 1
    not_read = "not a regular file (a named pipe, a socket or a device), so it is not read; make it a file or remove it"
    assert [(f.path, f.severity, f.message) for f in report.findings] == [
        ("p.template.yaml", "warning", not_read),
        ("pipe.md", "warning", not_read),
    ]


def test_a_document_replaced_by_a_named_pipe_after_listing_is_an_error_not_a_hang(tmp_path: Path) -> None:
    import threading

    from docs_mcp_core.corpus import read_markdown
    from docs_mcp_core.errors import FindingError

    os.mkfifo(tmp_path / "a.md")  # listed as a file, then replaced: the read waited for a writer forever
    outcome: list[BaseException | str] = []

    def read() -> None:
        try:
            outcome.append(read_markdown(tmp_path, "a.md"))
        except BaseException as exc:  # noqa: BLE001 - the outcome is asserted below
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # release the blocked read (a writer opens and closes the pipe)
        os.close(os.open(tmp_path / "a.md", os.O_WRONLY))
        reader.join(10)
    assert len(outcome) == 1 and isinstance(outcome[0], FindingError), outcome
    assert outcome[0].finding.render() == (
        "a.md: error: not a regular file (a named pipe, a socket or a device), so it is not read; make it a "
        "file or remove it"
    )


# ── hint comments and directives ─────────────────────────────────────────────────────────────────


def messages(
    markdown: str, front_matter: dict[str, object] | None = None
) -> list[tuple[int | None, str, str]]:
    return [(f.line, f.severity, f.message) for f in directive_findings("d.md", markdown, front_matter)]


def test_a_valid_hint_outside_code_is_silent() -> None:
    assert messages('# T\n\n<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n') == []


def test_directives_in_inline_code_on_a_long_line_and_the_lines_after_it() -> None:
    line = '<!-- mcp_chunking_hint: {"chunk_by": "h3"} --> ' + "`<!-- mcp_x --> ` " * 2_000
    got = messages("# T\n" + line + "\n`x <!-- mcp_y -->\n<!-- mcp_z -->\n")
    assert got == [
        (
            4,
            "error",
            "unknown directive 'mcp_z' in an HTML comment; the only comment directive is mcp_chunking_hint",
        )
    ]


def test_invalid_hint_json_is_an_error_with_line() -> None:
    got = messages('# T\n\n<!-- mcp_chunking_hint: {"chunk_by": h3} -->\n')
    assert len(got) == 1
    line, severity, message = got[0]
    assert (line, severity) == (3, "error")
    assert message.startswith("chunking hint is not valid JSON")
    assert message.endswith("no chunking hint applies to this file")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (TOO_DEEP, "nests arrays or objects too deeply"),
        (HUGE_NUMBER, "holds a number too long"),
    ],
)
def test_a_hint_too_deep_or_too_long_to_read_is_an_error_with_line(value: str, reason: str) -> None:
    # json.loads raised RecursionError / ValueError here: the whole build "failed unexpectedly"
    markdown = f'# T\n\n<!-- mcp_chunking_hint: {{"chunk_by": {value}}} -->\n'
    got = messages(markdown)
    assert [(line, severity) for line, severity, _ in got] == [(3, "error")]
    assert got[0][2].startswith(f"chunking hint cannot be read: it {reason}")
    assert find_hint(markdown) is None


def test_unknown_chunk_by_in_hint_is_an_error() -> None:
    assert messages('x\n<!-- mcp_chunking_hint: {"chunk_by": "h4"} -->') == [
        (
            2,
            "error",
            'chunking hint chunk_by must be one of: h1, h2, h3, file (got "h4"); no chunking hint applies to this file',
        )
    ]
    assert messages('<!-- mcp_chunking_hint: {"strategy": "h2"} -->')[0][2].startswith(
        "chunking hint chunk_by must be one of: h1, h2, h3, file (got nothing)"
    )


@pytest.mark.parametrize(
    "comment",
    [
        '<!-- mcp_chunking_hint {"chunk_by": "h3"} -->',  # no colon
        "<!-- mcp_chunking_hint: h3 -->",  # not an object
        '<!-- mcp_chunking_hint: {"chunk_by": "h3"}',  # never closed
    ],
)
def test_malformed_hints_are_errors(comment: str) -> None:
    got = messages(f"# T\n\n{comment}\n\ntext\n")
    assert [(line, sev) for line, sev, _m in got] == [(3, "error")]
    assert got[0][2].startswith("malformed chunking hint")


def test_hint_inside_code_block_still_applies_and_is_a_warning() -> None:
    markdown = '# T\n\n```md\n<!-- mcp_chunking_hint: {"chunk_by": "file"} -->\n```\n'
    assert messages(markdown) == [
        (4, "warning", "chunking hint inside code block; it still applies to the whole file (chunk_by file)")
    ]
    inline = 'Use `<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->` in a file.\n'
    assert messages(inline)[0][2].startswith("chunking hint inside inline code")


def test_hints_in_code_after_the_first_hint_are_inert_examples() -> None:
    markdown = (
        '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n\n'
        '```\n<!-- mcp_chunking_hint: {"chunk_by": "bogus"} -->\n<!-- mcp_other -->\n```\n'
        "\n- item\n\n  ```\n  <!-- mcp_nested: x -->\n  ```\n"
    )
    assert messages(markdown) == []


def test_later_hints_and_hints_overridden_by_front_matter_are_warnings() -> None:
    markdown = '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->\n\ntext\n\n<!-- mcp_chunking_hint: {"chunk_by": "h1"} -->\n'
    assert messages(markdown) == [
        (5, "warning", "only the first chunking hint of a file applies (line 1); this one is ignored")
    ]
    assert messages(
        '<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->', {"mcp_strategy": {"chunk_by": "h2"}}
    ) == [(1, "warning", "front matter mcp_strategy overrides this chunking hint; it has no effect")]
    assert messages('<!-- mcp_chunking_hint: {"chunk_by": "h3", "max_chunk_size": 5} -->') == [
        (1, "warning", "only chunk_by is read from a chunking hint; ignoring max_chunk_size")
    ]


def test_unknown_directives_are_errors_outside_code() -> None:
    got = messages('# T\n\n<!-- mcp_metadata: {"language": "go"} -->\n<!-- mcp_chunkinghint: x -->\n')
    assert [(line, sev) for line, sev, _m in got] == [(3, "error"), (4, "error")]
    assert got[0][2].startswith("unknown directive 'mcp_metadata' in an HTML comment")
    assert "front matter or .docs-mcp.json" in got[0][2]
    assert "did you mean 'mcp_chunking_hint'" in got[1][2]
    assert messages("```\n<!-- mcp_metadata: x -->\n```\n") == []


def test_directive_findings_end_to_end(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "a.md", '# A\n\n<!-- mcp_chunking_hint: {"chunk_by": "h9"} -->\n\n<!-- mcp_foo -->\n')
    report = validate_corpus(tmp_path)
    assert triples(report) == [("a.md", 3, "error"), ("a.md", 5, "error")]
    assert report.lines()[-1] == "validated 1 markdown file, 2 errors, 0 warnings"


# ── metadata limits ──────────────────────────────────────────────────────────────────────────────


def chunked(rel: str, metadata: dict[str, str]) -> ChunkedFile:
    return ChunkedFile(rel, [], 1, Strategy("h2"), metadata, None, "", None, 0)


def test_too_many_values_names_the_file_that_introduced_the_extra_value() -> None:
    results = [chunked(f"f{i:04}.md", {"sdk": f"v{i}"}) for i in range(MAX_VALUES_PER_KEY + 3)]
    results.insert(5, chunked("again.md", {"sdk": "v1"}))  # repeated values do not count
    findings = _check_metadata_limits(results)
    assert [(f.path, f.severity) for f in findings] == [(f"f{MAX_VALUES_PER_KEY:04}.md", "error")]
    assert findings[0].message == (
        f"metadata sdk = 'v{MAX_VALUES_PER_KEY}' is the {MAX_VALUES_PER_KEY + 1}th distinct value of 'sdk' in the "
        f"corpus; at most {MAX_VALUES_PER_KEY} values per key are allowed"
    )


def test_too_many_keys() -> None:
    results = [chunked(f"k{i:03}.md", {f"key{i}": "x"}) for i in range(MAX_TAXONOMY_KEYS + 1)]
    findings = _check_metadata_limits(results)
    assert [f.path for f in findings] == [f"k{MAX_TAXONOMY_KEYS:03}.md"]
    assert f"at most {MAX_TAXONOMY_KEYS} taxonomy keys" in findings[0].message


def test_long_keys_and_values_are_reported_once_on_the_first_file(tmp_path: Path) -> None:
    long_value = "v" * 129
    long_key = "k" * 65
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1", "metadata": {"language": "go"}}))
    write(tmp_path, "a.md", f"---\nmcp_metadata:\n  scope: {long_value}\n---\n# A\n")
    write(tmp_path, "b.md", f"---\nmcp_metadata:\n  scope: {long_value}\n  {long_key}: x\n---\n# B\n")
    write(tmp_path, "c.md", f"---\nmcp_metadata:\n  {long_key}: y\n---\n# C\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [("a.md", 3, "error"), ("b.md", 4, "error")]
    assert "129 characters long; at most 128" in report.findings[0].message
    assert report.findings[1].message.startswith(f"metadata key '{long_key}': key is 65 characters long")


def test_value_length_is_counted_in_utf16_units(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1", "metadata": {"emoji": "😀" * 64}}))
    write(tmp_path, "a.md", "# A\n")
    assert validate_corpus(tmp_path).ok
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1", "metadata": {"emoji": "😀" * 65}}))
    report = validate_corpus(tmp_path)
    assert triples(report) == [(".docs-mcp.json", 1, "error")]


def test_a_metadata_problem_is_named_where_the_key_is_written(tmp_path: Path) -> None:
    # each was reported on the first markdown file carrying the key, without a line: a.md for a
    # value written in the manifest, which is the file to edit
    manifest = {"version": "1", "metadata": {"scope": "guide", "lang": "x" * 300}}
    write(tmp_path, ".docs-mcp.json", json.dumps(manifest, indent=2))
    override = {"pattern": "*.md", "metadata": {"\u00e9t\u00e9": "v"}}
    write(tmp_path, "sub/.docs-mcp.json", json.dumps({"version": "1", "overrides": [override]}, indent=2))
    write(tmp_path, "a.md", "# A\n")
    write(tmp_path, "sub/b.md", "# B\n")
    write(tmp_path, "c.md", "---\ntitle: C\nmetadata:\n  zz: " + "q" * 300 + "\n---\n# C\n")
    report = validate_corpus(tmp_path)
    assert triples(report) == [
        (".docs-mcp.json", 5, "error"),
        ("c.md", 4, "error"),
        ("sub/.docs-mcp.json", 7, "warning"),
    ]
    assert report.findings[0].message.startswith("metadata lang: value 'xxx")
    assert "rename it (e.g. 'ete')" in report.findings[2].message  # not 't'


# ── manifest usage ───────────────────────────────────────────────────────────────────────────────


def test_unused_manifests_overrides_and_taxonomy_are_warnings(tmp_path: Path) -> None:
    write(
        tmp_path,
        ".docs-mcp.json",
        json.dumps(
            {
                "version": "1",
                "metadata": {"language": "python"},
                "taxonomy": {
                    "language": {"vector_collapse": True, "properties": {"rust": {"mcp_resource": True}}},
                    "platform": {"vector_collapse": True},
                },
                "overrides": [
                    {"pattern": "guides/*.md", "metadata": {"scope": "g"}},
                    {"pattern": "gides/**"},
                ],
            },
            indent=2,
        ),
    )
    write(tmp_path, "guides/a.md", "# A\n")
    write(tmp_path, "empty/.docs-mcp.json", json.dumps({"version": "1"}))
    report = validate_corpus(tmp_path)
    rendered = [f.render() for f in report.findings]
    assert rendered == [
        ".docs-mcp.json:10: warning: taxonomy.language.properties: no chunk has language = 'rust'; "
        "this setting has no effect",
        ".docs-mcp.json:15: warning: taxonomy key 'platform' does not match any chunk metadata; "
        "this configuration has no effect",
        '.docs-mcp.json:27: warning: overrides[1].pattern "gides/**" matches no markdown file governed by this '
        "manifest (patterns are relative to the manifest's folder)",
        "empty/.docs-mcp.json: warning: this manifest governs no markdown file (each file uses only its nearest "
        "manifest); its settings have no effect",
    ]


def test_a_manifest_whose_files_all_fail_is_not_said_to_govern_nothing(tmp_path: Path) -> None:
    """A file that cannot be chunked is still governed by its manifest: its error is the finding,
    not a warning that the manifest has no effect."""
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1"}))
    write(tmp_path, "guides/.docs-mcp.json", json.dumps({"version": "1", "overrides": [{"pattern": "a.md"}]}))
    write(tmp_path, "guides/a.md", "---\nmcp_metadata:\n  language: [1, 2]\n---\n# A\n")
    write(tmp_path, "b.md", "---\n- not a mapping\n---\n# B\n")
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [
        "b.md:1: error: front matter must be a YAML mapping",
        "guides/a.md:2: error: front matter mcp_metadata.language must be a string (got [1, 2])",
    ]


def test_front_matter_values_json_cannot_show_are_named_with_their_key_and_line(tmp_path: Path) -> None:
    """YAML reads dates, times, sets and binary strings that JSON has no form for: quoting one in
    the message failed the file with 'cannot chunk this file: TypeError: Object of type date is not
    JSON serializable', naming neither its line nor its key."""
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1"}))
    pages = {
        "a.md": "metadata: {updated: 2026-01-01}",
        "b.md": "mcp_metadata: {seen: 2001-12-14t21:59:43.10-05:00}",
        "c.md": "mcp_strategy: {chunk_by: h2, max_chunk_size: !!set {1}}",
        "d.md": "mcp_strategy: {chunk_by: !!binary aGVsbG8=}",
        "e.md": "metadata: {tags: {2026-01-01: release}}",
        "f.md": "title: {2026-01-01: release}",
        "g.md": "mcp_chunking_hint: {2026-01-01: h2}",
    }
    for name, line in pages.items():
        write(tmp_path, name, f"---\n{line}\n---\n# Page\n")
    report = validate_corpus(tmp_path)
    assert [f.render() for f in report.findings] == [
        'a.md:2: error: front matter metadata.updated must be a string (got "2026-01-01")',
        'b.md:2: error: front matter mcp_metadata.seen must be a string (got "2001-12-14 21:59:43.100000-05:00")',
        'c.md:2: error: front matter mcp_strategy.max_chunk_size must be a positive integer (got "{1}")',
        "d.md:2: error: front matter mcp_strategy.chunk_by must be one of: h1, h2, h3, file (got \"b'hello'\")",
        'e.md:2: error: front matter metadata.tags must be a string (got {"2026-01-01": "release"})',
        'f.md:2: warning: front matter title must be a non-empty string (got {"2026-01-01": "release"}); it is '
        "ignored and the file's first heading is its title",
        'g.md:2: error: front matter mcp_chunking_hint must be one of: h1, h2, h3, file (got {"2026-01-01": "h2"})',
    ]


def test_front_matter_metadata_keys_yaml_reads_as_other_than_text_are_named(tmp_path: Path) -> None:
    """An unquoted key true, null, 1 or 2026-01-01 is a boolean, null, number or date to YAML:
    turned into text by Python, true and null became the filters 'True' and 'None' of every
    search_docs schema, which no one wrote."""
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1"}))
    pages = {
        "a.md": "metadata: {true: yes}",
        "b.md": "metadata: {null: x}",
        "c.md": "mcp_metadata:\n  language: go\n  1: x",
        "d.md": "metadata: {2026-01-01: release}",
        "e.md": 'metadata: {"true": fine}',
    }
    for name, lines in pages.items():
        write(tmp_path, name, f"---\n{lines}\n---\n# Page\n")
    report = validate_corpus(tmp_path)
    hint = "is not text (YAML reads an unquoted true, null, number or date as one, not as a name); quote it:"
    assert [f.render() for f in report.findings] == [
        f'a.md:2: error: front matter metadata key true {hint} "true": ...',
        f'b.md:2: error: front matter metadata key null {hint} "null": ...',
        f'c.md:2: error: front matter mcp_metadata key 1 {hint} "1": ...',
        f'd.md:2: error: front matter metadata key 2026-01-01 {hint} "2026-01-01": ...',
    ]


def test_a_file_name_that_is_not_utf8_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """Its chunk ids could not be written to chunks.json or the table: the build failed unexpectedly."""
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1"}))
    write(tmp_path, "a.md", "# A\n")
    try:
        fd = os.open(os.fsencode(tmp_path) + b"/n\xffame.md", os.O_WRONLY | os.O_CREAT)
    except OSError as exc:  # a file system that only takes UTF-8 names
        pytest.skip(f"cannot create a non-UTF-8 file name here: {exc}")
    os.write(fd, b"# N\n")
    os.close(fd)
    report = validate_corpus(tmp_path)
    assert [(f.path, f.severity, f.message) for f in report.findings] == [
        (
            "n\udcffame.md",
            "error",
            "the file name is not valid UTF-8, so it cannot be a chunk id; rename the file",
        )
    ]
    # printed and reported as JSON with the byte escaped: the same text on stdout and stderr, and
    # JSON that is valid UTF-8
    finding = report.findings[0]
    assert finding.render().startswith("n\\xffame.md: error: ")
    assert finding.to_dict()["path"] == "n\\xffame.md"
    json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8")


# ── prompt templates ─────────────────────────────────────────────────────────────────────────────


def test_prompt_templates(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "a.md", "# A\n")
    write(tmp_path, "prompts/good.template.md", "---\ntitle: Good\n---\nHello {{name}}\n")
    write(tmp_path, "prompts/empty.template.md", "---\ntitle: Empty\n---\n\n")
    write(
        tmp_path,
        "prompts/bad.template.yaml",
        "title: Bad\nmessages:\n  - role: robot\n    content: {type: text, text: hi}\n",
    )
    write(tmp_path, "prompts/both.template.md", "Body\n")
    write(
        tmp_path,
        "prompts/both.template.yaml",
        "messages:\n  - role: user\n    content: {type: text, text: hi}\n",
    )
    report = validate_corpus(tmp_path)
    rendered = [f.render() for f in report.findings]
    assert rendered[0].startswith(
        "prompts/bad.template.yaml:3: error: messages[0].role must be 'user' or 'assistant'"
    )
    assert rendered[1:] == [
        "prompts/both.template.md: warning: Found both markdown and yaml templates for 'prompts/both' "
        "(prompts/both.template.md and prompts/both.template.yaml); using yaml",
        "prompts/empty.template.md: error: prompt template body must be a non-empty string",
    ]
    assert report.files == 1  # templates are not documentation


# ── ordering and real corpora ────────────────────────────────────────────────────────────────────


def test_findings_are_sorted_deterministically(tmp_path: Path) -> None:
    write(tmp_path, "b.md", "<!-- mcp_x -->\n\n<!-- mcp_y -->\n")
    write(tmp_path, "A.md", "# A\n")
    write(tmp_path, "a/z.md", "# Z\n")
    first = validate_corpus(tmp_path)
    # case-insensitive first ("a.md" < "a/z.md" because "." < "/"), then line
    assert [(f.path, f.line) for f in first.findings] == [
        ("A.md", None),
        ("a/z.md", None),
        ("b.md", None),
        ("b.md", 1),
        ("b.md", 3),
    ]
    assert validate_corpus(tmp_path, workers=1).findings == first.findings


def test_examples_docs_are_clean(examples_docs: Path) -> None:
    if not any(examples_docs.rglob("*.md")):
        pytest.skip("examples/docs has no markdown yet")
    report = validate_corpus(examples_docs)
    assert report.errors == 0, report.lines()


@pytest.mark.shared
@pytest.mark.integration
def test_sdk_docs_is_clean(shared_dir: Path) -> None:
    report = validate_corpus(shared_dir / "corpora" / "sdk-docs")
    assert (report.files, report.chunks, report.errors) == (4087, 10_969, 0), report.lines()[:20]


def test_a_file_name_holding_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", json.dumps({"version": "1"}))
    write(tmp_path, "two\nlines\t.md", "")
    report = validate_corpus(tmp_path, workers=1)
    lines = report.lines()
    assert lines == [
        "two\\nlines\\t.md: warning: file is empty; it is indexed as one empty chunk",
        "two\\nlines\\t.md: warning: the path holds a line break or another control character, which its "
        "chunk ids carry into every answer (get_doc's header line for the chunk is cut in two); rename it",
        "validated 1 markdown file, 0 errors, 2 warnings",
    ]
    assert report.findings[0].to_dict()["path"] == "two\nlines\t.md"  # JSON output keeps the name


@pytest.mark.parametrize("shape", ["folder", "broken link", "link loop", "device"])
def test_a_manifest_that_is_not_a_file_is_a_warning(tmp_path: Path, shape: str) -> None:
    # it was skipped without a word: the folder's files silently took another manifest's metadata
    write(tmp_path, ".docs-mcp.json", '{"version": "1", "metadata": {"scope": "guide"}}')
    write(tmp_path, "sdk/a.md", "# A\n\nText.\n")
    manifest = tmp_path / "sdk" / ".docs-mcp.json"
    if shape == "folder":
        manifest.mkdir()
    elif shape == "device":
        manifest.symlink_to("/dev/zero")
    else:
        manifest.symlink_to(manifest if shape == "link loop" else tmp_path / "missing.json")
    findings = walk_corpus(tmp_path).findings
    assert [(f.path, f.severity) for f in findings] == [("sdk/.docs-mcp.json", "warning")]
    assert findings[0].message.startswith("not a file (a folder, a device, or a symbolic link")


def test_front_matter_giving_a_key_twice_is_an_error_at_the_second(tmp_path: Path) -> None:
    # YAML kept the last value without a word: a page's title or filter silently lost (the
    # original's YAML reader refuses such front matter)
    write(tmp_path, ".docs-mcp.json", ROOT_MANIFEST)
    write(tmp_path, "title.md", "---\ntitle: First\nmcp_chunking_hint: h2\ntitle: Second\n---\n# T\n")
    write(tmp_path, "nested.md", "---\nmcp_metadata:\n  topic: a\n  topic: b\n---\n# N\n")
    write(tmp_path, "forms.md", "---\nmetadata:\n  '1': x\n  \"1\": y\n---\n# F\n")
    merged = "---\nbase: &b {topic: a, area: x}\nmcp_metadata:\n  <<: *b\n  topic: b\n---\n# M\n"
    write(tmp_path, "merged.md", merged)  # a merge key's values overridden on purpose
    report = validate_corpus(tmp_path, workers=1)
    by_path = {f.path: f for f in report.findings if f.severity == "error"}
    assert sorted(by_path) == ["forms.md", "nested.md", "title.md"]
    assert (by_path["title.md"].line, by_path["nested.md"].line, by_path["forms.md"].line) == (4, 4, 4)
    assert by_path["title.md"].message == (
        "front matter is not valid YAML: the key 'title' is given twice in one mapping (first at line 2); "
        "remove one of them"
    )
    assert "the key 'topic' is given twice in one mapping (first at line 3)" in by_path["nested.md"].message


def test_metadata_findings_in_one_manifest_are_located_in_linear_time(tmp_path: Path) -> None:
    """Each finding about a metadata value read its manifest again to find the value's line: 4,000
    overrides each giving a value too long took 100 s to validate, growing with the square."""

    def corpus(size: int) -> Path:
        docs = tmp_path / str(size)
        overrides = [{"pattern": f"p{i}.md", "metadata": {"kind": f"v{i}-" + "y" * 200}} for i in range(size)]
        write(docs, ".docs-mcp.json", json.dumps({"version": "1", "overrides": overrides}, indent=2))
        for i in range(size):
            write(docs, f"p{i}.md", f"# Page {i}\n\nText.\n")
        return docs

    small, large = corpus(200), corpus(800)
    assert len(validate_corpus(large, workers=1).findings) == 800
    seconds = {
        docs: best_cpu_seconds(lambda docs=docs: validate_corpus(docs, workers=1)) for docs in (small, large)
    }
    ratio = seconds[large] / seconds[small]
    assert ratio < 8  # four times the findings in a manifest four times as long: sixteen before
