"""``build_index``: reproducible outputs, parity with the original's chunks, the metadata.json
contract, refusal of bad corpora without touching the live index, incremental rebuilds, the git
commit, crash recovery and embeddings (hash provider)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.build import (
    BuildOptions,
    BuildReporter,
    BuildSummary,
    EmbeddingOptions,
    ToolTexts,
    build_index,
    recover_interrupted_swap,
)
from docs_mcp_core.errors import BuildError, CorpusInvalidError, DocsDirError, DocsMcpError
from docs_mcp_core.index import table as index_table
from docs_mcp_core.index.live_files import LiveFiles, live_files
from docs_mcp_core.markdown import utf16_len
from docs_mcp_core.search import SearchEngine, SearchOptions
from docs_mcp_core.validation import validate_corpus
from tests.support.file_digests import file_digests
from tests.support.upstream_tsv import read_upstream_chunks

NO_MATCH_QUERY = "xylophonic zymurgy"


class RecordingReporter(BuildReporter):
    """Keeps every step and warning a build reports."""

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.warnings: list[str] = []

    def step(self, message: str) -> None:
        self.steps.append(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)


def _chunks(out: Path) -> list[dict[str, Any]]:
    data = json.loads((out / "chunks.json").read_text(encoding="utf-8"))
    return data["chunks"] if isinstance(data, dict) else data


def _build(docs: Path, out: Path, reporter: BuildReporter | None = None, **kw: Any) -> BuildSummary:
    return build_index(BuildOptions(docs_dir=docs, out_dir=out, **kw), reporter)


def _copy_examples(examples_docs: Path, dest: Path) -> Path:
    shutil.copytree(examples_docs, dest)
    return dest


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _hit_ids(out: Path, query: str, **filters: str) -> list[str]:
    return [h.chunk_id for h in SearchEngine.open(out).search(query, limit=50, filters=filters).hits]


@pytest.fixture(scope="module")
def example_build(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> tuple[Path, BuildSummary]:
    out = tmp_path_factory.mktemp("example-build")
    summary = _build(examples_docs, out, tools=ToolTexts(search_docs="Search the Tidewater docs."))
    return out, summary


# ── reproducibility and the output contract ────────────────────────────────────────────────────


def test_two_builds_of_the_same_corpus_are_identical(
    tmp_path: Path, examples_docs: Path, example_build: tuple[Path, BuildSummary]
) -> None:
    first, _ = example_build
    second = tmp_path / "second"
    _build(examples_docs, second, tools=ToolTexts(search_docs="Search the Tidewater docs."))
    assert (first / "chunks.json").read_bytes() == (second / "chunks.json").read_bytes()
    meta = [json.loads((d / "metadata.json").read_text(encoding="utf-8")) for d in (first, second)]
    for m in meta:
        m["stats"].pop("indexed_at")
    assert meta[0] == meta[1]
    import lancedb

    tables = [
        lancedb.connect(str(d / ".lancedb")).open_table("chunks").to_arrow().sort_by("chunk_id")
        for d in (first, second)
    ]
    assert tables[0].equals(tables[1])


def test_summary_and_reporter(tmp_path: Path, examples_docs: Path) -> None:
    reporter = RecordingReporter()
    summary = _build(examples_docs, tmp_path / "out", reporter)
    chunks = json.loads((tmp_path / "out" / "chunks.json").read_text(encoding="utf-8"))
    assert (summary.files, summary.chunks, summary.cached_files) == (20, len(chunks), 0)
    assert summary.index_bytes > 0 and summary.seconds > 0
    assert "validating" in reporter.steps[0]
    assert any(
        s.startswith(f"chunked 20 files into {len(chunks)} chunks (0 unchanged") for s in reporter.steps
    )
    assert (
        "index: writing table" in reporter.steps and "index: full-text and scalar indexes" in reporter.steps
    )
    assert reporter.warnings == summary.warnings == []


def test_warnings_are_reported_once_each_as_validate_prints_them(tmp_path: Path) -> None:
    manifest = {"version": "1", "bogus": 1, "taxonomy": {"platform": {"vector_collapse": True}}}
    template = "title: T\ndescription: D\nmessages:\n  - role: user\n    content: {type: text, text: hi}\n"
    docs = tmp_path / "docs"
    (docs / "prompts").mkdir(parents=True)
    (docs / ".docs-mcp.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (docs / "guide.md").write_text("# Guide\n\nThe lighthouse guide.\n", encoding="utf-8")
    (docs / "prompts" / "x.template.md").write_text(
        "---\ntitle: T\ndescription: D\n---\nHi\n", encoding="utf-8"
    )
    (docs / "prompts" / "x.template.yaml").write_text(template, encoding="utf-8")
    reporter = RecordingReporter()
    summary = _build(docs, tmp_path / "out", reporter)
    validated = [f.render() for f in validate_corpus(docs).findings]
    assert len(validated) == 3
    assert reporter.warnings == summary.warnings == validated
    assert ".docs-mcp.json:3: warning: unknown manifest key 'bogus' is ignored" in validated
    assert "chunked 1 file into 1 chunk (0 unchanged files reused, 3 warnings)" in reporter.steps


def test_chunks_json_layout(example_build: tuple[Path, BuildSummary]) -> None:
    out, summary = example_build
    text = (out / "chunks.json").read_text(encoding="utf-8")
    chunks = json.loads(text)
    assert text == json.dumps(chunks, indent=2, ensure_ascii=False)  # JSON.stringify(x, null, 2), no newline
    assert len(chunks) == summary.chunks
    assert list(chunks[0]) == [
        "chunk_id",
        "filepath",
        "heading",
        "heading_level",
        "content",
        "content_text",
        "breadcrumb",
        "chunk_index",
        "metadata",
    ]
    ids = {c["chunk_id"] for c in chunks}
    assert len(ids) == len(chunks)
    assert {
        "guides/errors.md#_preamble",
        "guides/errors.md#errors/error-code-reference-part-2",
        "guides/errors.md#errors/handling-errors-by-category/validation-errors",
        "guides/pagination.md#pagination/example-2",
        "guides/environments.md",
    } <= ids
    assert not any(c["filepath"].startswith("prompts/") for c in chunks)  # templates are not indexed


def test_metadata_json_has_the_contract_keys_in_order(example_build: tuple[Path, BuildSummary]) -> None:
    out, summary = example_build
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert list(meta) == [
        "metadata_version",
        "corpus_description",
        "taxonomy",
        "stats",
        "embedding",
        "prompts",
        "tool_descriptions",
        "mcpServerInstructions",
        "files",
        "index",
    ]
    assert meta["metadata_version"] == "1.1.0"
    assert meta["corpus_description"] == "Documentation corpus"
    assert list(meta["taxonomy"]) == ["scope", "topic", "language"]  # first seen
    assert meta["taxonomy"]["language"] == {
        "description": "Filter results by language.",
        "values": ["go", "python", "typescript"],
        "vector_collapse": True,
    }
    assert meta["taxonomy"]["scope"] == {
        "description": "Filter results by scope.",
        "values": ["global-guide", "sdk-specific"],
        "properties": {"global-guide": {"mcp_resource": True}},
    }
    assert list(meta["stats"]) == ["total_chunks", "total_files", "indexed_at", "source_commit"]
    assert meta["stats"]["total_chunks"] == summary.chunks and meta["stats"]["total_files"] == 20
    assert meta["embedding"] is None
    assert [p["name"] for p in meta["prompts"]] == ["prompts/debug-webhook", "prompts/integrate-payments"]
    assert meta["tool_descriptions"] == {"search_docs": "Search the Tidewater docs."}
    assert meta["mcpServerInstructions"].startswith("Tidewater Payments documentation")
    assert meta["files"]["guides/retries.md"] == {"title": "Retries and idempotency"}
    assert meta["index"] == {"engine": "lancedb", "table": "chunks", "path": ".lancedb"}
    assert not [p for p in out.iterdir() if p.name.endswith((".tmp", ".old"))]


@pytest.mark.slow
@pytest.mark.integration
def test_sdk_docs_chunks_json_matches_the_original(sdk_docs_index: Path, shared_dir: Path) -> None:
    out = sdk_docs_index  # built with the default options
    chunks = json.loads((out / "chunks.json").read_text(encoding="utf-8"))
    expected = read_upstream_chunks(shared_dir / "spec" / "sdk-docs.upstream-chunks.tsv")
    got = [
        (
            c["chunk_id"],
            c["filepath"],
            str(c["chunk_index"]),
            str(c["heading_level"]),
            str(utf16_len(c["content"])),
            hashlib.sha256(c["content"].encode("utf-8")).hexdigest()[:12],
            c["breadcrumb"],
        )
        for c in chunks
    ]
    assert len(got) == len(expected) == 10_969
    mismatches = [(i, g, e) for i, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e]
    assert not mismatches, f"{len(mismatches)} chunks differ; first: {mismatches[:3]}"
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert meta["stats"]["total_chunks"] == 10_969 and meta["stats"]["total_files"] == 4_087


# ── refusing bad corpora, keeping the live index ───────────────────────────────────────────────


@pytest.fixture
def live_index(tmp_path: Path) -> Path:
    """An output folder holding a small, working index."""
    docs = _write(
        tmp_path / "good",
        {
            ".docs-mcp.json": json.dumps(
                {"version": "1", "strategy": {"chunk_by": "h2"}, "metadata": {"scope": "guide"}}
            ),
            "alpha.md": "# Alpha\n\n## Lighthouse\n\nThe lighthouse keeper trims the wick.\n",
        },
    )
    out = tmp_path / "out"
    _build(docs, out)
    assert _hit_ids(out, "lighthouse") == ["alpha.md#alpha/lighthouse"]
    return out


def _assert_untouched(out: Path, before: dict[str, str]) -> None:
    assert file_digests(out) == before
    assert _hit_ids(out, "lighthouse") == ["alpha.md#alpha/lighthouse"]


def test_empty_corpus_is_refused_and_the_live_index_kept(tmp_path: Path, live_index: Path) -> None:
    before = file_digests(live_index)
    for name, files in (("empty", {}), ("templates-only", {"p/x.template.md": "---\ntitle: X\n---\nhi\n"})):
        docs = _write(tmp_path / name, files)
        docs.mkdir(exist_ok=True)
        with pytest.raises(BuildError, match="no markdown files"):
            _build(docs, live_index)
        _assert_untouched(live_index, before)


def test_broken_corpus_is_refused_with_the_findings(tmp_path: Path, live_index: Path) -> None:
    before = file_digests(live_index)
    docs = _write(
        tmp_path / "broken",
        {
            ".docs-mcp.json": '{"version": "1", "strategy": {"chunk_by": "h9"}}',
            "beta.md": "# Beta\n\n## Section\n\ntext\n",
        },
    )
    with pytest.raises(CorpusInvalidError) as info:
        _build(docs, live_index)
    assert ".docs-mcp.json" in str(info.value)
    assert "docs-mcp validate" in str(info.value)
    assert any(f.severity == "error" for f in info.value.findings)
    _assert_untouched(live_index, before)


def test_missing_docs_dir(tmp_path: Path) -> None:
    with pytest.raises(DocsDirError, match="docs folder not found"):
        _build(tmp_path / "nope", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_failed_embedding_preflight_keeps_the_live_index(live_index: Path, tmp_path: Path) -> None:
    before = file_digests(live_index)
    docs = _write(tmp_path / "docs", {"gamma.md": "# Gamma\n\ntext\n"})
    with pytest.raises(DocsMcpError) as info:
        _build(docs, live_index, embedding=EmbeddingOptions(provider="no-such-provider"))
    assert "no-such-provider" in str(info.value)
    _assert_untouched(live_index, before)


# ── incremental rebuilds ───────────────────────────────────────────────────────────────────────


def test_a_front_matter_edit_rechunks_that_file_with_its_new_configuration(
    tmp_path: Path, examples_docs: Path
) -> None:
    docs = _copy_examples(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    first = _build(docs, out)
    guide = docs / "guides" / "environments.md"
    text = guide.read_text(encoding="utf-8")
    assert "mcp_chunking_hint: file" in text
    whole_file = [c for c in _chunks(out) if c["filepath"] == "guides/environments.md"]
    assert len(whole_file) == 1

    guide.write_text(text.replace("mcp_chunking_hint: file", "mcp_chunking_hint: h2"), encoding="utf-8")
    edited = _build(docs, out)
    assert edited.cached_files == first.files - 1
    by_section = [c for c in _chunks(out) if c["filepath"] == "guides/environments.md"]
    assert len(by_section) > 1

    # front matter the light scan cannot read goes through the parser, which reports it
    guide.write_text("---\ntitle: [unclosed\n---\n\n# Environments\n", encoding="utf-8")
    with pytest.raises(BuildError, match=r"guides/environments\.md"):
        _build(docs, out)


def test_incremental_rebuild_reuses_unchanged_files_and_picks_up_edits(
    tmp_path: Path, examples_docs: Path
) -> None:
    docs = _copy_examples(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    first = _build(docs, out)
    chunks_before = (out / "chunks.json").read_bytes()
    again = _build(docs, out)
    assert again.cached_files == first.files > 0  # front-matter files included
    assert (out / "chunks.json").read_bytes() == chunks_before

    # edit one file: only that file is chunked again, and the edit is searchable
    retries = docs / "guides" / "retries.md"
    retries.write_text(
        retries.read_text(encoding="utf-8") + "\n## Zebra crossing\n\nQuagga stripes everywhere.\n",
        encoding="utf-8",
    )
    edited = _build(docs, out)
    assert edited.cached_files == again.cached_files - 1
    assert edited.chunks == first.chunks + 1
    assert _hit_ids(out, "quagga") == ["guides/retries.md#retries-and-idempotency/zebra-crossing"]

    # a manifest change re-chunks the files it governs and reaches the taxonomy
    manifest = docs / "sdks" / "go" / ".docs-mcp.json"
    body = json.loads(manifest.read_text(encoding="utf-8"))
    body["metadata"]["tier"] = "beta"
    manifest.write_text(json.dumps(body), encoding="utf-8")
    go_files = len(list((docs / "sdks" / "go").rglob("*.md")))
    changed = _build(docs, out)
    assert changed.cached_files == edited.cached_files + 1 - go_files  # retries.md is reused again
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert meta["taxonomy"]["tier"]["values"] == ["beta"]
    ids = _hit_ids(out, "payment", tier="beta")
    assert ids and all(i.startswith("sdks/go/") for i in ids)

    # a deleted file leaves the index
    (docs / "guides" / "retries.md").unlink()
    removed = _build(docs, out)
    assert removed.files == first.files - 1
    assert _hit_ids(out, "quagga") == []
    assert "guides/retries.md" not in json.loads((out / "metadata.json").read_text(encoding="utf-8"))["files"]


def test_rebuild_cache_flag_chunks_everything_again(tmp_path: Path, examples_docs: Path) -> None:
    out = tmp_path / "out"
    _build(examples_docs, out)
    assert _build(examples_docs, out, rebuild_cache=True).cached_files == 0


# ── provenance ─────────────────────────────────────────────────────────────────────────────────


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Docs Bot", "-c", "user.email=bot@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()


def test_source_commit_comes_from_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = _write(tmp_path / "repo", {"docs/a.md": "# A\n\n## One\n\nalpha\n"})
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "docs")
    head = _git(repo, "rev-parse", "HEAD")
    _build(repo / "docs", tmp_path / "out")
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text(encoding="utf-8"))
    assert meta["stats"]["source_commit"] == head

    plain = _write(tmp_path / "plain", {"a.md": "# A\n\n## One\n\nalpha\n"})
    _build(plain, tmp_path / "out2")
    meta = json.loads((tmp_path / "out2" / "metadata.json").read_text(encoding="utf-8"))
    assert meta["stats"]["source_commit"] is None


def test_indexed_at_is_an_iso_timestamp(example_build: tuple[Path, BuildSummary]) -> None:
    import re

    meta = json.loads((example_build[0] / "metadata.json").read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", meta["stats"]["indexed_at"])


# ── crash recovery ─────────────────────────────────────────────────────────────────────────────


def test_recovery_after_a_crash_between_the_two_renames(live_index: Path) -> None:
    # the crash left the old index at .lancedb.old and no live one
    (live_index / ".lancedb").rename(live_index / ".lancedb.old")
    (live_index / ".lancedb.tmp").mkdir()
    (live_index / "chunks.json.tmp").write_text("[", encoding="utf-8")
    recover_interrupted_swap(live_index)
    assert sorted(p.name for p in live_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    assert _hit_ids(live_index, "lighthouse") == ["alpha.md#alpha/lighthouse"]


def test_recovery_puts_the_old_table_back_in_place_of_a_live_folder_without_one(live_index: Path) -> None:
    # killed between the two renames; then a tool opened .lancedb, which made an empty folder
    (live_index / ".lancedb").rename(live_index / ".lancedb.old")
    (live_index / ".lancedb").mkdir()
    assert live_files(live_index) == LiveFiles(table=".lancedb.old")
    recover_interrupted_swap(live_index)
    assert live_files(live_index) == LiveFiles()
    assert sorted(p.name for p in live_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    assert _hit_ids(live_index, "lighthouse") == ["alpha.md#alpha/lighthouse"]


def test_recovery_drops_leftovers_of_a_finished_swap(live_index: Path) -> None:
    shutil.copytree(live_index / ".lancedb", live_index / ".lancedb.old")
    (live_index / "metadata.json.tmp").write_text("{", encoding="utf-8")
    recover_interrupted_swap(live_index)
    assert sorted(p.name for p in live_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    assert _hit_ids(live_index, "lighthouse") == ["alpha.md#alpha/lighthouse"]


def test_a_swap_cut_short_after_the_new_table_went_live_is_finished_by_the_next_build(
    live_index: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "good"
    (docs / "beta.md").write_text(
        "# Beta\n\n## Harbour\n\nThe harbour master rings the bell.\n", encoding="utf-8"
    )
    new = tmp_path / "new"
    _build(docs, new)
    published = json.loads((new / "metadata.json").read_text(encoding="utf-8"))
    published_chunks = _chunks(new)
    # killed between the table's rename and metadata.json's: the new table beside the old metadata
    (live_index / ".lancedb").rename(live_index / ".lancedb.old")
    (new / ".lancedb").rename(live_index / ".lancedb")
    (live_index / ".lancedb.work").mkdir()
    (new / "chunks.json").rename(live_index / ".lancedb.work" / "chunks.json.tmp")
    (new / "metadata.json").rename(live_index / "metadata.json.tmp")
    left = sorted(p for p in live_index.rglob("*"))
    # what a server started now serves, and the repair below moves into place (reading only)
    assert live_files(live_index) == LiveFiles(
        metadata="metadata.json.tmp", chunks=".lancedb.work/chunks.json.tmp"
    )
    assert sorted(p for p in live_index.rglob("*")) == left
    recover_interrupted_swap(live_index)
    assert live_files(live_index) == LiveFiles()
    assert sorted(p.name for p in live_index.iterdir()) == [".lancedb", "chunks.json", "metadata.json"]
    assert json.loads((live_index / "metadata.json").read_text(encoding="utf-8")) == published
    assert _chunks(live_index) == published_chunks
    # the build rerun after the crash keeps beta.md's title (it reuses the titles metadata.json gives)
    _build(docs, live_index)
    files = json.loads((live_index / "metadata.json").read_text(encoding="utf-8"))["files"]
    assert files["beta.md"] == {"title": "Beta"}


def test_a_build_that_waited_for_the_lock_keeps_the_index_another_build_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docs_mcp_core.build import output
    from docs_mcp_core.index.lock import acquire_build_lock as take_lock

    good = _write(tmp_path / "good", {"alpha.md": "# Alpha\n\n## Lighthouse\n\nThe keeper trims the wick.\n"})
    bad = _write(tmp_path / "bad", {"bad.md": "---\ntitle: [unclosed\n---\n# Bad\n"})
    out = tmp_path / "out"

    def another_build_first(*args: Any, **kwargs: Any) -> Any:
        # this build found no --out; another one creates it and publishes before this one gets the lock
        monkeypatch.setattr(output, "acquire_build_lock", take_lock)
        _build(good, out)
        return take_lock(*args, **kwargs)

    monkeypatch.setattr(output, "acquire_build_lock", another_build_first)
    with pytest.raises(CorpusInvalidError):
        _build(bad, out, wait_for_lock=True)
    assert _hit_ids(out, "lighthouse") == ["alpha.md#alpha/lighthouse"]


def test_a_held_lock_whose_record_is_nested_past_the_recursion_limit_still_names_a_build(
    tmp_path: Path,
) -> None:
    # the record was read with json.loads: "failed unexpectedly: RecursionError" instead of the refusal
    import fcntl
    import os

    from docs_mcp_core.errors import BuildLockedError
    from docs_mcp_core.index.lock import LOCK_FILENAME, acquire_build_lock

    (tmp_path / LOCK_FILENAME).write_text("[" * 4096, encoding="utf-8")
    holder = os.open(tmp_path / LOCK_FILENAME, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another open file: this process's build is refused too
        with pytest.raises(BuildLockedError, match=r"^another build \(another build\) is writing to "):
            acquire_build_lock(tmp_path)
    finally:
        os.close(holder)


# ── embeddings ─────────────────────────────────────────────────────────────────────────────────


def test_an_embedding_cache_meta_nested_past_the_recursion_limit_is_a_cache_given_up(tmp_path: Path) -> None:
    # the build stopped with "failed unexpectedly: RecursionError" (its cache check read it with json.loads)
    from tests.support.hostile_json import TOO_DEEP

    docs = _write(tmp_path / "docs", {"alpha.md": "# Alpha\n\n## Lighthouse\n\nThe keeper trims the wick.\n"})
    out = tmp_path / "out"
    first = _build(docs, out, embedding=EmbeddingOptions(provider="hash"))
    (out / ".embedding-cache" / "cache-meta.json").write_text(TOO_DEEP, encoding="utf-8")
    again = _build(docs, out, embedding=EmbeddingOptions(provider="hash"))
    assert (again.embedding_misses, again.embedding_hits) == (first.chunks, 0)
    assert _hit_ids(out, "lighthouse")[0] == "alpha.md#alpha/lighthouse"


def test_hash_embeddings_add_a_vector_column_and_a_vector_leg(
    tmp_path: Path, examples_docs: Path, built_index: Path
) -> None:
    import lancedb
    import pyarrow as pa

    out = tmp_path / "out"
    summary = _build(examples_docs, out, embedding=EmbeddingOptions(provider="hash"))
    assert summary.embedding_misses == summary.chunks and summary.embedding_hits == 0
    schema = lancedb.connect(str(out / ".lancedb")).open_table("chunks").schema
    assert schema.field("vector").type == pa.list_(pa.float32(), 256)
    meta = json.loads((out / "metadata.json").read_text(encoding="utf-8"))
    assert meta["embedding"] == {"provider": "hash", "model": "hash-v1", "dimensions": 256}
    assert (out / ".embedding-cache").is_dir()

    engine = SearchEngine.open(out, options=SearchOptions(ranking="original"))
    assert engine.vector_search_enabled
    # nothing matches lexically, so every hit comes from the vector leg alone (RRF 1/(60+rank));
    # the language filter turns collapse off, so the ranks are consecutive
    hits = engine.search(NO_MATCH_QUERY, limit=3, filters={"language": "go"}).hits
    assert [h.score for h in hits] == [round(1 / 61, 6), round(1 / 62, 6), round(1 / 63, 6)]
    assert SearchEngine.open(out).search(NO_MATCH_QUERY, limit=3).hits  # default ranking too

    # a lexical-only index finds nothing for the same query
    lexical = built_index
    assert not SearchEngine.open(lexical).vector_search_enabled
    assert SearchEngine.open(lexical).search(NO_MATCH_QUERY).hits == []

    # a rebuild embeds nothing again
    again = _build(examples_docs, out, embedding=EmbeddingOptions(provider="hash"))
    assert (again.embedding_hits, again.embedding_misses) == (summary.chunks, 0)


# ── derived search columns carried over by rebuilds ────────────────────────────────────────────


def _table_rows(out: Path, columns: list[str]) -> dict[str, dict[str, Any]]:
    from docs_mcp_core.index.lancedb_import import import_lancedb

    table = import_lancedb().connect(str(out / ".lancedb")).open_table("chunks")
    data = table.search().select(["chunk_id", *columns]).limit(None).to_arrow().to_pylist()
    return {row["chunk_id"]: row for row in data}


def _set_search_text(out: Path, chunk_id: str, value: str) -> None:
    from docs_mcp_core.index.lancedb_import import import_lancedb

    table = import_lancedb().connect(str(out / ".lancedb")).open_table("chunks")
    table.update(where=f"chunk_id = '{chunk_id}'", values={"search_text": value})


def test_a_rebuild_copies_the_derived_columns_of_unchanged_files_only(
    tmp_path: Path, examples_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    docs = _copy_examples(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    _build(docs, out)
    chunks = _chunks(out)
    kept, edited = chunks[0], next(c for c in chunks if c["filepath"] != chunks[0]["filepath"])
    # a marker only a copy from the previous table can carry into the next one
    _set_search_text(out, kept["chunk_id"], "MARKER kept")
    _set_search_text(out, edited["chunk_id"], "MARKER edited")
    path = docs / edited["filepath"]
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more paragraph.\n", encoding="utf-8")

    _build(docs, out)
    rows = _table_rows(out, ["search_text"])
    assert rows[kept["chunk_id"]]["search_text"] == "MARKER kept"  # copied: the file did not change
    assert "MARKER" not in rows[edited["chunk_id"]]["search_text"]  # recomputed: the file changed

    _set_search_text(out, kept["chunk_id"], "MARKER kept")
    monkeypatch.setattr(index_table, "DERIVATION_VERSION", "derived-differently")
    _build(docs, out)  # the previous table was derived by another version: nothing is copied
    assert "MARKER" not in _table_rows(out, ["search_text"])[kept["chunk_id"]]["search_text"]


def test_a_rebuild_chunks_every_file_again_after_the_chunking_changed(
    tmp_path: Path, examples_docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's chunks are reused only from a table chunked the same way: a new release that reads
    the same markdown differently (another content_text, heading or id) must not keep the old
    reading of the files that did not change, or a rebuild would differ from a fresh build."""
    from docs_mcp_core.index import table as index_table
    from docs_mcp_core.index.lancedb_import import import_lancedb

    docs = _copy_examples(examples_docs, tmp_path / "docs")
    out = tmp_path / "out"
    _build(docs, out)
    kept = _chunks(out)[0]["chunk_id"]
    table = import_lancedb().connect(str(out / ".lancedb")).open_table("chunks")
    table.update(where=f"chunk_id = '{kept}'", values={"content_text": "MARKER as read before"})

    summary = _build(docs, out)  # the same chunking: the unchanged files' chunks are taken over
    assert summary.cached_files == summary.files
    assert _table_rows(out, ["content_text"])[kept]["content_text"] == "MARKER as read before"

    monkeypatch.setattr(index_table, "CHUNKING_VERSION", "chunked-differently")
    summary = _build(docs, out)
    assert summary.cached_files == 0
    assert "MARKER" not in _table_rows(out, ["content_text"])[kept]["content_text"]


