"""Shared fixtures, and the check that keeps the ``integration`` marker honest.

Tests that need ``../shared`` (corpora, upstream figures) skip cleanly without it. Helpers the tests
share live in :mod:`tests.support` (and :mod:`tests.fakes`); this file only declares fixtures.

``pytest -m "not integration"`` is the fast loop: it leaves out every test marked ``integration``,
and a test must be marked when it, or a fixture it uses, starts a process or listens on a port. An
audit hook sees both (Python raises an audit event for each); a test that does either without the
marker fails and says so. Tests that time work on large inputs (the linear-time checks) are marked
too: they take most of a minute each and want a quiet CPU.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from docs_mcp_core.build import BuildOptions, EmbeddingOptions, build_index
from tests.fakes.openai_server import FakeOpenAI
from tests.support.hybrid_corpus import build as build_hybrid
from tests.support.hybrid_corpus import make_corpus
from tests.support.paths import EXAMPLES_DOCS, REPO_ROOT, SHARED_DIR

# Lance prints Rust WARN lines to stderr on every query without this.
os.environ.setdefault("LANCEDB_LOG", "error")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def examples_docs() -> Path:
    return EXAMPLES_DOCS


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED_DIR / "corpora" / "sdk-docs").is_dir():
        pytest.skip(f"shared corpora not found at {SHARED_DIR}")
    return SHARED_DIR


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# the build time recorded in the indexes built once per session, so that every test sees one index
SESSION_INDEXED_AT = "2026-01-01T00:00:00.000Z"


@pytest.fixture(scope="session")
def built_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``examples/docs`` built in this process with the default options (no embeddings) and a fixed
    ``indexed_at``, shared by the session: tests that only read such an index use this one instead
    of building their own. (The command line's own builds are tested in ``tests/cli``;
    :func:`tests.support.programs.build_with_cli` runs it for tests that need its output.)"""
    out = tmp_path_factory.mktemp("examples-index")
    build_index(BuildOptions(docs_dir=examples_docs, out_dir=out, indexed_at=SESSION_INDEXED_AT))
    return out


@pytest.fixture(scope="session")
def examples_hash_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``examples/docs`` built in this process with ``hash`` embeddings (flat vector search: too few
    rows for a vector index) and a fixed ``indexed_at``, shared by the session."""
    out = tmp_path_factory.mktemp("examples-hash-index")
    embedding = EmbeddingOptions(provider="hash")
    build_index(
        BuildOptions(docs_dir=examples_docs, out_dir=out, indexed_at=SESSION_INDEXED_AT, embedding=embedding)
    )
    return out


@pytest.fixture(scope="session")
def hybrid_index(tmp_path_factory: pytest.TempPathFactory, examples_docs: Path) -> Path:
    """``examples/docs`` plus the vector-only target of :mod:`tests.support.hybrid_corpus`, built once
    per session with openai/text-embedding-3-small at 256 dimensions through the fake OpenAI API. The
    fake listens on a port, so only ``integration`` tests may use it."""
    root = tmp_path_factory.mktemp("hybrid")
    docs = make_corpus(examples_docs, root / "docs")
    with FakeOpenAI() as server:
        build_hybrid(docs, root / "out", server)
    return root / "out"


@pytest.fixture(scope="session")
def sdk_docs_index(tmp_path_factory: pytest.TempPathFactory, shared_dir: Path) -> Path:
    """The shared ``sdk-docs`` corpus (4,087 files) built in this process with the default options,
    once per session: the largest build of the suite, read by every test that needs it. It starts
    worker processes, so only ``integration`` tests may use it."""
    out = tmp_path_factory.mktemp("sdk-docs-index")
    build_index(
        BuildOptions(docs_dir=shared_dir / "corpora" / "sdk-docs", out_dir=out, indexed_at=SESSION_INDEXED_AT)
    )
    return out


# ── the integration marker's check ─────────────────────────────────────────────────────────────

_events: list[str] | None = None  # what the current test or fixture has started or bound so far
_fixture_events: dict[pytest.FixtureDef[Any], list[str]] = {}  # what each fixture's set-up did
_INET = (socket.AF_INET, socket.AF_INET6)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _events is None or event not in ("subprocess.Popen", "os.fork", "os.posix_spawn", "socket.bind"):
        return
    if event == "subprocess.Popen":
        program = os.path.basename(str(args[0] or (args[1][0] if args[1] else "")))
        if program != "git":  # a build's source-commit probe, milliseconds: an in-process build is fast
            _events.append(f"started {program}")
    elif event == "socket.bind":
        # urllib3 binds ('::1', 0) once when it is imported, to learn whether IPv6 works
        if getattr(args[0], "family", None) in _INET and tuple(args[1])[:2] != ("::1", 0):
            _events.append(f"listened on {args[1]}")
    else:
        _events.append("forked a process")


sys.addaudithook(_audit)


def _violations(item: pytest.Item, own: list[str], *, fixtures: bool) -> list[str]:
    if item.get_closest_marker("integration") is not None:
        return []
    if not fixtures:
        return own[:3]
    info = getattr(item, "_fixtureinfo", None)
    used = [defs[-1] for defs in info.name2fixturedefs.values() if defs] if info is not None else []
    found = [f"fixture {d.argname!r} {what}" for d in used for what in _fixture_events.get(d, [])[:1]]
    return found + own[:3]


def _check(item: pytest.Item, own: list[str], *, fixtures: bool = True) -> None:
    found = _violations(item, own, fixtures=fixtures)
    if found:
        pytest.fail(
            f"{item.nodeid} starts a process or listens on a port ({'; '.join(found)}): "
            "mark it @pytest.mark.integration (pytest -m 'not integration' is the fast loop)",
            pytrace=False,
        )


class _IntegrationGuard:
    """The hooks of the check, registered as a plugin so that they also see session-scoped fixtures
    (a conftest's own hooks only see what happens below its folder)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
        global _events
        outer, _events = _events, []
        try:
            return (yield)
        finally:
            if _events:
                _fixture_events.setdefault(fixturedef, []).extend(_events)
            _events = None if outer is None else [*outer, *_events]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        global _events
        _events = []
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        global _events
        _check(item, _events or [])  # set-up (its fixtures' included) started something: fail at once
        _events = []
        result = yield
        _check(item, _events)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, Any]:
        global _events
        _events = []
        try:
            return (yield)
        finally:
            events, _events = _events, None
            _check(item, events, fixtures=False)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_IntegrationGuard(), "docs-mcp-integration-guard")
