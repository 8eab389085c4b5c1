"""Log records: JSON lines shaped like the original's LogTape output, or a pretty single line."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from docs_mcp_server.logs import TRACE, Throttled, configure_logging, log, parse_level


@pytest.fixture
def restore_logging() -> Iterator[None]:
    loggers = [logging.getLogger(), logging.getLogger("docs_mcp_server"), logging.getLogger("uvicorn.access")]
    saved = [(lg.handlers[:], lg.level, lg.propagate, lg.disabled) for lg in loggers]
    yield
    for lg, (handlers, level, propagate, disabled) in zip(loggers, saved, strict=True):
        lg.handlers[:], lg.level, lg.propagate, lg.disabled = handlers, level, propagate, disabled


def test_json_lines(restore_logging: None) -> None:
    stream = io.StringIO()
    configure_logging(logging.INFO, stream=stream)
    log(logging.INFO, "started mcp server", url="http://127.0.0.1:1/mcp", port=1)
    log(logging.DEBUG, "not shown")
    log(logging.WARNING, "careful")
    logging.getLogger("mcp.server").warning("from the sdk")
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["message"] for r in records] == ["started mcp server", "careful", "from the sdk"]
    first = records[0]
    assert list(first) == ["@timestamp", "level", "logger", "message", "properties"]
    assert first["level"] == "INFO" and first["logger"] == "app"
    assert first["@timestamp"].endswith("Z")
    assert first["properties"] == {"url": "http://127.0.0.1:1/mcp", "port": 1}
    assert records[1]["level"] == "WARN"
    assert records[2]["properties"] == {"source": "mcp.server"}


def test_pretty(restore_logging: None) -> None:
    stream = io.StringIO()
    configure_logging(TRACE, pretty=True, stream=stream)
    log(TRACE, "tiny detail", n=2)
    line = stream.getvalue().strip()
    assert line.endswith(" TRACE app: tiny detail n=2")


def test_level_names() -> None:
    assert parse_level("debug") == logging.DEBUG
    assert parse_level(" Warning ") == parse_level("warn") == logging.WARNING
    assert parse_level("fatal") == logging.CRITICAL
    with pytest.raises(
        ValueError, match="LOG_LEVEL must be one of: trace, debug, info, warning, error, fatal"
    ):
        parse_level("verbose", "LOG_LEVEL")


def test_a_throttled_line_is_written_once_per_interval(restore_logging: None) -> None:
    stream = io.StringIO()
    configure_logging(logging.INFO, stream=stream)
    refusals = Throttled(3600.0)
    for n in range(1000):  # a flood of the same event
        refusals.log(logging.WARNING, "refusing connections: too many are open", n=n)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["message"], r["properties"]) for r in records] == [
        ("refusing connections: too many are open", {"n": 0})
    ]
    every_time = Throttled(0.0)
    assert every_time.due() and every_time.due()
