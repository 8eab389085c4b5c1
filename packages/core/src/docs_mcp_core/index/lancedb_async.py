"""The asynchronous table behind a synchronous LanceDB table, and the event loop it runs on.

Search runs its queries concurrently (the retrieval legs of one request, the indexes of one build)
on the ``AsyncTable`` that LanceDB's synchronous ``LanceTable`` wraps, and on the background event
loop that serves every synchronous LanceDB call. LanceDB 0.40 has no public way to reach either:
``LanceTable`` keeps its ``AsyncTable`` in the private ``_table`` attribute and runs it on
``lancedb.background_loop.LOOP``. The public alternative, ``lancedb.connect_async``, opens a second
handle on its own loop, which would read the table twice and give up the synchronous table's
checked-out version. So this module is the one place that reaches into those private names; should
LanceDB rename them, only these two functions change.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

__all__ = ["async_table", "lancedb_loop"]

T = TypeVar("T")


class LoopRunner(Protocol):
    """What callers need of LanceDB's background loop: run a coroutine on it and wait for it."""

    def run(self, future: Coroutine[Any, Any, T]) -> T: ...


def async_table(table: Any) -> Any:
    """The ``lancedb.table.AsyncTable`` behind the synchronous ``table``."""
    return table._table


def lancedb_loop() -> LoopRunner:
    """LanceDB's background event loop, on which every asynchronous table call must run."""
    # imported where used: LanceDB is loaded through import_lancedb() when an index opens
    from lancedb.background_loop import LOOP

    return LOOP
