"""The terminal progress line."""

from __future__ import annotations

import io

import pytest

from docs_mcp_eval.progress import Progress


def test_progress_redraws_one_line_and_clears_it() -> None:
    stream = io.StringIO()
    progress = Progress(stream, "hash")
    progress.update(1, 3, 1.0)
    progress.update(2, 3, 0.75)
    progress.close()
    text = stream.getvalue()
    assert text.startswith("\rhash: case 1 of 3  MRR@5 1.0000\rhash: case 2 of 3  MRR@5 0.7500")
    assert text.endswith("\r" + " " * len("hash: case 1 of 3  MRR@5 1.0000") + "\r")
    assert "\n" not in text


def test_progress_is_quiet_when_stderr_is_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert Progress.for_stderr() is None
