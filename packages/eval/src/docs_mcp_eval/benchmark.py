"""Comparing embedding providers on one corpus: build an index per provider, run the suite on each.

For every spec of ``--embeddings`` (``headings``, ``none``, ``local``, ``hash``, ``openai/<model>``; the label
is the spec as written) the benchmark builds ``<work-dir>/<label>`` with the project's CLI::

    docs-mcp build --docs-dir DIR --out WORK/<label> --embedding-provider P [--embedding-model M]

serves it with ``docs-mcp-server --index-dir WORK/<label>`` over stdio, runs the eval cases (with warm-up
queries), and records the corpus size (``*.md`` bytes), the index size (the whole output folder) and
the provider's price per million tokens, from which the report estimates embedding and query costs.
An ``openai`` spec without ``OPENAI_API_KEY`` is skipped with a message; a provider whose build or run
fails is reported and the others still run.

``--work-dir`` may also be an object-store prefix (``s3://bucket/prefix``): each index is then
published to ``s3://bucket/prefix/<label>`` and served from there, with the same ``--storage-option``
flags given to the build and the server (and the index size is that of the published generation).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from docs_mcp_eval.cases import EvalCase
from docs_mcp_eval.errors import EvalError
from docs_mcp_eval.results import CategoryBreakdown, EvalResult
from docs_mcp_eval.runner import DEFAULT_WARMUP_QUERIES, CommandSpec, ProgressCallback, RunConfig, run_eval

DEFAULT_EMBEDDINGS = "none,openai/text-embedding-3-large"
DEFAULT_OPENAI_MODEL = "text-embedding-3-large"
OPENAI_KEY_ENV = "OPENAI_API_KEY"

COST_PER_MILLION_TOKENS: Mapping[str, float] = {
    "text-embedding-3-large": 0.13,
    "text-embedding-3-small": 0.02,
    "text-embedding-ada-002": 0.1,
}
"""USD per million input tokens of the OpenAI embedding models (others count as free)."""

CHARS_PER_TOKEN = 4
"""Rough characters per token of English text, used for the embedding cost estimate."""

QUERY_TOKENS = 20
"""Assumed tokens per search query, used for the query cost estimate."""


@dataclass(frozen=True)
class EmbeddingSpec:
    """One column of the benchmark: a provider and optional model, labelled as the user wrote it."""

    provider: str
    model: str | None
    label: str

    @classmethod
    def parse(cls, raw: str) -> EmbeddingSpec:
        text = raw.strip()
        provider, sep, model = text.partition("/")
        return cls(provider=provider, model=model if sep else None, label=text)

    @property
    def cost_per_million_tokens(self) -> float:
        if self.provider != "openai":
            return 0.0
        return COST_PER_MILLION_TOKENS.get(self.model or DEFAULT_OPENAI_MODEL, 0.0)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"provider": self.provider}
        if self.model is not None:
            data["model"] = self.model
        data["label"] = self.label
        return data


def parse_embedding_specs(raw: str) -> list[EmbeddingSpec]:
    """Split a comma-separated ``--embeddings`` value; blank entries are dropped."""
    specs = [EmbeddingSpec.parse(part) for part in raw.split(",")]
    specs = [spec for spec in specs if spec.provider]
    if not specs:
        raise EvalError(f"--embeddings {raw!r} names no provider (expected e.g. 'none,local,openai/MODEL')")
    return specs


def default_command(name: str) -> str:
    """``name`` as installed next to the running Python (a venv's bin), else on PATH, else bare."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    return found or name


def is_remote(work_dir: Path | str) -> bool:
    """Whether ``work_dir`` is an object-store URI (``s3://bucket/prefix``) rather than a folder."""
    return isinstance(work_dir, str) and "://" in work_dir


def index_location(work_dir: Path | str, label: str) -> str:
    """Where the index of ``label`` is built and served: ``<work-dir>/<label>``."""
    if is_remote(work_dir):
        return f"{str(work_dir).rstrip('/')}/{label}"
    return str(Path(work_dir) / label)


def remote_index_size(uri: str, storage_options: Sequence[str]) -> int:
    """Bytes of the generation published at ``uri`` (0 when docs-mcp-core is not installed here)."""
    try:
        from docs_mcp_core.index.location import open_storage, parse_storage_option
        from docs_mcp_core.metadata import read_metadata
    except ImportError:
        return 0
    options = dict(parse_storage_option(item) for item in storage_options) or None
    try:
        path = read_metadata(uri, storage_options=options).index.path
        return open_storage(uri, options).size(path)
    except Exception:  # noqa: BLE001 - the size is informative; the run itself succeeded
        return 0


@dataclass(frozen=True, kw_only=True)
class BenchmarkConfig:
    docs_dir: Path
    work_dir: Path | str  # a folder, or an object-store prefix such as s3://bucket/prefix
    embeddings: Sequence[EmbeddingSpec]
    build_command: CommandSpec
    """The build program without per-provider flags, e.g. ``docs-mcp build``."""
    server_command: CommandSpec
    """The server program without ``--index-dir``, e.g. ``docs-mcp-server``."""
    warmup_queries: int = DEFAULT_WARMUP_QUERIES
    tool_prefix: str | None = None
    startup_timeout_s: float = 60.0
    request_timeout_s: float = 120.0
    build_timeout_s: float | None = None
    storage_options: Sequence[
        str
    ] = ()  # KEY=VALUE items given to the build and the server as --storage-option


@dataclass(kw_only=True)
class BenchmarkEntry:
    """The measurements of one provider."""

    embedding: EmbeddingSpec
    output: EvalResult
    category_breakdown: list[CategoryBreakdown]
    corpus_size_bytes: int
    index_size_bytes: int
    index_size_multiple: float
    cost_per_million_tokens: float

    def to_json(self) -> dict[str, Any]:
        return {
            "embedding": self.embedding.to_json(),
            "output": self.output.to_json(),
            "categoryBreakdown": [row.to_json() for row in self.category_breakdown],
            "corpusSizeBytes": self.corpus_size_bytes,
            "indexSizeBytes": self.index_size_bytes,
            "indexSizeMultiple": self.index_size_multiple,
            "costPerMillionTokens": self.cost_per_million_tokens,
        }


@dataclass(kw_only=True)
class BenchmarkResult:
    embeddings: list[BenchmarkEntry] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "embeddings": [entry.to_json() for entry in self.embeddings],
            "skipped": list(self.skipped),
            "failed": list(self.failed),
        }


