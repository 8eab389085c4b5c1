"""fix: heading statistics, bootstrap manifests, drift repair plans, diffs and writes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from docs_mcp_core.corpus import Corpus, ManifestResolver, prepare_file
from docs_mcp_core.errors import ManifestError, ManifestLeftAloneError
from docs_mcp_core.fix import (
    ManifestChange,
    bootstrap_manifest,
    drift_repairs,
    glob_escape,
    pick_default_chunk_by,
    plan_fixes,
    suggest_chunk_by,
)
from docs_mcp_core.globs import compile_glob, glob_match


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def headings(prefix: str, n: int, body: str = "text") -> str:
    return "".join(f"{prefix} Heading {i}\n\n{body}\n\n" for i in range(n))


# ── suggest_chunk_by ─────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("plain text only\n", "file"),
        ("# One title\n\ntext\n", "file"),
        ("# T\n\n## A\n\n## B\n", "h2"),
        ("# A\n\n# B\n", "h1"),
        ("## A\n\n### x\n\n### y\n", "h3"),  # one h2 and two h3: only the "h3 >= 2" rule fires
        (headings("###", 6) + "## Only\n", "h3"),  # 6 h3 >= 2 * 1 h2
        (headings("###", 6) + headings("##", 4), "h2"),  # 6 h3 < 2 * 4 h2
        ("```\n## Not\n## Counted\n```\n\ntext\n", "file"),
        ("   ## Indented three\n   ## Counts\n", "h2"),
        ("    ## Four spaces is code\n    ## No\n", "file"),
        ("##NoSpace\n##Either\n", "file"),
        ("#### Deep\n#### Deeper\n", "file"),
    ],
)
def test_suggest_chunk_by(markdown: str, expected: str) -> None:
    assert suggest_chunk_by(markdown) == expected


def test_pick_default_prefers_h2_h1_h3_file_on_ties() -> None:
    assert pick_default_chunk_by(["file", "h3", "h1", "h2"]) == "h2"
    assert pick_default_chunk_by(["file", "h3", "h1"]) == "h1"
    assert pick_default_chunk_by(["file", "h3"]) == "h3"
    assert pick_default_chunk_by(["file", "file", "h2"]) == "file"


def test_glob_escape_matches_exactly_that_path() -> None:
    path = "docs/[v2]/a*b?{c}.md"
    pattern = glob_escape(path)
    assert pattern == "docs/[[]v2]/a[*]b[?][{]c}.md"
    assert glob_match(pattern, path)
    assert not glob_match(pattern, "docs/v/aXbY{c}.md")


# ── bootstrap ────────────────────────────────────────────────────────────────────────────────────


def test_bootstrap_writes_the_majority_default_and_sorted_outlier_overrides(tmp_path: Path) -> None:
    write(tmp_path, "docs/a.md", "# A\n\n## One\n\n## Two\n")
    write(tmp_path, "docs/b.md", "# B\n\n## One\n\n## Two\n")
    write(tmp_path, "docs/c.md", "just text\n")
    write(tmp_path, "Z.md", "# Z\n\n# Y\n")
    write(tmp_path, "prompts/p.template.md", "Hello\n")  # not documentation
    plan = bootstrap_manifest(tmp_path)
    assert len(plan.changes) == 1
    change = plan.changes[0]
    assert change.path == ".docs-mcp.json" and change.old_text is None
    assert json.loads(change.new_text) == {
        "version": "1",
        "strategy": {"chunk_by": "h2"},
        "overrides": [
            {"pattern": "docs/c.md", "strategy": {"chunk_by": "file"}},
            {"pattern": "Z.md", "strategy": {"chunk_by": "h1"}},
        ],
    }
    assert change.new_text.endswith("}\n") and '\n  "version": "1",\n' in change.new_text
    assert change.summary == "created .docs-mcp.json (default=h2, overrides=2)"
    assert not (tmp_path / ".docs-mcp.json").exists()
    plan.write()
    assert (tmp_path / ".docs-mcp.json").read_text(encoding="utf-8") == change.new_text


def test_bootstrap_of_an_empty_folder_is_the_default_manifest(tmp_path: Path) -> None:
    plan = bootstrap_manifest(tmp_path)
    assert plan.changes[0].new_text == '{\n  "version": "1",\n  "strategy": {\n    "chunk_by": "h2"\n  }\n}\n'


def test_no_bootstrap_when_a_root_manifest_exists_or_every_file_is_governed(tmp_path: Path) -> None:
    write(tmp_path, "sdk/.docs-mcp.json", '{"version": "1"}')
    write(tmp_path, "sdk/a.md", "text\n")
    assert bootstrap_manifest(tmp_path).empty
    write(tmp_path, "loose.md", "# A\n\n# B\n")
    plan = bootstrap_manifest(tmp_path)
    # only the file no manifest governs decides the default
    assert json.loads(plan.changes[0].new_text) == {"version": "1", "strategy": {"chunk_by": "h1"}}
    write(tmp_path, ".docs-mcp.json", '{"version": "1"}')
    assert bootstrap_manifest(tmp_path).empty


def test_broken_manifest_stops_fix_with_its_location(tmp_path: Path) -> None:
    write(tmp_path, "a/.docs-mcp.json", '{\n  "version": "1",\n  "strategy": {"chunk_by": "h2"},,\n}')
    write(tmp_path, "a/x.md", "# x\n")
    with pytest.raises(
        ManifestError,
        match=r"^a/\.docs-mcp\.json:3: manifest is not valid JSON: .*; repair this manifest first",
    ):
        plan_fixes(tmp_path)


def test_a_lone_surrogate_escape_in_a_manifest_stops_fix_naming_its_field(tmp_path: Path) -> None:
    """``"\\ud800"`` reads as half a character that no UTF-8 file can hold: writing the manifest back
    failed with a traceback (UnicodeEncodeError); it is named, and the manifest stays as it is."""
    text = '{"version": "1", "strategy": {"chunk_by": "h2"}, "x-note": {"who": ["ok", "\\ud800"]}}\n'
    manifest = write(tmp_path, ".docs-mcp.json", text)
    write(tmp_path, "tiny.md", "# T\n\n" + "".join(f"## s{i}\n\nx\n\n" for i in range(50)))
    with pytest.raises(
        ManifestError, match=r"^\.docs-mcp\.json: x-note\.who\[1\] holds '\\ud800'.*repair this"
    ):
        plan_fixes(tmp_path)
    assert manifest.read_text(encoding="utf-8") == text


# ── drift repair ─────────────────────────────────────────────────────────────────────────────────


BIG_SECTION = "## Big\n\n" + "".join(f"### Part {i}\n\n{'word ' * 150}\n\n" for i in range(4))
EXISTING = '{"version":"1","metadata":{"language":"go"},"strategy":{"chunk_by":"h2","max_chunk_size":1500},"x-note":"kept"}'


def test_oversized_sections_get_a_finer_override_that_keeps_size_limits(tmp_path: Path) -> None:
    write(tmp_path, "sdk/.docs-mcp.json", EXISTING)
    write(tmp_path, "sdk/guides/big.md", "# Guide\n\n" + BIG_SECTION + "## Small\n\nok\n")
    write(tmp_path, "sdk/fine.md", "# Fine\n\n## A\n\n" + "word " * 100 + "\n")
    plan = drift_repairs(tmp_path)
    assert [c.path for c in plan.changes] == ["sdk/.docs-mcp.json"]
    change = plan.changes[0]
    assert change.old_text == EXISTING
    data = json.loads(change.new_text)
    assert list(data) == ["version", "metadata", "strategy", "x-note", "overrides"]
    assert data["overrides"] == [
        {"pattern": "guides/big.md", "strategy": {"chunk_by": "h3", "max_chunk_size": 1500}}
    ]
    assert change.reasons == (
        "sdk/guides/big.md: 1 section larger than max_chunk_size 1500 at h2; h3 gives 5 chunks",
    )
    assert change.summary == "updated sdk/.docs-mcp.json (1 override added or changed)"

    diff = change.diff()
    assert diff.startswith("--- a/sdk/.docs-mcp.json\n+++ b/sdk/.docs-mcp.json\n")
    assert "\n\\ No newline at end of file\n" in diff  # the original had no final newline
    assert '+      "pattern": "guides/big.md",\n' in diff

    plan.write()
    resolved = prepare_file(tmp_path, "sdk/guides/big.md", ManifestResolver(tmp_path))
    assert resolved.config.strategy.chunk_by == "h3" and resolved.config.strategy.max_chunk_size == 1500
    assert plan_fixes(tmp_path).empty  # fixed for good


def test_mostly_tiny_chunks_get_a_coarser_override(tmp_path: Path) -> None:
    write(tmp_path, ".docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h3"}}')
    write(tmp_path, "faq.md", "# FAQ\n\n## Group\n\n" + headings("###", 8, "Short answer."))
    plan = drift_repairs(tmp_path)
    assert json.loads(plan.changes[0].new_text)["overrides"] == [
        {"pattern": "faq.md", "strategy": {"chunk_by": "h2"}}
    ]
    assert plan.changes[0].reasons == ("faq.md: 9 of 9 chunks under 200 characters at h3; h2 gives 2 chunks",)


def test_existing_exact_override_is_updated_in_place(tmp_path: Path) -> None:
    manifest = {
        "version": "1",
        "strategy": {"chunk_by": "h2", "max_chunk_size": 1500},
        "overrides": [
            {
                "pattern": "big.md",
                "metadata": {"tier": "1"},
                "strategy": {"chunk_by": "h1", "max_chunk_size": 1500},
            },
            {"pattern": "other/*.md", "metadata": {"x": "y"}},
        ],
    }
    write(tmp_path, ".docs-mcp.json", json.dumps(manifest, indent=2) + "\n")
    write(tmp_path, "big.md", "# Guide\n\n" + BIG_SECTION)
    plan = drift_repairs(tmp_path)
    overrides = json.loads(plan.changes[0].new_text)["overrides"]
    assert overrides == [
        {
            "pattern": "big.md",
            "metadata": {"tier": "1"},
            "strategy": {"chunk_by": "h3", "max_chunk_size": 1500},
        },
        {"pattern": "other/*.md", "metadata": {"x": "y"}},
    ]


def test_strategy_set_in_the_file_is_a_note_not_a_change(tmp_path: Path) -> None:
    write(
        tmp_path, ".docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 1500}}'
    )
    write(tmp_path, "big.md", '<!-- mcp_chunking_hint: {"chunk_by": "h2"} -->\n\n# Guide\n\n' + BIG_SECTION)
    plan = drift_repairs(tmp_path)
    assert plan.empty
    assert plan.notes == [
        "big.md: 1 section larger than max_chunk_size 1500 at h2; its strategy is set in the file itself "
        "(front matter or hint comment)"
    ]


def test_plan_fixes_merges_bootstrap_and_drift_into_one_sorted_manifest(tmp_path: Path) -> None:
    write(tmp_path, "b.md", "# B\n\n## One\n\nx\n\n## Two\n\ny\n")
    write(tmp_path, "c.md", "# C\n\n## One\n\nx\n\n## Two\n\ny\n")
    write(
        tmp_path,
        "a.md",
        "# Guide\n\n## Big\n\n" + "".join(f"### P{i}\n\n{'w ' * 6000}\n\n" for i in range(2)),
    )
    write(tmp_path, "z.md", "no headings\n")
    plan = plan_fixes(tmp_path)
    assert len(plan.changes) == 1
    change = plan.changes[0]
    assert change.old_text is None
    assert json.loads(change.new_text) == {
        "version": "1",
        "strategy": {"chunk_by": "h2"},
        "overrides": [
            {"pattern": "a.md", "strategy": {"chunk_by": "h3"}},
            {"pattern": "z.md", "strategy": {"chunk_by": "file"}},
        ],
    }
    assert change.summary == "created .docs-mcp.json (default=h2, overrides=2)"
    assert change.diff().startswith("--- /dev/null\n+++ b/.docs-mcp.json\n@@ -0,0 +1,")
    plan.write()
    assert plan_fixes(tmp_path).empty


def test_plans_are_deterministic(tmp_path: Path) -> None:
    write(
        tmp_path,
        "x/.docs-mcp.json",
        '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 1500}}',
    )
    for name in ["b", "A", "c"]:
        write(tmp_path, f"x/{name}.md", "# Guide\n\n" + BIG_SECTION)
    first = plan_fixes(tmp_path)
    assert first.diff() == plan_fixes(tmp_path).diff()
    patterns = [o["pattern"] for o in json.loads(first.changes[0].new_text)["overrides"]]
    assert patterns == ["A.md", "b.md", "c.md"]


def test_change_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    change = ManifestChange("m/.docs-mcp.json", None, '{"version": "1"}\n', "created")
    (tmp_path / "m").mkdir()
    change.write(tmp_path)
    assert [p.name for p in (tmp_path / "m").iterdir()] == [".docs-mcp.json"]


def test_a_rewritten_manifest_keeps_its_permissions_and_a_new_one_follows_the_umask(tmp_path: Path) -> None:
    # mkstemp's 0600 replaced the author's 0644: other users (a CI container, a server) could no
    # longer read the manifest
    existing = write(tmp_path, "a/.docs-mcp.json", '{"version": "1"}')
    existing.chmod(0o644)
    ManifestChange("a/.docs-mcp.json", '{"version": "1"}', '{"version": "1"}\n', "updated").write(tmp_path)
    assert stat.S_IMODE(existing.stat().st_mode) == 0o644
    (tmp_path / "b").mkdir()
    previous = os.umask(0o022)
    try:
        created = ManifestChange("b/.docs-mcp.json", None, '{"version": "1"}\n', "created").write(tmp_path)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(created.stat().st_mode) == 0o644


def test_a_manifest_that_is_a_link_is_written_where_it_leads(tmp_path: Path) -> None:
    # os.replace onto the link replaced the link with a file: the shared manifest it led to stayed
    # old, and the folder no longer followed it
    shared = write(tmp_path, "shared/.docs-mcp.json", '{"version": "1"}')
    (tmp_path / "a").mkdir()
    link = tmp_path / "a" / ".docs-mcp.json"
    link.symlink_to(shared)
    ManifestChange("a/.docs-mcp.json", '{"version": "1"}', '{"version": "2"}\n', "updated").write(tmp_path)
    assert link.is_symlink()
    assert shared.read_text(encoding="utf-8") == '{"version": "2"}\n'


def test_numbers_of_unknown_keys_are_written_back_as_the_author_wrote_them(tmp_path: Path) -> None:
    # read as floats, 1e999 was written back as Infinity (not JSON: editors and JSON.parse refuse
    # the manifest) and 12345678901234567890.5 as 1.2345678901234567e+19
    numbers = '"x-note": {"big": 1e999, "long": 12345678901234567890.5, "zero": -0.0, "nul": "\\u0000"}'
    write(tmp_path, "sdk/.docs-mcp.json", EXISTING.replace('"x-note":"kept"', numbers))
    write(tmp_path, "sdk/guides/big.md", "# Guide\n\n" + BIG_SECTION)
    plan = drift_repairs(tmp_path)
    assert len(plan.changes) == 1
    new_text = plan.changes[0].new_text
    assert '"big": 1e999,\n' in new_text and '"long": 12345678901234567890.5,\n' in new_text
    assert '"zero": -0.0,\n' in new_text and '"nul": "\\u0000"\n' in new_text
    data = json.loads(new_text, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
    assert data["overrides"][0]["pattern"] == "guides/big.md"


@pytest.mark.parametrize("kind", ["folder", "broken link"])
def test_a_root_manifest_that_is_not_a_file_is_a_note(tmp_path: Path, kind: str) -> None:
    # fix said "nothing to fix": the folder's files had no manifest, and nothing said why
    write(tmp_path, "guide.md", "# Guide\n\n## One\n\nText.\n")
    root = tmp_path / ".docs-mcp.json"
    if kind == "folder":
        root.mkdir()
    else:
        root.symlink_to(tmp_path / "missing.json")
    plan = plan_fixes(tmp_path)
    assert plan.empty
    assert any(note.startswith(".docs-mcp.json: not a file") for note in plan.notes)


def test_a_manifest_with_a_key_given_twice_is_left_as_it_is(tmp_path: Path) -> None:
    # read into a dict and written back, the first "x-note" vanished from the author's file unseen
    text = EXISTING.replace('"x-note":"kept"', '"x-note":"first","x-note":"second"')
    write(tmp_path, "sdk/.docs-mcp.json", text)
    write(tmp_path, "sdk/guides/big.md", "# Guide\n\n" + BIG_SECTION)
    plan = drift_repairs(tmp_path)
    assert plan.empty
    assert any(n.startswith('sdk/.docs-mcp.json: gives the key "x-note" twice') for n in plan.notes)


def test_a_manifest_linked_from_outside_the_docs_folder_is_neither_read_nor_written(tmp_path: Path) -> None:
    # fix rewrote the file the link led to, wherever on the machine it was, and validate and build
    # read it as the folder's manifest without a word, unlike any other link leading out
    docs, outside = tmp_path / "docs", write(tmp_path, "elsewhere/settings.json", EXISTING)
    write(docs, "sdk/guides/big.md", "# Guide\n\n" + BIG_SECTION)
    (docs / "sdk" / ".docs-mcp.json").symlink_to(outside)
    corpus = Corpus.open(docs)
    assert corpus.files.manifests == []
    assert [(f.path, f.severity) for f in corpus.files.findings] == [("sdk/.docs-mcp.json", "warning")]
    assert "outside the docs folder" in corpus.files.findings[0].message
    plan = plan_fixes(docs)
    assert [c.path for c in plan.changes] == [".docs-mcp.json"]  # the folder's files have no manifest
    assert any(n.startswith("sdk/.docs-mcp.json: a symbolic link to a file outside") for n in plan.notes)
    plan.write()
    assert outside.read_text(encoding="utf-8") == EXISTING
    followed = Corpus.open(docs, follow_external_symlinks=True)
    assert followed.files.manifests == [".docs-mcp.json", "sdk/.docs-mcp.json"]
    assert followed.resolver.nearest("sdk/guides/big.md").path == "sdk/.docs-mcp.json"  # type: ignore[union-attr]


def test_a_link_retargeted_out_of_the_folder_after_the_plan_is_not_written_through(tmp_path: Path) -> None:
    docs, outside = tmp_path / "docs", write(tmp_path, "elsewhere/settings.json", EXISTING)
    docs.mkdir()
    (docs / ".docs-mcp.json").symlink_to(outside)
    change = ManifestChange(".docs-mcp.json", EXISTING, '{"version": "1"}\n', "updated")
    with pytest.raises(ManifestLeftAloneError, match="leads outside the docs folder"):
        change.write(docs)
    assert outside.read_text(encoding="utf-8") == EXISTING


@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_a_manifest_with_windows_line_endings_keeps_them_and_its_byte_order_mark(
    tmp_path: Path, bom: str
) -> None:
    # every line was rewritten with LF and the mark dropped: a diff of the whole file in review
    text = bom + json.dumps(json.loads(EXISTING), indent=2).replace("\n", "\r\n") + "\r\n"
    manifest = tmp_path / "sdk" / ".docs-mcp.json"
    manifest.parent.mkdir()
    manifest.write_bytes(text.encode("utf-8"))
    write(tmp_path, "sdk/guides/big.md", "# Guide\n\n" + BIG_SECTION)
    plan = plan_fixes(tmp_path)
    assert len(plan.changes) == 1
    assert "\r" not in plan.diff().replace("\r\n", "")  # lines end one way in the diff too
    plan.write()
    written = manifest.read_bytes().decode("utf-8")
    assert written.startswith(bom + "{\r\n") and written.endswith("}\r\n")
    assert "\n" not in written.replace("\r\n", "")
    assert json.loads(written.removeprefix(bom))["overrides"][0]["pattern"] == "guides/big.md"
    assert plan_fixes(tmp_path).empty


def test_a_manifest_seen_through_a_folder_linked_inside_the_docs_is_changed_once(tmp_path: Path) -> None:
    # the change planned for each of its two paths: the second write found the file changed by the
    # first and fix ended with 'changed while fix was running', exit 1, though nobody had touched it
    write(tmp_path, "v2/.docs-mcp.json", EXISTING)
    write(tmp_path, "v2/guides/big.md", "# Guide\n\n" + BIG_SECTION)
    (tmp_path / "latest").symlink_to("v2")
    plan = drift_repairs(tmp_path)
    assert [c.path for c in plan.changes] == ["latest/.docs-mcp.json"]
    plan.write()
    assert json.loads((tmp_path / "v2" / ".docs-mcp.json").read_text(encoding="utf-8"))["overrides"] == [
        {"pattern": "guides/big.md", "strategy": {"chunk_by": "h3", "max_chunk_size": 1500}}
    ]
    assert drift_repairs(tmp_path).empty


@pytest.mark.parametrize("indent", ["    ", "\t"])
def test_a_rewritten_manifest_keeps_its_indentation(tmp_path: Path, indent: str) -> None:
    # a manifest indented with four spaces or tabs came back with two: a diff of every line
    text = json.dumps(json.loads(EXISTING), indent=indent) + "\n"
    write(tmp_path, "sdk/.docs-mcp.json", text)
    write(tmp_path, "sdk/guides/big.md", "# Guide\n\n" + BIG_SECTION)
    [change] = drift_repairs(tmp_path).changes
    assert change.new_text.startswith(text.removesuffix("\n}\n"))  # every line it had, unchanged
    assert f'\n{indent * 3}"pattern": "guides/big.md",\n' in change.new_text


def test_merging_many_proposals_runs_each_override_pattern_once_per_file(tmp_path: Path) -> None:
    # each proposal ran every override before it, those appended for earlier proposals included:
    # 4,000 drifting files took fix 36 s in that merge alone, 300 ran 45,000 pattern matches
    manifest = {
        "version": "1",
        "strategy": {"chunk_by": "h2", "max_chunk_size": 1500},
        "overrides": [
            {"pattern": "p7.md", "strategy": {"chunk_by": "h1", "max_chunk_size": 1500}},
            {"pattern": "p8.md", "metadata": {"tier": "1"}},
        ],
    }
    write(tmp_path, ".docs-mcp.json", json.dumps(manifest))
    for i in range(300):
        write(tmp_path, f"p{i}.md", "# Guide\n\n" + BIG_SECTION)
    before = compile_glob.cache_info()
    [change] = drift_repairs(tmp_path).changes
    after = compile_glob.cache_info()
    overrides = json.loads(change.new_text)["overrides"]
    assert len(overrides) == 301  # p7's own override updated in place, p8's kept and p8 given its own
    assert overrides[0] == {"pattern": "p7.md", "strategy": {"chunk_by": "h3", "max_chunk_size": 1500}}
    assert overrides[1] == {"pattern": "p8.md", "metadata": {"tier": "1"}}
    assert {o["pattern"] for o in overrides[2:]} == {f"p{i}.md" for i in range(300) if i != 7}
    assert (after.hits + after.misses) - (before.hits + before.misses) <= 4 * 300