def test_a_rebuild_writes_the_same_table_as_a_fresh_build(tmp_path: Path, examples_docs: Path) -> None:
    from docs_mcp_core.index.table import DERIVED_COLUMNS, PRIOR_COLUMN

    docs = _copy_examples(examples_docs, tmp_path / "docs")
    incremental, fresh = tmp_path / "incremental", tmp_path / "fresh"
    _build(docs, incremental)
    first = sorted(p for p in docs.rglob("*.md"))[0]
    first.write_text(first.read_text(encoding="utf-8") + "\nAn edit.\n", encoding="utf-8")
    summary = _build(docs, incremental)
    assert summary.cached_files == summary.files - 1
    _build(docs, fresh)
    columns = [*DERIVED_COLUMNS, PRIOR_COLUMN]
    assert _table_rows(incremental, columns) == _table_rows(fresh, columns)


def test_the_derivation_of_the_search_columns_is_pinned() -> None:
    """A change to expand_identifiers, path_words (and the titles it is given), chunk_spellings, the plain
    text or the digest must bump
    DERIVATION_VERSION, so that
    rebuilds stop copying columns derived the old way; then update the digest below."""
    from docs_mcp_core.chunking import Chunk
    from docs_mcp_core.index.table import DERIVATION_VERSION
    from docs_mcp_core.ranking import derived_search_columns

    samples = [
        (
            "sdks/dub/python/docs/sdks/links/README.md",
            "createMany",
            "Links > createMany",
            "Call `dub.links.create_many()` with HTTPError, getUserByID and x86_64 in it.",
        ),
        (
            "guides/retries.md",
            "Retry configuration in each SDK",
            "Retries > Retry configuration",
            'RetryConfig("backoff", BackoffStrategy(500, 60000, 1.5, 3600000), False)',
        ),
        ("docs/ünïcode/日本語.md", "", "", "Café naïve résumé; snake_case, kebab-case, PascalCase, v2"),
        (
            "reference/cli/uv-sync.md",
            "[`cache-dir`](#cache-dir) {: #cache-dir }",
            "uv sync",
            '<dl><dt id="uv-sync--frozen"><a href="#uv-sync--frozen"><code>--frozen</code></a></dt></dl>',
        ),
        (
            "reference/settings.md",
            "[`package`](#package) {: #package }",
            "Settings > package",
            '### [`package`](#package) {: #package }\n<span id="managed"></span> Whether to build it.',
        ),
        (
            "reference/environment.md",
            "UV_NO_CACHE",
            "Environment variables > UV_NO_CACHE",
            "Avoid the cache.",
        ),
    ]
    derived = [
        derived_search_columns(
            Chunk(
                chunk_id=f"{path}#x",
                filepath=path,
                heading=heading,
                heading_level=2,
                content=text,
                content_text=text,
                breadcrumb=crumbs,
                chunk_index=0,
            )
        )
        for path, heading, crumbs, text in samples
    ]
    titled = Chunk(
        "versioning.md#channels",
        "versioning.md",
        "Channels",
        2,
        "Tags.",
        "Tags.",
        "versioning.md > Channels",
        0,
    )
    derived.append(derived_search_columns(titled, "Release management"))
    options = Chunk(
        "cli/add.md#options", "cli/add.md", "Options", 2, "### --save-dev, -D", "", "cli/add.md > Options", 0
    )
    derived.append(derived_search_columns(options, "tool add <pkg>"))
    heading = '<a name="format"></a> Format the output (-f, --filter)'
    examples = Chunk(
        "commandline/container_ls.md#ps/examples/x",
        "commandline/container_ls.md",
        heading,
        3,
        f"### {heading}\n\nUse `docker ps --format json`.",
        "",
        f"commandline/container_ls.md > ps > Examples > {heading}",
        0,
    )
    derived.append(derived_search_columns(examples))
    derived.append(derived_search_columns(examples, None, ("docker container list", "docker ps", "ls")))
    derived.append(derived_search_columns(examples, None, (), {"format": ["--format", "--f"]}))
    digest = hashlib.sha256(json.dumps(derived, ensure_ascii=False).encode("utf-8")).hexdigest()
    assert (DERIVATION_VERSION, digest) == ("13", PINNED_DERIVATION_DIGEST)


PINNED_DERIVATION_DIGEST = "c38e214df5d0ff18fc3f1c27088c7bc18e478f02fd350bb06cc6d307b6c4c7b3"
