"""Memory: returning freed heap to the operating system, glibc's allocator settings, and the
memory budgets users set in the environment."""

from __future__ import annotations

import ctypes
import os
import sys


def release_free_heap() -> None:
    """Give heap pages freed by a large one-off job back to the OS (glibc ``malloc_trim``).

    Loading the local embedding model or reading every row's ranking attributes at open leaves
    megabytes in freed malloc chunks, which glibc keeps mapped; a long-lived server would otherwise
    carry them in its resident size for ever. Does nothing on other platforms or C libraries.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl, ...): nothing to do
        pass


M_ARENA_MAX = -8  # glibc mallopt parameter


def limit_heap_arenas(arenas: int = 2) -> None:
    """Cap glibc's per-thread malloc arenas (as ``MALLOC_ARENA_MAX`` does) unless the user set it.

    LanceDB, Arrow and ONNX Runtime run many native threads; glibc gives each its own arena, whose
    freed memory stays resident. Two arenas hold a search server's resident size ~20 MB lower at
    no measurable cost. Call it before those threads start. Does nothing outside glibc.
    """
    _mallopt(M_ARENA_MAX, arenas, unless_set="MALLOC_ARENA_MAX")


M_MMAP_THRESHOLD = -3  # glibc mallopt parameter
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's initial threshold


def map_large_blocks(threshold: int = MMAP_THRESHOLD_BYTES) -> None:
    """Serve every allocation of ``threshold`` bytes or more with its own mapping, returned to the
    OS when freed (as ``MALLOC_MMAP_THRESHOLD_`` does) unless the user set it.

    glibc raises that threshold each time such a block is freed, so after a few large temporary
    arrays (the engine's in-memory index is built from tens of MB of them) later ones come from
    the heap and stay resident: 33 MB of a search server's peak on the SDK corpus.
    """
    _mallopt(M_MMAP_THRESHOLD, threshold, unless_set="MALLOC_MMAP_THRESHOLD_")


def _mallopt(parameter: int, value: int, *, unless_set: str) -> None:
    """glibc's ``mallopt``, unless the environment variable that sets the same is present."""
    if not sys.platform.startswith("linux") or unless_set in os.environ:
        return
    try:
        ctypes.CDLL("libc.so.6").mallopt(parameter, value)
    except (OSError, AttributeError):  # not glibc (musl, ...): nothing to do
        pass


def budget_from_env(variable: str, default: int) -> int:
    """A memory budget in bytes from ``variable`` (in MB; 0 turns the use off; ``inf``, or a number
    too large for an integer, is no limit), else ``default``."""
    raw = os.environ.get(variable, "").strip()
    if raw:
        try:
            return max(0, int(float(raw) * 1024 * 1024))
        except ValueError:  # not a number, or nan
            pass
        except OverflowError:  # inf or -inf (1e400 reads as inf)
            return sys.maxsize if float(raw) > 0 else 0
    return default


def return_freed_memory_by_default() -> None:
    """Process set-up for the long-running commands (builds, servers); call it before pyarrow is
    imported and before any native thread starts.

    Arrow's default mimalloc pool keeps freed pages and glibc gives every thread its own arena;
    Arrow's system allocator and two arenas return that memory instead (an idle sdk-docs server
    holds ~30 MB less, a 10x build with vectors peaks at 0.9 GB instead of 1.2 GB). Settings the
    user made in the environment win.
    """
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    limit_heap_arenas()
    map_large_blocks()
