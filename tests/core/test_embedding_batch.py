"""The OpenAI Batch API path: upload, create, poll, download, resume by content hash."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Literal

import pytest

from docs_mcp_core.embedding import EmbedProgress, OpenAIEmbeddingProvider
from docs_mcp_core.errors import EmbeddingError
from tests.fakes.openai_server import FakeOpenAI, Fault, fake_vector

pytestmark = pytest.mark.integration  # starts processes or listens on ports

MODEL = "text-embedding-3-small"
DIMS = 8
TEXTS = [f"Context: docs/{i}.md\n\nContent:\nbody {i} ünïcode" for i in range(6)]


class VirtualTime:
    """A clock that only moves when the provider sleeps: polling without real waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(batch_polls_to_complete=3) as server:
        yield server


def make_provider(api: FakeOpenAI, vt: VirtualTime, **kwargs: object) -> OpenAIEmbeddingProvider:
    options: dict[str, object] = {
        "api_key": api.api_key,
        "base_url": api.base_url,
        "model": MODEL,
        "dimensions": DIMS,
        "batch_api_threshold": 5,
        "batch_poll_intervals": (2.0, 3.0),
        "sleep": vt.sleep,
        "clock": vt.clock,
        "retry_base_delay": 0.001,
        "retry_jitter": 0.0,
    }
    options.update(kwargs)
    return OpenAIEmbeddingProvider(**options)  # type: ignore[arg-type]


