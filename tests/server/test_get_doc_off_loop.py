"""A ``get_doc`` answer fitted to ``max_tokens`` parses its markdown and counts its tokens off the
server's event loop: while a section of megabytes is cut for one client, every other request is
still answered."""

from __future__ import annotations

import time
from collections.abc import Iterator

import anyio
import pytest
from mcp import Client

from docs_mcp_server import DocsMcpApp, create_app
from tests.support.tiny_corpus import build_pages

pytestmark = pytest.mark.anyio
PACE = 0.01  # seconds between one answered search and the next


@pytest.fixture(scope="module")
def big_list_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocsMcpApp]:
    items = "\n".join(f"- step {i}: wait {i} ms, then retry the request" for i in range(40_000))
    index = build_pages(
        tmp_path_factory, "off-loop", {"guide.md": f"# Guide\n\nIntro.\n\n## Steps\n\n{items}\n"}
    )
    yield create_app(index, name="test-server", version="0.1.0")


async def test_other_calls_are_answered_while_a_budgeted_answer_is_cut(big_list_app: DocsMcpApp) -> None:
    answered: list[float] = []
    span: list[float] = []
    async with Client(big_list_app.server) as client:
        section = {"chunk_id": "guide.md#guide/steps", "scope": "section"}
        assert not (await client.call_tool("get_doc", section)).is_error  # the index and its table open
        # and the markdown parser imported (imports crawl beside a thread that never waits)
        intro = {"chunk_id": "guide.md#_preamble", "max_tokens": 1000}
        assert not (await client.call_tool("get_doc", intro)).is_error

        async def heavy() -> None:
            span.append(time.monotonic())
            result = await client.call_tool("get_doc", {**section, "max_tokens": 1000})
            span.append(time.monotonic())
            assert not result.is_error

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(heavy)
                while len(span) < 2:
                    await client.call_tool("search_docs", {"query": "retry the request", "limit": 1})
                    answered.append(time.monotonic())
                    # a client's pace, not a wait for anything: back-to-back searches would hold the
                    # interpreter's lock against the thread that cuts the answer
                    await anyio.sleep(PACE)
    start, end = span
    assert end - start > 0.2, "the answer was cut too fast to tell"
    # calls answered in the second half of the cut: the event loop was not held by it
    assert sum((start + end) / 2 < at < end for at in answered) >= 3, (start, end, answered[-5:])
