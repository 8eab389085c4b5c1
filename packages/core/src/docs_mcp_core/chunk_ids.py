"""Chunk ids as the tools take them: ``path#fragment``, or ``path`` for a file chunked whole.

A module of its own, outside :mod:`docs_mcp_core.search`, so that code which only reads an id (the
server's tool schemas) does not import a submodule of the search package: the server imports
that package on another thread while it opens the index, and two threads that import a package
and one of its submodules in opposite order meet in Python's import locks (a ``_DeadlockError``).
"""

from __future__ import annotations

__all__ = ["PREAMBLE", "is_opening", "split_chunk_id"]

PREAMBLE = "_preamble"  # the fragment of the text before a file's first boundary heading


def split_chunk_id(chunk_id: str) -> tuple[str, str | None]:
    """``(filepath, fragment)`` of a chunk id; the fragment is ``None`` for a file chunked whole.

    A file path may itself hold ``#`` (``sdks/c#/README.md``), a fragment never does, nor a ``.``
    (slugs keep only ``[a-z0-9 -]``), while every document's path ends in a name with a suffix
    (``.md``): the fragment is what follows the last ``#``, when it holds no ``.``.
    """
    filepath, sep, fragment = chunk_id.rpartition("#")
    if not sep or "." in fragment:
        return chunk_id, None
    return filepath, fragment


def is_opening(chunk_id: str) -> bool:
    """Whether ``chunk_id`` is a page's opening: its preamble, or a file chunked whole."""
    fragment = split_chunk_id(chunk_id)[1]
    return fragment is None or fragment == PREAMBLE
