"""Names a package exports but imports only when they are first asked for.

A package whose ``__init__`` imported every name it exports would make each of its users pay for
all of them: a server answering searches would import every embedding provider, a build's
modules and the MCP SDK before its first answer. Such a package lists its names with the module
each comes from, and :func:`lazy_exports` gives it the module-level ``__getattr__`` (PEP 562) that
imports one the first time it is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports each name of ``modules`` (name ->
    the module it comes from) on first use, and raises :class:`AttributeError` for any other."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