def reference_jsonl(texts: list[str]) -> str:
    """The request file as the original docs-mcp writes it (JSON.stringify, one request per line)."""
    return "\n".join(
        json.dumps(
            {
                "custom_id": f"req-{i}",
                "method": "POST",
                "url": "/v1/embeddings",
                "body": {"model": MODEL, "input": text, "dimensions": DIMS},
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        for i, text in enumerate(texts)
    )


def expected() -> list[list[float]]:
    return [fake_vector(t, DIMS) for t in TEXTS]


def test_below_threshold_uses_the_sync_endpoint(api: FakeOpenAI) -> None:
    vt = VirtualTime()
    make_provider(api, vt).embed(TEXTS[:4])
    assert [r.route for r in api.requests] == ["embeddings"]


def test_full_batch_flow(api: FakeOpenAI) -> None:
    vt = VirtualTime()
    events: list[EmbedProgress] = []
    provider = make_provider(api, vt, batch_name="docs-mcp:acme", on_progress=events.append)
    assert provider.embed(TEXTS) == expected()  # output lines come back reversed: placed by custom_id

    assert [r.route for r in api.requests] == [
        "batches.list",
        "files.create",
        "batches.create",
        "batches.retrieve",
        "batches.retrieve",
        "batches.retrieve",
        "files.content",
    ]
    assert api.requests_to("batches.list")[0].query == {"limit": ["100"]}
    (file_id,) = [f for f, purpose in api.file_purposes.items() if purpose == "batch"]
    jsonl = reference_jsonl(TEXTS)
    assert api.files[file_id].decode("utf-8") == jsonl
    create = api.requests_to("batches.create")[0].json
    assert create == {
        "input_file_id": file_id,
        "endpoint": "/v1/embeddings",
        "completion_window": "24h",
        "metadata": {
            "batch_name": "docs-mcp:acme",
            "content_sha": hashlib.sha256(jsonl.encode()).hexdigest(),
        },
    }
    assert b'filename="batch-embeddings.jsonl"' in api.requests_to("files.create")[0].body

    phases = [e.phase for e in events]
    assert phases[0] == "batch-uploading" and phases[-1] == "batch-downloading"
    assert "Embedding 6 chunks (>= 5 threshold): using batch API" in events[0].message
    polling = [e for e in events if e.phase == "batch-polling"]
    assert polling[0].message.startswith("Batch API: Elapsed=0s. Next poll in 2s — 2/6 (33.3%)")
    assert any(e.message.startswith("Batch API: Elapsed=3s. Next poll in 2s — 4/6 (66.7%)") for e in polling)
    # Poll schedule honoured: 2 s then 3 s, ticking once per second.
    assert vt.sleeps == [1.0, 1.0, 1.0, 1.0, 1.0]


def test_eta_appears_once_progress_is_measurable() -> None:
    with FakeOpenAI(batch_polls_to_complete=4) as api:
        vt = VirtualTime()
        events: list[EmbedProgress] = []
        make_provider(api, vt, batch_poll_intervals=(10.0,), on_progress=events.append).embed(TEXTS)
    etas = [e for e in events if e.eta_seconds is not None]
    assert etas, "an ETA should be computed from the completion rate"
    # Polls see 1, then 3 of 6 done, 10 s apart: 0.2 requests/s -> (6 - 3) / 0.2 = 15 s left.
    assert etas[0].eta_seconds == 15
    assert etas[0].message == "Batch API: Elapsed=10s. Next poll in 10s — 3/6 (50.0%), ETA ~15s"


def test_resume_a_completed_batch_without_uploading(api: FakeOpenAI) -> None:
    jsonl = reference_jsonl(TEXTS)
    sha = hashlib.sha256(jsonl.encode()).hexdigest()
    api.add_batch(content_sha=sha, status="completed", input_jsonl=jsonl.encode())
    events: list[EmbedProgress] = []
    vt = VirtualTime()
    assert make_provider(api, vt, on_progress=events.append).embed(TEXTS) == expected()
    assert [r.route for r in api.requests] == ["batches.list", "files.content"]
    assert "Found completed batch" in events[0].message


def test_resume_a_running_batch_by_polling_it(api: FakeOpenAI) -> None:
    jsonl = reference_jsonl(TEXTS)
    sha = hashlib.sha256(jsonl.encode()).hexdigest()
    batch = api.add_batch(content_sha=sha, status="in_progress", input_jsonl=jsonl.encode())
    events: list[EmbedProgress] = []
    vt = VirtualTime()
    assert make_provider(api, vt, on_progress=events.append).embed(TEXTS) == expected()
    routes = [r.route for r in api.requests]
    assert "files.create" not in routes and "batches.create" not in routes
    assert all(r.path.endswith(batch.id) for r in api.requests_to("batches.retrieve"))
    assert events[0].message == f"Resuming existing batch {batch.id} (status: in_progress)"


def test_resume_skips_failed_batches_and_other_corpora(api: FakeOpenAI) -> None:
    jsonl = reference_jsonl(TEXTS)
    sha = hashlib.sha256(jsonl.encode()).hexdigest()
    api.add_batch(content_sha=sha, status="failed", input_jsonl=jsonl.encode())
    api.add_batch(
        content_sha=sha, status="completed", batch_name="docs-mcp:other", input_jsonl=jsonl.encode()
    )
    api.add_batch(content_sha="0" * 64, status="completed", input_jsonl=b"")
    vt = VirtualTime()
    assert make_provider(api, vt, batch_name="docs-mcp:mine").embed(TEXTS) == expected()
    assert len(api.requests_to("files.create")) == 1
    assert len(api.requests_to("batches.create")) == 1


def test_unnamed_run_may_resume_a_named_batch(api: FakeOpenAI) -> None:
    jsonl = reference_jsonl(TEXTS)
    sha = hashlib.sha256(jsonl.encode()).hexdigest()
    api.add_batch(content_sha=sha, status="completed", batch_name="docs-mcp:any", input_jsonl=jsonl.encode())
    vt = VirtualTime()
    assert make_provider(api, vt).embed(TEXTS) == expected()
    assert api.requests_to("files.create") == []


@pytest.mark.parametrize("outcome", ["failed", "expired"])
def test_failed_batch_is_an_error(outcome: Literal["failed", "expired"]) -> None:
    server = FakeOpenAI(batch_polls_to_complete=1, batch_outcome=outcome)
    with server as api, pytest.raises(EmbeddingError) as info:
        make_provider(api, VirtualTime()).embed(TEXTS)
    assert str(info.value) == f"OpenAI batch {outcome}"


def test_batch_gives_up_after_max_wait() -> None:
    with FakeOpenAI(batch_polls_to_complete=1000) as api:
        vt = VirtualTime()
        with pytest.raises(EmbeddingError) as info:
            make_provider(api, vt, batch_poll_intervals=(60.0,), batch_max_wait=300.0).embed(TEXTS)
    assert str(info.value) == "OpenAI batch timed out after 300s"
    assert 300.0 <= sum(vt.sleeps) <= 360.0


def test_batch_listing_failure_is_not_fatal(api: FakeOpenAI) -> None:
    api.script("batches.list", Fault(status=403))
    assert make_provider(api, VirtualTime()).embed(TEXTS) == expected()
    assert len(api.requests_to("batches.create")) == 1


def test_batch_inputs_are_cut_to_the_window_with_a_warning(api: FakeOpenAI) -> None:
    warnings: list[str] = []
    texts = [*TEXTS[:5], "Context: big.md > Huge\n\nContent:\n" + "word " * 9000]
    vectors = make_provider(api, VirtualTime(), on_warning=warnings.append).embed(texts)
    assert len(vectors) == 6
    assert len(warnings) == 1 and "(source: big.md > Huge)" in warnings[0]
    (file_id,) = [f for f, purpose in api.file_purposes.items() if purpose == "batch"]
    last = json.loads(api.files[file_id].decode().splitlines()[-1])
    assert texts[-1].startswith(last["body"]["input"]) and len(last["body"]["input"]) < len(texts[-1])