def measure_dir_size(root: Path, suffix: str | None = None) -> int:
    """Total bytes of the regular files under ``root`` (only names ending in ``suffix`` if given)."""
    total = 0
    if not root.is_dir():
        return 0
    for path in root.rglob("*"):
        if suffix is not None and not path.name.endswith(suffix):
            continue
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:
            continue
    return total


def run_benchmark(
    config: BenchmarkConfig,
    cases: Sequence[EvalCase],
    *,
    log: Callable[[str], None],
    progress_for: Callable[[str], ProgressCallback | None] | None = None,
) -> BenchmarkResult:
    """Build, serve and evaluate each provider in turn; ``log`` receives human-readable status lines."""
    result = BenchmarkResult()
    corpus_bytes = measure_dir_size(config.docs_dir, ".md")
    for spec in config.embeddings:
        if spec.provider == "openai" and not os.environ.get(OPENAI_KEY_ENV):
            log(f'Skipping "{spec.label}": {OPENAI_KEY_ENV} not set')
            result.skipped.append({"label": spec.label, "reason": f"{OPENAI_KEY_ENV} not set"})
            continue
        log(f"--- Running benchmark: {spec.label} ---")
        out = index_location(config.work_dir, spec.label)
        storage_flags = [flag for item in config.storage_options for flag in ("--storage-option", item)]
        build_args = [
            "--docs-dir",
            str(config.docs_dir),
            "--out",
            out,
            "--embedding-provider",
            spec.provider,
            *storage_flags,
        ]
        if spec.model:
            build_args += ["--embedding-model", spec.model]
        run_config = RunConfig(
            server=replace(
                config.server_command, args=(*config.server_command.args, "--index-dir", out, *storage_flags)
            ),
            build=replace(config.build_command, args=(*config.build_command.args, *build_args)),
            tool_prefix=config.tool_prefix,
            warmup_queries=config.warmup_queries,
            startup_timeout_s=config.startup_timeout_s,
            request_timeout_s=config.request_timeout_s,
            build_timeout_s=config.build_timeout_s,
        )
        try:
            output = run_eval(run_config, cases, progress_for(spec.label) if progress_for else None)
        except EvalError as exc:
            log(f'"{spec.label}" failed: {exc}')
            result.failed.append({"label": spec.label, "error": str(exc)})
            continue
        output.metadata["provider"] = spec.provider
        output.metadata["model"] = spec.model
        if is_remote(config.work_dir):
            index_bytes = remote_index_size(out, config.storage_options)
        else:
            index_bytes = measure_dir_size(Path(out))
        result.embeddings.append(
            BenchmarkEntry(
                embedding=spec,
                output=output,
                category_breakdown=list(output.category_breakdown),
                corpus_size_bytes=corpus_bytes,
                index_size_bytes=index_bytes,
                index_size_multiple=index_bytes / corpus_bytes if corpus_bytes > 0 else 0.0,
                cost_per_million_tokens=spec.cost_per_million_tokens,
            )
        )
        log(f'"{spec.label}" complete')
    return result
