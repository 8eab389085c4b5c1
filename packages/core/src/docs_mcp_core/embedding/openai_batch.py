"""The OpenAI Batch API route of the ``openai`` embedding provider, for very large jobs.

A job of ``batch_api_threshold`` inputs or more is written as JSONL request files (within the Batch
API's count and size limits), each uploaded once and run as one batch; the batch is polled with a
progress line and an ETA, and its results are downloaded and put back in input order. A rerun with
identical inputs resumes the batch already submitted (matched by the SHA-256 of the file, kept in the
batch's metadata) instead of paying for it twice.

The HTTP client, retries, progress reports and the vector checks are the provider's
(:class:`~docs_mcp_core.embedding.openai.OpenAIEmbeddingProvider`), so both routes fail the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from docs_mcp_core.embedding.provider import EmbedProgress, format_duration, sha256hex
from docs_mcp_core.errors import EmbeddingError, OpenAIRequestError

__all__ = ["MAX_BATCH_FILE_BYTES", "MAX_REQUESTS_PER_BATCH", "BatchApi", "OpenAIBatchJob"]

_T = TypeVar("_T")

MAX_REQUESTS_PER_BATCH = 50_000  # OpenAI Batch API: at most 50,000 requests per batch file
MAX_BATCH_FILE_BYTES = 190 * 1024 * 1024  # OpenAI Batch API: input files up to 200 MB
_BATCH_TERMINAL_FAILURES = frozenset({"failed", "expired", "cancelled", "cancelling"})


class BatchApi(Protocol):
    """What a Batch API job uses of the ``openai`` provider: its settings, HTTP client, retries,
    progress reports and vector checks (the provider imports this module, not the other way)."""

    model: str
    dimensions: int
    batch_name: str
    batch_api_threshold: int
    batch_poll_intervals: tuple[float, ...]
    batch_max_wait: float
    sleep: Callable[[float], None]
    clock: Callable[[], float]

    def client(self) -> Any: ...
    def dimensions_field(self) -> dict[str, Any]: ...
    def decode_vector(self, raw: object) -> list[float] | None: ...
    def check_vector(self, vector: Sequence[float]) -> None: ...
    def call_with_retry(self, what: str, call: Callable[[], _T]) -> _T: ...
    def report_progress(self, event: EmbedProgress) -> None: ...


class OpenAIBatchJob:
    """Embeds a list of inputs through the Batch API on behalf of one provider."""

    def __init__(self, api: BatchApi) -> None:
        self._api = api

    def _batch_line(self, index: int, text: str) -> str:
        body = {"model": self._api.model, "input": text, **self._api.dimensions_field()}
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

    def embed(self, texts: list[str]) -> list[list[float]]:
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
                self._api.report_progress(
                    EmbedProgress(
                        phase="batch-downloading",
                        done=count,
                        total=count,
                        message=f"Found completed batch {batch_id} with matching content — downloading results...",
                    )
                )
                return self._download_batch_results(str(output_file_id), count)
            self._api.report_progress(
                EmbedProgress(
                    phase="batch-polling",
                    done=0,
                    total=count,
                    message=f"Resuming existing batch {batch_id} (status: {status})",
                )
            )
            return self._download_batch_results(self._poll_batch(batch_id, count), count)

        size_mb = len(jsonl.encode("utf-8")) / (1024 * 1024)
        self._api.report_progress(
            EmbedProgress(
                phase="batch-uploading",
                done=0,
                total=count,
                message=(
                    f"Embedding {count} chunks (>= {self._api.batch_api_threshold} threshold): using batch API\n"
                    f"Uploading batch file: {size_mb:.1f}MB..."
                ),
            )
        )
        file_id = self._upload_batch_file(jsonl)
        batch_id = self._create_batch(file_id, content_sha)
        return self._download_batch_results(self._poll_batch(batch_id, count), count)

    def _json_call(self, what: str, call: Callable[[], bytes]) -> dict[str, Any]:
        body = self._api.call_with_retry(what, call)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):  # RecursionError: JSON nested too deeply to parse
            payload = None
        if not isinstance(payload, dict):
            preview = body[:200].decode("utf-8", errors="replace")
            raise OpenAIRequestError(
                f"OpenAI {what} response is not a JSON object: {preview!r}", status=None, transient=False
            )
        return payload

    def _upload_batch_file(self, jsonl: str) -> str:
        client = self._api.client()
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
        client = self._api.client()
        metadata = {"batch_name": self._api.batch_name} if self._api.batch_name else {}
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
        client = self._api.client()
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
            if self._api.batch_name and other_name and other_name != self._api.batch_name:
                continue
            if metadata.get("content_sha") != content_sha:
                continue
            if batch.get("status") in _BATCH_TERMINAL_FAILURES:
                continue
            return batch
        return None

    def _poll_batch(self, batch_id: str, count: int) -> str:
        """Poll until the batch completes; returns its output file id."""
        client = self._api.client()
        started = self._api.clock()
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
            elapsed = self._api.clock() - started
            if elapsed >= self._api.batch_max_wait:
                raise OpenAIRequestError(
                    f"OpenAI batch timed out after {self._api.batch_max_wait:g}s", status=None, transient=True
                )

            counts = batch.get("request_counts") if isinstance(batch.get("request_counts"), dict) else None
            completed = total = failed = 0
            eta: float | None = None
            suffix = ""
            if counts is not None:
                completed = int(counts.get("completed") or 0)
                total = int(counts.get("total") or 0) or count
                failed = int(counts.get("failed") or 0)
                now = self._api.clock()
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

            interval = self._api.batch_poll_intervals[
                min(poll_index, len(self._api.batch_poll_intervals) - 1)
            ]
            remaining = interval
            announced = False
            while remaining > 0 or not announced:
                elapsed = self._api.clock() - started
                self._api.report_progress(
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
                self._api.sleep(step)
                remaining -= step
            poll_index += 1

    def _download_batch_results(self, output_file_id: str, count: int) -> list[list[float]]:
        client = self._api.client()
        self._api.report_progress(
            EmbedProgress(phase="batch-downloading", done=0, total=count, message="Downloading results...")
        )
        from docs_mcp_core.embedding.deadline import request_budget

        # a line holds one vector as JSON floats (at most ~32 bytes a dimension) in a small envelope;
        # uncompressed, and within the wait a whole batch is allowed
        max_bytes = count * (32 * self._api.dimensions + 1024) + (1 << 20)

        def download() -> bytes:
            with request_budget(self._api.batch_max_wait, max_bytes):
                return client.files.with_raw_response.content(output_file_id).content

        body = self._api.call_with_retry("batch results download", download)
        vectors: list[list[float] | None] = [None] * count
        for raw_line in body.decode("utf-8", errors="replace").splitlines():
            if not raw_line.strip():
                continue
            try:
                row = json.loads(raw_line)
                custom_id = str(row["custom_id"])
                index = int(custom_id.removeprefix("req-"))
            except (ValueError, KeyError, TypeError, RecursionError):
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
            vector = self._api.decode_vector(raw_vector)
            if vector is None or not 0 <= index < count:
                raise OpenAIRequestError(
                    f"OpenAI batch results have no usable vector for {custom_id}",
                    status=None,
                    transient=False,
                )
            self._api.check_vector(vector)
            vectors[index] = vector
        missing = sum(1 for v in vectors if v is None)
        if missing:
            raise OpenAIRequestError(
                f"OpenAI batch results missing one or more vectors ({missing} of {count})",
                status=None,
                transient=False,
            )
        return [v for v in vectors if v is not None]
