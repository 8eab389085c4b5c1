"""``docs-mcp-eval benchmark`` end to end: one build and one stdio server per provider.

``fake_build.py`` stands in for ``docs-mcp build`` (it writes the index the fake server reads with
``--index-dir``); provider ``hash`` gets rankings whose first two ids are swapped, so its column differs:
MRR@5 (1 + 1 + 1/3 + 0) / 4 = 0.5833 against 0.4583 for ``none``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs_mcp_eval.formatting import to_fixed
from tests.support.eval_cli import FAKE_CASES, CliRunner, fake_build_command, fake_server_command


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "a.md").write_text("# A\n\n" + "word " * 200, encoding="utf-8")
    (root / "b.md").write_text("# B\n", encoding="utf-8")
    (root / "notes.txt").write_text("not markdown " * 100, encoding="utf-8")
    return root


def bench_args(docs: Path, work: Path, embeddings: str, *extra: str) -> list[str]:
    return [
        "benchmark",
        "--cases",
        str(FAKE_CASES),
        "--docs-dir",
        str(docs),
        "--work-dir",
        str(work),
        "--embeddings",
        embeddings,
        "--build-command",
        fake_build_command("build"),
        "--server-command",
        fake_server_command(),
        "--warmup-queries",
        "2",
        *extra,
    ]


@pytest.mark.integration
def test_benchmark_compares_providers(
    run_cli: CliRunner, docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    work, out = tmp_path / "work", tmp_path / "bench.json"
    result = run_cli(bench_args(docs, work, "none,hash,openai/text-embedding-3-small", "--out", str(out)))
    assert result.code == 0, result.err
    assert 'Skipping "openai/text-embedding-3-small": OPENAI_API_KEY not set' in result.err
    assert (work / "none" / "fake-index.json").is_file()
    assert (work / "hash" / "fake-index.json").is_file()
    assert not (work / "openai").exists()

    corpus = sum(p.stat().st_size for p in docs.rglob("*.md"))
    lines = result.out.splitlines()
    assert lines[:5] == ["", "## Summary", "", "| Metric | none | hash |", "| --- | ---: | ---: |"]
    assert "| MRR@5 | 0.4583 | 0.5833 |" in lines
    assert "| Facet Precision | 0.7500 | 0.7500 |" in lines
    assert f"| Index Size (corpus {round(corpus / 1024)}KB) | 1KB | 4KB |" in lines
    assert "| Embed Cost (est.) | $0 | $0 |" in lines
    assert "| Filter Leak Rate | 0.0000 | 0.0000 |" in lines
    facet = result.out.split("## Per-Category Facet Precision\n\n")[1].split("\n\n")[0].splitlines()
    assert facet == [
        "| Category | none | hash |",
        "| --- | ---: | ---: |",
        "| exact-name | 1.0000 | 1.0000 |",
        "| uncategorized | 0.0000 | 0.0000 |",
        "| workflow | 1.0000 | 1.0000 |",
    ]
    mrr = result.out.split("## Per-Category MRR@5\n\n")[1].strip().splitlines()
    assert mrr[2:] == [
        "| exact-name | 0.7500 | 1.0000 |",
        "| uncategorized | 0.0000 | 0.0000 |",
        "| workflow | 0.3333 | 0.3333 |",
    ]

    data = json.loads(out.read_text(encoding="utf-8"))
    assert [e["embedding"]["label"] for e in data["embeddings"]] == ["none", "hash"]
    none, hashed = data["embeddings"]
    assert none["corpusSizeBytes"] == corpus
    assert hashed["indexSizeBytes"] == (work / "hash" / "fake-index.json").stat().st_size + 4096
    assert hashed["indexSizeMultiple"] == pytest.approx(hashed["indexSizeBytes"] / corpus)
    assert none["output"]["summary"]["mrrAt5"] == 0.458333
    assert hashed["output"]["summary"]["mrrAt5"] == 0.583333
    assert none["output"]["summary"]["buildTimeMs"] > 0
    assert none["output"]["summary"]["peakRssMb"] > 0
    assert none["output"]["metadata"]["provider"] == "none"
    assert data["skipped"] == [{"label": "openai/text-embedding-3-small", "reason": "OPENAI_API_KEY not set"}]
    assert "fake build wrote" not in result.out


@pytest.mark.integration
def test_openai_runs_with_a_key_and_gets_cost_estimates(
    run_cli: CliRunner, docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used-by-the-fake")
    result = run_cli(bench_args(docs, tmp_path / "work", "openai/text-embedding-3-large"))
    assert result.code == 0, result.err
    corpus = sum(p.stat().st_size for p in docs.rglob("*.md"))
    cost = corpus / 4 / 1_000_000 * 0.13
    assert f"| Embed Cost (est.) | ${to_fixed(cost, 4)} |" in result.out
    assert "| Query Cost (est.) | $0.000003 |" in result.out
    # A slash in the label nests the output folder, as in the original.
    assert (tmp_path / "work" / "openai" / "text-embedding-3-large" / "fake-index.json").is_file()


@pytest.mark.integration
def test_a_failing_provider_is_reported_and_the_others_still_run(
    run_cli: CliRunner, docs: Path, tmp_path: Path
) -> None:
    args = bench_args(docs, tmp_path / "work", "hash,none")
    args[args.index("--build-command") + 1] = fake_build_command("build", "--fail-for", "hash")
    result = run_cli(args)
    assert result.code == 1
    assert '"hash" failed: Build command failed with exit code 2' in result.err
    assert "| Metric | none |" in result.out


def test_nothing_to_report(
    run_cli: CliRunner, docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = run_cli(bench_args(docs, tmp_path / "work", "openai"))
    assert result.code == 0
    assert result.out == "\nNo benchmark results available.\n"


def test_missing_docs_dir(run_cli: CliRunner, tmp_path: Path) -> None:
    result = run_cli(bench_args(tmp_path / "nope", tmp_path / "work", "none"))
    assert result.code == 1
    assert "is not a directory" in result.err


@pytest.mark.integration
def test_benchmark_builds_into_and_serves_from_an_object_store(
    run_cli: CliRunner, examples_docs: Path, tmp_path: Path
) -> None:
    """The real build and server, publishing to and reading ``s3://`` (moto on 127.0.0.1), configured
    by ``--storage-option`` flags alone."""
    from docs_mcp_core.metadata import read_metadata
    from tests.fakes.s3_server import s3_server
    from tests.support.paths import REPO_ROOT

    with s3_server() as s3:
        s3.create_bucket("docs-mcp-eval-tests")
        flags = [x for k, v in s3.storage_options().items() for x in ("--storage-option", f"{k}={v}")]
        out = tmp_path / "bench.json"
        result = run_cli(
            [
                "benchmark",
                "--cases",
                str(REPO_ROOT / "tests" / "eval" / "cases" / "examples-cases.json"),
                "--docs-dir",
                str(examples_docs),
                "--work-dir",
                "s3://docs-mcp-eval-tests/bench/",
                "--embeddings",
                "none",
                "--warmup-queries",
                "1",
                "--out",
                str(out),
                *flags,
            ]
        )
        assert result.code == 0, result.err
        published = read_metadata("s3://docs-mcp-eval-tests/bench/none", storage_options=s3.storage_options())
        assert published.stats.total_chunks > 0
    entry = json.loads(out.read_text(encoding="utf-8"))["embeddings"][0]
    assert entry["indexSizeBytes"] > 0
    assert entry["output"]["summary"]["mrrAt5"] > 0.5


def test_benchmark_refuses_a_work_dir_of_another_scheme(run_cli: CliRunner, docs: Path) -> None:
    result = run_cli([*bench_args(docs, Path("x"), "none")[:6], "ftp://host/x", "--embeddings", "none"])
    assert result.code == 1
    assert (
        "--work-dir 'ftp://host/x': use a folder or an object-store prefix s3://bucket/prefix" in result.err
    )
