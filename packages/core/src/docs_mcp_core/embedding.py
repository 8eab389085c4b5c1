"""Embedding providers: how chunk text becomes the vectors behind the semantic leg of search.

Four providers exist, chosen by name with :func:`create_embedding_provider`:

``none``
    No vectors; the index is lexical only.
``hash``
    A deterministic, dependency-free fake that folds the UTF-8 bytes of a text into a unit vector.
    It has no semantic value; it exists so that builds and tests can exercise the vector code paths
    offline. The algorithm is the original docs-mcp's, bit for bit.
``local``
    all-MiniLM-L6-v2 shipped inside docs-mcp-core and run on the CPU with ONNX Runtime: real
    semantic vectors with no API key and no network (see :mod:`docs_mcp_core.local_embedding`).
``openai``
    OpenAI's embeddings API through the ``openai`` SDK. Requests are batched and several batches are
    in flight at once; 429s, 5xx answers, timeouts and connection failures are retried with
    exponential backoff that honours ``Retry-After``. Every input is measured with the model's own
    tokenizer and cut at the model's context window (one warning per cut input, naming its
    breadcrumb), and each request also stays under the API's per-request token budget. Very large
    jobs (``batch_api_threshold`` inputs or more) go through the Batch API instead: the JSONL
    request file is uploaded once, and a rerun with identical inputs resumes the batch already
    submitted (matched by the SHA-256 of the file) instead of paying for it twice.

Every provider exposes a :meth:`~EmbeddingProvider.config_fingerprint` that changes whenever the
vectors it would produce could change; the embedding cache is keyed by it. Build runs
:func:`check_embedding_provider` before writing anything so a bad key, an unknown model or a
dimension mismatch fails fast with a clear message.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np

from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.tokens import count_tokens, embedding_token_limit, token_upper_bound, truncate_to_tokens

if TYPE_CHECKING:
    import openai

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "PROVIDER_NAMES",
    "EmbedProgress",
    "EmbeddingProvider",
    "HashEmbeddingProvider",
    "NoneEmbeddingProvider",
    "OpenAIEmbeddingProvider",
    "OpenAIRequestError",
    "check_embedding_provider",
    "compute_config_fingerprint",
    "create_embedding_provider",
    "format_duration",
    "hash_to_unit_vector",
    "sha256hex",
    "to_embedding_input",
]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

PROVIDER_NAMES: tuple[str, ...] = ("none", "hash", "local", "openai")
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

OPENAI_DEFAULT_DIMENSIONS: dict[str, int] = {
    "text-embedding-3-large": 3072,
    "text-embedding-3-small": 1536,
    "text-embedding-ada-002": 1536,
}
OPENAI_COST_PER_MILLION_TOKENS: dict[str, float] = {
    "text-embedding-3-large": 0.13,
    "text-embedding-3-small": 0.02,
    "text-embedding-ada-002": 0.10,
}
# Models that reject the `dimensions` request field (it only exists from text-embedding-3 on).
_MODELS_WITHOUT_DIMENSIONS_PARAM = frozenset({"text-embedding-ada-002"})

MAX_INPUTS_PER_REQUEST = 2048  # OpenAI: at most 2,048 inputs per embeddings request
MAX_TOKENS_PER_REQUEST = 300_000  # OpenAI: at most 300,000 tokens summed over one request
MAX_REQUESTS_PER_BATCH = 50_000  # OpenAI Batch API: at most 50,000 requests per batch file
MAX_BATCH_FILE_BYTES = 190 * 1024 * 1024  # OpenAI Batch API: input files up to 200 MB
DEFAULT_BATCH_POLL_INTERVALS: tuple[float, ...] = (10.0, 10.0, 10.0, 30.0, 30.0, 60.0)
DEFAULT_BATCH_MAX_WAIT = 2 * 60 * 60.0
PREFLIGHT_INPUT = "docs-mcp embedding preflight"

_BATCH_TERMINAL_FAILURES = frozenset({"failed", "expired", "cancelled", "cancelling"})


# --------------------------------------------------------------------------------------------------
# Shared helpers


def sha256hex(text: str) -> str:
    """Hex SHA-256 of the UTF-8 encoding of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compute_config_fingerprint(fields: Mapping[str, str | int]) -> str:
    """SHA-256 over the ``key=value`` pairs sorted by key, joined with NUL.

    Keys sort case-insensitively, then by code point (for the keys used here this is the order the
    original's ``localeCompare`` gives, so fingerprints, and therefore caches, are interchangeable).
    """
    keys = sorted(fields, key=lambda k: (k.casefold(), k))
    return sha256hex("\0".join(f"{k}={fields[k]}" for k in keys))


