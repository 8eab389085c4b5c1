"""Importing LanceDB without paying up front for its namespace REST client.

``import lancedb`` also imports ``lance_namespace_urllib3_client``, a generated REST client for
LanceDB namespace servers: a few hundred API methods wrapped in pydantic's ``validate_call`` and a
few hundred pydantic models, all of which build their validators when the module is imported. On
the 2-core reference machine that is about 0.6 s of the 1.3 s LanceDB takes to import, for code
docs-mcp never calls (it opens tables by path or object-store URI, never through a namespace
server).

:func:`import_lancedb` imports LanceDB with that work deferred: while LanceDB is first imported,
``validate_call`` builds its validator on the wrapped function's first call and pydantic models
build their schema on first use (pydantic's own ``defer_build``). Nothing becomes unusable; it is
only paid for if it is ever used. Should pydantic change these hooks, the import takes its usual
time and nothing else changes.

Every module of docs-mcp that needs LanceDB gets it from here, so whichever runs first pays the
smaller price. Importing ``lancedb`` directly elsewhere still works.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

_lock = threading.Lock()


def import_lancedb() -> ModuleType:
    """The ``lancedb`` module, imported with the namespace client's validators deferred."""
    if "lancedb" not in sys.modules:
        os.environ.setdefault("LANCEDB_LOG", "error")
        with _lock, _deferred_pydantic_validators():
            import lancedb  # the first import, with the deferral in place
    import lancedb  # already imported: a dictionary lookup

    return lancedb


@contextlib.contextmanager
def _deferred_pydantic_validators() -> Iterator[None]:
    """Within the block, ``pydantic.validate_call`` and new models build their validators lazily."""
    try:  # pydantic's private module may move: then LanceDB is imported as usual
        import pydantic
        from pydantic._internal import _config
    except ImportError:  # pragma: no cover - LanceDB depends on pydantic 2
        yield
        return
    defaults: dict[str, Any] | None = getattr(_config, "config_defaults", None)
    real = pydantic.validate_call
    had_default = defaults is not None and "defer_build" in defaults
    previous = defaults.get("defer_build") if defaults is not None else None
    pydantic.validate_call = _lazy_validate_call(real)  # type: ignore[assignment]
    if had_default and defaults is not None:
        defaults["defer_build"] = True
    try:
        yield
    finally:
        pydantic.validate_call = real
        if had_default and defaults is not None:
            defaults["defer_build"] = previous


def _lazy_validate_call(real: Callable[..., Any]) -> Callable[..., Any]:
    """A ``validate_call`` that wraps the function in the real one on its first call."""

    def lazy(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
            built: Callable[..., Any] | None = None

            @functools.wraps(function)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                nonlocal built
                validated = built
                if validated is None:
                    validated = built = real(function, **options)
                return validated(*args, **kwargs)

            return wrapper

        return decorate if func is None else decorate(func)

    return lazy


__all__ = ["import_lancedb"]
