"""The ``openai`` embedding provider: OpenAI's embeddings API (or a compatible one) through its SDK.

Requests are batched and several batches are in flight at once; 429s, 5xx answers, timeouts and
connection failures are retried with exponential backoff that honours ``Retry-After``. Every input is
measured with the model's own tokenizer and cut at the model's context window (one warning per cut
input, naming its breadcrumb), and each request also stays under the API's per-request token budget.
Very large jobs (``batch_api_threshold`` inputs or more) go through the Batch API instead
(:mod:`docs_mcp_core.embedding.openai_batch`).
"""

from __future__ import annotations

import base64
import email.utils
import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from datetime import UTC
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from docs_mcp_core.embedding.openai_batch import OpenAIBatchJob
from docs_mcp_core.embedding.provider import (
    EmbedProgress,
    ProgressCallback,
    WarningCallback,
    compute_config_fingerprint,
    source_of,
)
from docs_mcp_core.errors import EmbeddingError, OpenAIRequestError
from docs_mcp_core.tokens import count_tokens, embedding_token_limit, token_upper_bound, truncate_to_tokens

if TYPE_CHECKING:
    import openai

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "OpenAIEmbeddingProvider",
    "OpenAIRequestError",
    "parse_retry_after",
]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

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
DEFAULT_BATCH_POLL_INTERVALS: tuple[float, ...] = (10.0, 10.0, 10.0, 30.0, 30.0, 60.0)
DEFAULT_BATCH_MAX_WAIT = 2 * 60 * 60.0


def _sdk() -> ModuleType:
    """The ``openai`` SDK, imported on first use: an engine or a build with another provider never
    loads it (it takes about half a second)."""
    import openai

    return openai


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
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deeply to parse
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
        self.sleep = sleep  # the Batch API's poll waits (a parameter, so tests need not wait)
        self.clock = clock
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
            return OpenAIBatchJob(self).embed(prepared)
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
                        f"tokens (source: {source_of(text)}). Consider lowering max_chunk_size in your "
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
        from docs_mcp_core.embedding.deadline import request_budget

        client = self.client()
        extra = self.dimensions_field()
        # an answer as JSON floats takes at most ~32 bytes a dimension; base64 takes under 6
        max_bytes = len(inputs) * (32 * self.dimensions + 1024) + (1 << 20)

        def call() -> bytes:
            with request_budget(self.timeout, max_bytes):
                raw = client.embeddings.with_raw_response.create(
                    model=self.model, input=inputs, encoding_format="base64", **extra
                )
                return raw.content

        body = self.call_with_retry("embeddings", call)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deeply to parse
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
            vector = self.decode_vector(item.get("embedding"))
            if vector is None:
                raise OpenAIRequestError(
                    "OpenAI embeddings response was missing one or more vectors", status=None, transient=False
                )
            self.check_vector(vector)
            vectors.append(vector)
        if len(vectors) != len(inputs) or sorted(int(i["index"]) for i in items) != list(range(len(inputs))):
            raise OpenAIRequestError(
                "OpenAI embeddings response was missing one or more vectors", status=None, transient=False
            )
        return vectors

    def dimensions_field(self) -> dict[str, Any]:
        """The ``dimensions`` field of a request body (empty for models that reject it)."""
        return {} if self.model in _MODELS_WITHOUT_DIMENSIONS_PARAM else {"dimensions": self.dimensions}

    @staticmethod
    def decode_vector(raw: object) -> list[float] | None:
        """An ``embedding`` field of a response (``None`` when it is not a vector)."""
        return _decode_vector(raw)

    def check_vector(self, vector: Sequence[float]) -> None:
        """Raise when a returned vector has other dimensions than the configured ones, or holds NaN
        or infinity (which would poison the index: LanceDB refuses NaN, and infinity breaks every
        distance to it)."""
        got = len(vector)
        if got != self.dimensions:
            raise OpenAIRequestError(
                f"embedding dimension mismatch: model '{self.model}' at {self.base_url} returned "
                f"{got}-dimensional vectors but {self.dimensions} are configured; set "
                f"--embedding-dimensions {got} (or a size the model supports)",
                status=None,
                transient=False,
            )
        if not math.isfinite(sum(vector)):  # NaN and infinity carry into the sum (8x faster than all())
            raise OpenAIRequestError(
                f"OpenAI embeddings response holds a vector with NaN or infinite values (model "
                f"'{self.model}' at {self.base_url}); the API's answer cannot be indexed or searched. "
                "Check --embedding-base-url points at a working embeddings API.",
                status=None,
                transient=False,
            )

    # -- HTTP plumbing -------------------------------------------------------------------------

    def client(self) -> openai.OpenAI:
        """The SDK client (created on first use; its own retries are off, see :meth:`call_with_retry`)."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    from docs_mcp_core.embedding.deadline import http_client

                    sdk: Any = _sdk()
                    self._client = sdk.OpenAI(
                        api_key=self._api_key,
                        base_url=self.base_url,
                        max_retries=0,
                        timeout=self.timeout,
                        http_client=http_client(self.timeout),
                    )
        assert self._client is not None
        return self._client

    def _backoff(self, attempt: int, retry_after: float) -> float:
        jitter = random.uniform(0.0, self.retry_jitter) if self.retry_jitter > 0 else 0.0
        return min(self.retry_max_delay, max(retry_after, self.retry_base_delay * 2**attempt + jitter))

    def call_with_retry(self, what: str, call: Callable[[], _T]) -> _T:
        """Run ``call``; retry 429/5xx/timeouts/connection errors up to ``max_retries`` times."""
        from docs_mcp_core.embedding.deadline import unusable_answer

        openai = _sdk()
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
                if attempt >= self.max_retries or unusable_answer(exc) is not None:
                    raise self._connection_error(what, exc) from None
                wait_for = self._backoff(attempt, 0.0)
            self.sleep(wait_for)
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
        from docs_mcp_core.embedding.deadline import unusable_answer

        if (unusable := unusable_answer(exc)) is not None:
            hint = "Check --embedding-base-url points at an embeddings API."
            message = (
                f"the OpenAI API at {self.base_url} ({what}) sent an unusable answer: {unusable}. {hint}"
            )
            return OpenAIRequestError(message, status=None, transient=False)
        if isinstance(exc, _sdk().APITimeoutError):
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

    def report_progress(self, event: EmbedProgress) -> None:
        if self._on_progress is not None:
            self._on_progress(event)