def to_embedding_input(breadcrumb: str, content_text: str) -> str:
    """The exact text sent to an embedding model for one chunk (also what the cache keys on)."""
    return f"Context: {breadcrumb}\n\nContent:\n{content_text}"


def _source_of(text: str) -> str:
    """The breadcrumb of an embedding input built by :func:`to_embedding_input`, for warnings."""
    if text.startswith("Context: "):
        line = text[len("Context: ") :].split("\n", 1)[0]
        if line:
            return line
    return "unknown"


def format_duration(seconds: float) -> str:
    """``42s``, ``3m`` or ``3m5s``, as the original prints batch ETAs."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    minutes, secs = divmod(total, 60)
    return f"{minutes}m{secs}s" if secs else f"{minutes}m"


def hash_to_unit_vector(text: str, dimensions: int) -> list[float]:
    """The ``hash`` provider's vector: UTF-8 byte ``i`` is added to bucket ``i % dimensions`` (negated
    for odd ``i``), then the vector is L2-normalised; an all-zero vector is returned as is.

    Every intermediate value is an exact integer in float64, so the result is bit-identical to the
    original's JavaScript implementation.
    """
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.float64)
    data[1::2] *= -1.0
    buckets = np.arange(data.size) % dimensions
    vector = np.bincount(buckets, weights=data, minlength=dimensions)
    norm = math.sqrt(float(np.dot(vector, vector)))
    if norm == 0.0:
        return vector.tolist()
    return (vector / norm).tolist()


@dataclass(frozen=True)
class EmbedProgress:
    """A progress report from a provider or from :func:`docs_mcp_core.embedding_cache.embed_with_cache`.

    ``done``/``total`` count inputs. In the ``batch-polling`` phase they are the Batch API's
    completed/total request counts, ``eta_seconds`` is set once a completion rate can be measured,
    and ``message`` is a ready-to-print status line.
    """

    phase: Literal["embedding", "batch-uploading", "batch-polling", "batch-downloading"]
    done: int
    total: int
    cached: int = 0
    failed: int = 0
    message: str = ""
    elapsed_seconds: float | None = None
    next_poll_seconds: float | None = None
    eta_seconds: float | None = None


ProgressCallback = Callable[[EmbedProgress], None]
WarningCallback = Callable[[str], None]


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What the build, the cache and the search engine need from an embedding backend."""

    name: str
    model: str
    dimensions: int
    cost_per_million_tokens: float

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order. Thread-safe. Raises :class:`EmbeddingError`."""
        ...

    def config_fingerprint(self) -> str:
        """Changes whenever the vectors this provider returns for the same text could change."""
        ...


# --------------------------------------------------------------------------------------------------
# none / hash


class NoneEmbeddingProvider:
    """No embeddings: the index is lexical only and the build skips embedding entirely."""

    name = "none"
    model = "none"
    dimensions = 0
    cost_per_million_tokens = 0.0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[] for _ in texts]

    def config_fingerprint(self) -> str:
        return compute_config_fingerprint({"provider": "none", "model": "none", "dimensions": 0})


class HashEmbeddingProvider:
    """Deterministic byte-folding vectors (see :func:`hash_to_unit_vector`); offline, no semantics."""

    name = "hash"
    cost_per_million_tokens = 0.0

    def __init__(self, dimensions: int = 256, model: str = "hash-v1") -> None:
        if dimensions < 1:
            raise EmbeddingError(f"hash embedding dimensions must be a positive integer (got {dimensions})")
        self.dimensions = dimensions
        self.model = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [hash_to_unit_vector(text, self.dimensions) for text in texts]

    def config_fingerprint(self) -> str:
        return compute_config_fingerprint(
            {"provider": "hash", "model": self.model, "dimensions": self.dimensions}
        )


# --------------------------------------------------------------------------------------------------
# openai


class OpenAIRequestError(EmbeddingError):
    """An OpenAI API call failed for good (after any retries).

    ``status`` is the HTTP status, or ``None`` for a timeout or connection failure; ``transient`` says
    whether the failure is of a kind that may go away on its own (rate limit, 5xx, network).
    """

    def __init__(self, message: str, *, status: int | None, transient: bool) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient


def _is_retryable_status(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float:
    """Seconds the server asked us to wait: ``retry-after-ms``, or ``Retry-After`` as seconds or as an
    HTTP date. 0 when absent or unparsable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            value = float(raw_ms)
            if math.isfinite(value) and value > 0:
                return value / 1000.0
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if not raw:
        return 0.0
    try:
        seconds = float(raw)
        if math.isfinite(seconds) and seconds > 0:
            return seconds
        return 0.0
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now if now is not None else time.time()
    return max(0.0, when.timestamp() - current)


def _error_detail(body: str) -> str:
    """The ``error.message`` of an OpenAI error body, or the raw body, cut to 500 characters."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body[:500]
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:500]
    return body[:500]


def _check_range(label: str, value: int, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise EmbeddingError(f"{label} must be an integer between {low} and {high} (got {value!r})")
    return value


def _decode_vector(raw: object) -> list[float] | None:
    """An ``embedding`` field: base64 little-endian float32 (the SDK default) or a JSON float list."""
    if isinstance(raw, str):
        try:
            data = base64.b64decode(raw, validate=True)
        except ValueError:
            return None
        if len(data) % 4:
            return None
        return np.frombuffer(data, dtype="<f4").astype(np.float64).tolist()
    if isinstance(raw, list) and all(isinstance(x, int | float) and not isinstance(x, bool) for x in raw):
        return [float(x) for x in raw]
    return None


class OpenAIEmbeddingProvider:
    """OpenAI embeddings (``text-embedding-3-large`` by default, 3,072 dimensions).

    Synchronous and thread-safe; ``embed`` fans out over a thread pool of ``concurrency`` workers.
    Delays (``retry_*``), the Batch API poll schedule and the ``sleep``/``clock`` functions are
    parameters so tests can run the real HTTP exchange without waiting.
    """

    name = "openai"

    def __init__(
        self,
        api_key: str,
        model: str = "text-embedding-3-large",
        dimensions: int | None = None,
        base_url: str | None = None,
        batch_size: int = 128,
        concurrency: int = 4,
        max_retries: int = 3,
        timeout: float = 60.0,
        batch_api_threshold: int = 2500,
        batch_name: str | None = None,
        on_progress: ProgressCallback | None = None,
        on_warning: WarningCallback | None = None,
        *,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 10.0,
        retry_jitter: float = 0.25,
        max_tokens_per_request: int = MAX_TOKENS_PER_REQUEST,
        batch_poll_intervals: Sequence[float] = DEFAULT_BATCH_POLL_INTERVALS,
        batch_max_wait: float = DEFAULT_BATCH_MAX_WAIT,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not isinstance(api_key, str) or not api_key.strip():
            raise EmbeddingError("OpenAIEmbeddingProvider requires a non-empty api_key")
        if not model or not model.strip():
            raise EmbeddingError("openai embedding model must be a non-empty string")
        self._api_key = api_key.strip()
        self.model = model.strip()
        resolved_dims = (
            dimensions if dimensions is not None else OPENAI_DEFAULT_DIMENSIONS.get(self.model, 3072)
        )
        self.dimensions = _check_range("embedding dimensions", resolved_dims, 1, 65536)
        self.base_url = (base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")
        self.batch_size = _check_range("embedding batch size", batch_size, 1, MAX_INPUTS_PER_REQUEST)
        self.concurrency = _check_range("embedding concurrency", concurrency, 1, 32)
        self.max_retries = _check_range("embedding max retries", max_retries, 0, 10)
        if not timeout > 0:
            raise EmbeddingError(f"embedding request timeout must be positive (got {timeout!r})")
        self.timeout = float(timeout)
        self.batch_api_threshold = max(0, int(batch_api_threshold))
        self.batch_name = batch_name or ""
        self.cost_per_million_tokens = OPENAI_COST_PER_MILLION_TOKENS.get(self.model, 0.0)
        self.max_input_tokens = embedding_token_limit(self.model)
        self.retry_base_delay = float(retry_base_delay)
        self.retry_max_delay = float(retry_max_delay)
        self.retry_jitter = float(retry_jitter)
        self.max_tokens_per_request = int(max_tokens_per_request)
        self.batch_poll_intervals = tuple(float(x) for x in batch_poll_intervals) or (0.0,)
        self.batch_max_wait = float(batch_max_wait)
        self._on_progress = on_progress
        self._on_warning: WarningCallback = on_warning or _log.warning
        self._sleep = sleep
        self._clock = clock
        self._client: openai.OpenAI | None = None
        self._client_lock = threading.Lock()

    # -- identity ------------------------------------------------------------------------------

    def config_fingerprint(self) -> str:
        return compute_config_fingerprint(
            {
                "provider": "openai",
                "model": self.model,
                "dimensions": self.dimensions,
                "baseUrl": self.base_url,
            }
        )

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbeddingProvider(model={self.model!r}, dimensions={self.dimensions}, "
            f"base_url={self.base_url!r})"
        )

    # -- public --------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        prepared, costs = self._fit_to_window(texts)
        if self.batch_api_threshold > 0 and len(prepared) >= self.batch_api_threshold:
            return self._embed_via_batch_api(prepared)
        return self._embed_sync(prepared, costs)

    # -- input preparation ---------------------------------------------------------------------

    def _fit_to_window(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """Cut every input longer than the model's token window, warning once per cut input.

        Returns the inputs to send and an upper bound on the tokens of each.
        """
        out: list[str] = []
        costs: list[int] = []
        for text in texts:
            cost = token_upper_bound(text)
            if cost > self.max_input_tokens:
                cost = count_tokens(text)
                if cost > self.max_input_tokens:
                    self._on_warning(
                        f"Embedding input truncated from {cost} to {self.max_input_tokens} "
                        f"tokens (source: {_source_of(text)}). Consider lowering max_chunk_size in your "
                        "chunking strategy to avoid content loss."
                    )
                    text = truncate_to_tokens(text, self.max_input_tokens)
                    cost = self.max_input_tokens
            out.append(text)
            costs.append(cost)
        return out, costs

    def _request_groups(self, texts: Sequence[str], costs: Sequence[int]) -> list[tuple[int, list[str]]]:
        """Split inputs into requests of at most ``batch_size`` inputs and the per-request token budget."""
        groups: list[tuple[int, list[str]]] = []
        start = 0
        current: list[str] = []
        tokens = 0
        for i, (text, cost) in enumerate(zip(texts, costs, strict=True)):
            if current and (len(current) >= self.batch_size or tokens + cost > self.max_tokens_per_request):
                groups.append((start, current))
                start, current, tokens = i, [], 0
            current.append(text)
            tokens += cost
        if current:
            groups.append((start, current))
        return groups

    # -- sync path -----------------------------------------------------------------------------

    def _embed_sync(self, texts: list[str], costs: list[int]) -> list[list[float]]:
        groups = self._request_groups(texts, costs)
        vectors: list[list[float] | None] = [None] * len(texts)
        done = 0

        def store(offset: int, batch: list[list[float]]) -> None:
            nonlocal done
            vectors[offset : offset + len(batch)] = batch
            done += len(batch)
            if self._on_progress is not None:
                self._on_progress(EmbedProgress(phase="embedding", done=done, total=len(texts)))

        if len(groups) == 1 or self.concurrency == 1:
            for offset, group in groups:
                store(offset, self._embed_request(group))
        else:
            with ThreadPoolExecutor(
                max_workers=min(self.concurrency, len(groups)), thread_name_prefix="docs-mcp-embed"
            ) as pool:
                futures: dict[Future[list[list[float]]], int] = {
                    pool.submit(self._embed_request, group): offset for offset, group in groups
                }
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
                    for future in finished:
                        error = future.exception()
                        if error is not None:
                            for other in pending:
                                other.cancel()
                            raise error
                        store(futures[future], future.result())

        if any(v is None for v in vectors):
            raise EmbeddingError("OpenAI embeddings response was missing one or more vectors")
        return [v for v in vectors if v is not None]

    def _embed_request(self, inputs: list[str]) -> list[list[float]]:
        """One ``POST /embeddings`` (with retries), parsed and checked."""
        client = self._get_client()
        extra: dict[str, Any] = {}
        if self.model not in _MODELS_WITHOUT_DIMENSIONS_PARAM:
            extra["dimensions"] = self.dimensions

        def call() -> bytes:
            raw = client.embeddings.with_raw_response.create(
                model=self.model, input=inputs, encoding_format="base64", **extra
            )
            return raw.content

        body = self._with_retry("embeddings", call)
        try:
            payload = json.loads(body)
        except ValueError:
            preview = body[:200].decode("utf-8", errors="replace")
            raise OpenAIRequestError(
                f"OpenAI embeddings response is not valid JSON: {preview!r}", status=None, transient=False
            ) from None
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise OpenAIRequestError(
                "OpenAI embeddings response missing data array", status=None, transient=False
            )
        if len(data) != len(inputs):
            raise OpenAIRequestError(
                f"OpenAI embeddings response size mismatch: expected {len(inputs)}, got {len(data)}",
                status=None,
                transient=False,
            )
        items: list[dict[str, Any]] = [item for item in data if isinstance(item, dict)]
        try:
            items.sort(key=lambda item: int(item["index"]))
        except (KeyError, TypeError, ValueError):
            raise OpenAIRequestError(
                "OpenAI embeddings response was missing one or more vectors", status=None, transient=False
            ) from None
        vectors: list[list[float]] = []
        for item in items:
            vector = _decode_vector(item.get("embedding"))
            if vector is None:
                raise OpenAIRequestError(
                    "OpenAI embeddings response was missing one or more vectors", status=None, transient=False
                )
            self._check_dimensions(len(vector))
            vectors.append(vector)
        if len(vectors) != len(inputs) or sorted(int(i["index"]) for i in items) != list(range(len(inputs))):
            raise OpenAIRequestError(
                "OpenAI embeddings response was missing one or more vectors", status=None, transient=False
            )
        return vectors

    def _check_dimensions(self, got: int) -> None:
        if got != self.dimensions:
            raise OpenAIRequestError(
                f"embedding dimension mismatch: model '{self.model}' at {self.base_url} returned "
                f"{got}-dimensional vectors but {self.dimensions} are configured; set "
                f"--embedding-dimensions {got} (or a size the model supports)",
                status=None,
                transient=False,
            )

    # -- HTTP plumbing -------------------------------------------------------------------------

    def _get_client(self) -> openai.OpenAI:
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    import openai

                    self._client = openai.OpenAI(
                        api_key=self._api_key,
                        base_url=self.base_url,
                        max_retries=0,
                        timeout=self.timeout,
                    )
        return self._client

    def _backoff(self, attempt: int, retry_after: float) -> float:
        jitter = random.uniform(0.0, self.retry_jitter) if self.retry_jitter > 0 else 0.0
        return min(self.retry_max_delay, max(retry_after, self.retry_base_delay * 2**attempt + jitter))

    def _with_retry(self, what: str, call: Callable[[], _T]) -> _T:
        """Run ``call``; retry 429/5xx/timeouts/connection errors up to ``max_retries`` times."""
        import openai

        attempt = 0
        while True:
            try:
                return call()
            except openai.APIStatusError as exc:
                status = exc.status_code
                if not _is_retryable_status(status) or attempt >= self.max_retries:
                    raise self._status_error(what, status, exc.response.text) from None
                wait_for = self._backoff(attempt, parse_retry_after(exc.response.headers))
            except openai.APIConnectionError as exc:
                if attempt >= self.max_retries:
                    raise self._connection_error(what, exc) from None
                wait_for = self._backoff(attempt, 0.0)
            self._sleep(wait_for)
            attempt += 1

    def _status_error(self, what: str, status: int, body: str) -> OpenAIRequestError:
        detail = _error_detail(body)
        if status == 401:
            message = (
                f"OpenAI rejected the API key (401 Unauthorized) at {self.base_url}: {detail} "
                "Set a valid key with --embedding-api-key or OPENAI_API_KEY."
            )
        elif status == 404 and what == "embeddings":
            message = (
                f"OpenAI embedding model '{self.model}' was not found at {self.base_url} (404): {detail} "
                "Check --embedding-model (and --embedding-base-url)."
            )
        else:
            message = f"OpenAI {what} request failed ({status}): {body[:500]}"
        return OpenAIRequestError(message, status=status, transient=_is_retryable_status(status))

    def _connection_error(self, what: str, exc: Exception) -> OpenAIRequestError:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            reason = f"timed out after {self.timeout:g}s"
        else:
            cause = exc.__cause__ or exc
            reason = f"{type(cause).__name__}: {cause}"
        return OpenAIRequestError(
            f"could not reach the OpenAI API at {self.base_url} ({what}): {reason}. "
            "Check --embedding-base-url and your network connection.",
            status=None,
            transient=True,
        )

    # -- Batch API -----------------------------------------------------------------------------

    def _progress(self, event: EmbedProgress) -> None:
        if self._on_progress is not None:
            self._on_progress(event)

    def _batch_line(self, index: int, text: str) -> str:
        body: dict[str, Any] = {"model": self.model, "input": text}
        if self.model not in _MODELS_WITHOUT_DIMENSIONS_PARAM:
            body["dimensions"] = self.dimensions
        line = {"custom_id": f"req-{index}", "method": "POST", "url": "/v1/embeddings", "body": body}
        return json.dumps(line, ensure_ascii=False, separators=(",", ":"))

    def _batch_files(self, texts: list[str]) -> list[list[str]]:
        """JSONL request files (as lists of lines) within the Batch API's count and size limits."""
        files: list[list[str]] = []
        lines: list[str] = []
        size = 0
        for text in texts:
            line = self._batch_line(len(lines), text)
            line_size = len(line.encode("utf-8")) + 1
            if lines and (len(lines) >= MAX_REQUESTS_PER_BATCH or size + line_size > MAX_BATCH_FILE_BYTES):
                files.append(lines)
                lines, size = [], 0
                line = self._batch_line(0, text)
                line_size = len(line.encode("utf-8")) + 1
            lines.append(line)
            size += line_size
        if lines:
            files.append(lines)
        return files

    def _embed_via_batch_api(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for lines in self._batch_files(texts):
            vectors.extend(self._run_batch("\n".join(lines), len(lines)))
        return vectors

    def _run_batch(self, jsonl: str, count: int) -> list[list[float]]:
        content_sha = sha256hex(jsonl)
        existing = self._find_existing_batch(content_sha)
        if existing is not None:
            batch_id = str(existing["id"])
            status = str(existing.get("status"))
            output_file_id = existing.get("output_file_id")
            if status == "completed" and output_file_id:
                self._progress(
                    EmbedProgress(
                        phase="batch-downloading",
                        done=count,
                        total=count,
                        message=f"Found completed batch {batch_id} with matching content — downloading results...",
                    )
                )
                return self._download_batch_results(str(output_file_id), count)
            self._progress(
                EmbedProgress(
                    phase="batch-polling",
                    done=0,
                    total=count,
                    message=f"Resuming existing batch {batch_id} (status: {status})",
                )
            )
            return self._download_batch_results(self._poll_batch(batch_id, count), count)

        size_mb = len(jsonl.encode("utf-8")) / (1024 * 1024)
        self._progress(
            EmbedProgress(
                phase="batch-uploading",
                done=0,
                total=count,
                message=(
                    f"Embedding {count} chunks (>= {self.batch_api_threshold} threshold): using batch API\n"
                    f"Uploading batch file: {size_mb:.1f}MB..."
                ),
            )
        )
        file_id = self._upload_batch_file(jsonl)
        batch_id = self._create_batch(file_id, content_sha)
        return self._download_batch_results(self._poll_batch(batch_id, count), count)

    def _json_call(self, what: str, call: Callable[[], bytes]) -> dict[str, Any]:
        body = self._with_retry(what, call)
        try:
            payload = json.loads(body)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            preview = body[:200].decode("utf-8", errors="replace")
            raise OpenAIRequestError(
                f"OpenAI {what} response is not a JSON object: {preview!r}", status=None, transient=False
            )
        return payload

    def _upload_batch_file(self, jsonl: str) -> str:
        client = self._get_client()
        data = jsonl.encode("utf-8")
        payload = self._json_call(
            "file upload",
            lambda: (
                client.files.with_raw_response.create(
                    file=("batch-embeddings.jsonl", data, "application/jsonl"), purpose="batch"
                ).content
            ),
        )
        if not isinstance(payload.get("id"), str):
            raise OpenAIRequestError(
                "OpenAI file upload response has no file id", status=None, transient=False
            )
        return payload["id"]

    def _create_batch(self, file_id: str, content_sha: str) -> str:
        client = self._get_client()
        metadata = {"batch_name": self.batch_name} if self.batch_name else {}
        metadata["content_sha"] = content_sha
        payload = self._json_call(
            "batch creation",
            lambda: (
                client.batches.with_raw_response.create(
                    input_file_id=file_id,
                    endpoint="/v1/embeddings",
                    completion_window="24h",
                    metadata=metadata,
                ).content
            ),
        )
        if not isinstance(payload.get("id"), str):
            raise OpenAIRequestError(
                "OpenAI batch creation response has no batch id", status=None, transient=False
            )
        return payload["id"]

    def _find_existing_batch(self, content_sha: str) -> dict[str, Any] | None:
        """A recent batch with the same content hash that has not failed (best effort: errors -> None)."""
        client = self._get_client()
        try:
            payload = self._json_call(
                "batch listing", lambda: client.batches.with_raw_response.list(limit=100).content
            )
        except EmbeddingError:
            return None
        data = payload.get("data")
        if not isinstance(data, list):
            return None
        for batch in data:
            if not isinstance(batch, dict) or not isinstance(batch.get("id"), str):
                continue
            raw_metadata = batch.get("metadata")
            metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
            other_name = metadata.get("batch_name")
            if self.batch_name and other_name and other_name != self.batch_name:
                continue
            if metadata.get("content_sha") != content_sha:
                continue
            if batch.get("status") in _BATCH_TERMINAL_FAILURES:
                continue
            return batch
        return None

    def _poll_batch(self, batch_id: str, count: int) -> str:
        """Poll until the batch completes; returns its output file id."""
        client = self._get_client()
        started = self._clock()
        poll_index = 0
        first_progress: tuple[float, int] | None = None
        while True:
            batch = self._json_call(
                "batch poll", lambda: client.batches.with_raw_response.retrieve(batch_id).content
            )
            status = batch.get("status")
            if status == "completed":
                output_file_id = batch.get("output_file_id")
                if not isinstance(output_file_id, str) or not output_file_id:
                    raise OpenAIRequestError(
                        "OpenAI batch completed but no output_file_id returned", status=None, transient=False
                    )
                return output_file_id
            if status in _BATCH_TERMINAL_FAILURES:
                raise OpenAIRequestError(f"OpenAI batch {status}", status=None, transient=False)
            elapsed = self._clock() - started
            if elapsed >= self.batch_max_wait:
                raise OpenAIRequestError(
                    f"OpenAI batch timed out after {self.batch_max_wait:g}s", status=None, transient=True
                )

            counts = batch.get("request_counts") if isinstance(batch.get("request_counts"), dict) else None
            completed = total = failed = 0
            eta: float | None = None
            suffix = ""
            if counts is not None:
                completed = int(counts.get("completed") or 0)
                total = int(counts.get("total") or 0) or count
                failed = int(counts.get("failed") or 0)
                now = self._clock()
                if completed > 0 and first_progress is None:
                    first_progress = (now, completed)
                elif first_progress is not None and completed > first_progress[1] and now > first_progress[0]:
                    rate = (completed - first_progress[1]) / (now - first_progress[0])
                    eta = float(round((total - completed) / rate))
                pct = completed / total * 100 if total else 0.0
                suffix = f" — {completed}/{total} ({pct:.1f}%)"
                if failed:
                    suffix += f", {failed} failed"
                if eta is not None:
                    suffix += f", ETA ~{format_duration(eta)}"

            interval = self.batch_poll_intervals[min(poll_index, len(self.batch_poll_intervals) - 1)]
            remaining = interval
            announced = False
            while remaining > 0 or not announced:
                elapsed = self._clock() - started
                self._progress(
                    EmbedProgress(
                        phase="batch-polling",
                        done=completed,
                        total=total or count,
                        failed=failed,
                        message=(
                            f"Batch API: Elapsed={round(elapsed)}s. Next poll in {math.ceil(remaining)}s{suffix}"
                        ),
                        elapsed_seconds=elapsed,
                        next_poll_seconds=remaining,
                        eta_seconds=eta,
                    )
                )
                announced = True
                if remaining <= 0:
                    break
                step = min(1.0, remaining)
                self._sleep(step)
                remaining -= step
            poll_index += 1

    def _download_batch_results(self, output_file_id: str, count: int) -> list[list[float]]:
        client = self._get_client()
        self._progress(
            EmbedProgress(phase="batch-downloading", done=0, total=count, message="Downloading results...")
        )
        body = self._with_retry(
            "batch results download", lambda: client.files.with_raw_response.content(output_file_id).content
        )
        vectors: list[list[float] | None] = [None] * count
        for raw_line in body.decode("utf-8").splitlines():
            if not raw_line.strip():
                continue
            try:
                row = json.loads(raw_line)
                custom_id = str(row["custom_id"])
                index = int(custom_id.removeprefix("req-"))
            except (ValueError, KeyError, TypeError):
                raise OpenAIRequestError(
                    f"OpenAI batch results contain an unreadable line: {raw_line[:200]!r}",
                    status=None,
                    transient=False,
                ) from None
            response = row.get("response") if isinstance(row.get("response"), dict) else None
            if row.get("error") or response is None or response.get("status_code", 200) != 200:
                detail = row.get("error") or (response or {}).get("body")
                raise OpenAIRequestError(
                    f"OpenAI batch request {custom_id} failed: {json.dumps(detail)[:500]}",
                    status=None,
                    transient=False,
                )
            try:
                raw_vector = response["body"]["data"][0]["embedding"]
            except (KeyError, IndexError, TypeError):
                raw_vector = None
            vector = _decode_vector(raw_vector)
            if vector is None or not 0 <= index < count:
                raise OpenAIRequestError(
                    f"OpenAI batch results have no usable vector for {custom_id}",
                    status=None,
                    transient=False,
                )
            self._check_dimensions(len(vector))
            vectors[index] = vector
        missing = sum(1 for v in vectors if v is None)
        if missing:
            raise OpenAIRequestError(
                f"OpenAI batch results missing one or more vectors ({missing} of {count})",
                status=None,
                transient=False,
            )
        return [v for v in vectors if v is not None]


# --------------------------------------------------------------------------------------------------
# factory and preflight


def create_embedding_provider(
    name: str,
    *,
    model: str | None = None,
    dimensions: int | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    batch_size: int | None = None,
    concurrency: int | None = None,
    max_retries: int | None = None,
    on_warning: WarningCallback | None = None,
    on_progress: ProgressCallback | None = None,
    **openai_options: Any,
) -> EmbeddingProvider:
    """Build the provider named ``name`` (``none``, ``hash``, ``local`` or ``openai``).

    ``local`` takes ``model`` and ``dimensions`` (checked against the shipped model) and
    ``on_progress``; the API options (key, base URL, batching, retries, timeouts) do not apply to it
    and are ignored, so a query-time caller can pass the same arguments for every provider.

    For ``openai`` the key comes from ``api_key`` or else the ``OPENAI_API_KEY`` environment variable.
    Extra keyword arguments (``timeout``, ``batch_api_threshold``, ``batch_name``, ``retry_*``, ...)
    are passed to :class:`OpenAIEmbeddingProvider`.
    """
    import os

    normalized = name.strip().lower() if isinstance(name, str) else name
    if normalized not in PROVIDER_NAMES:
        raise EmbeddingError(
            f"unsupported embedding provider '{name}'. Expected one of: {', '.join(PROVIDER_NAMES)}"
        )
    if normalized == "none":
        return NoneEmbeddingProvider()
    if normalized == "hash":
        return HashEmbeddingProvider(
            dimensions=dimensions if dimensions is not None else 256,
            model=model if model is not None else "hash-v1",
        )
    if normalized == "local":
        # imported here: onnxruntime and tokenizers load only when the provider is used
        from docs_mcp_core.local_embedding import LocalEmbeddingProvider

        return LocalEmbeddingProvider(model=model, dimensions=dimensions, on_progress=on_progress)

    key = (api_key or "").strip() or os.environ.get("OPENAI_API_KEY", "").strip()
    if not key:
        raise EmbeddingError("openai embedding provider requires --embedding-api-key or OPENAI_API_KEY")
    kwargs: dict[str, Any] = dict(openai_options)
    for option, value in (
        ("model", model),
        ("dimensions", dimensions),
        ("base_url", base_url),
        ("batch_size", batch_size),
        ("concurrency", concurrency),
        ("max_retries", max_retries),
        ("on_warning", on_warning),
        ("on_progress", on_progress),
    ):
        if value is not None:
            kwargs[option] = value
    return OpenAIEmbeddingProvider(api_key=key, **kwargs)


def check_embedding_provider(provider: EmbeddingProvider) -> None:
    """Preflight: embed one tiny input and check the answer, before a build writes anything.

    Raises :class:`EmbeddingError` naming the provider, model and what to fix (bad key, unknown model,
    dimension mismatch, unreachable endpoint). The ``none`` provider always passes.
    """
    if provider.name == "none" or provider.dimensions == 0:
        return
    label = (
        f"embedding provider '{provider.name}' (model '{provider.model}', {provider.dimensions} dimensions)"
    )
    try:
        vectors = provider.embed([PREFLIGHT_INPUT])
    except EmbeddingError as exc:
        raise EmbeddingError(f"{label} failed its preflight check: {exc}") from exc
    except Exception as exc:  # an SDK or transport error we did not anticipate: still say what failed
        raise EmbeddingError(f"{label} failed its preflight check: {type(exc).__name__}: {exc}") from exc
    if len(vectors) != 1:
        raise EmbeddingError(
            f"{label} failed its preflight check: expected 1 vector for 1 input, got {len(vectors)}"
        )
    got = len(vectors[0])
    if got != provider.dimensions:
        raise EmbeddingError(
            f"{label} failed its preflight check: embedding dimension mismatch: got {got}-dimensional "
            f"vectors but {provider.dimensions} are configured; set --embedding-dimensions {got}"
        )
    if not all(math.isfinite(x) for x in vectors[0]):
        raise EmbeddingError(f"{label} failed its preflight check: the vector contains NaN or infinity")
