"""Counting the tokens an agent reads, with tiktoken's ``o200k_base`` (current chat models' tokenizer).

The harness imports no docs-mcp package, but when ``docs-mcp-core`` is installed beside it (as in this
repository's workspace) its shipped, compressed rank table is read as a data file, so counting works
without a network. Otherwise tiktoken loads ``o200k_base`` itself (downloaded once into its cache).
"""

from __future__ import annotations

import base64
import hashlib
import lzma
import threading
from importlib import resources

import tiktoken

from docs_mcp_eval.errors import EvalError

ENCODING = "o200k_base"
_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # of the uncompressed table
_PAT_STR = "|".join(  # tiktoken_ext.openai_public.o200k_base
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def _shipped_table() -> bytes | None:
    """docs-mcp-core's copy of the rank table, uncompressed, or ``None`` when it is not installed."""
    try:
        packed = resources.files("docs_mcp_core").joinpath("data", "o200k_base.tiktoken.xz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return None
    table = lzma.decompress(packed)
    return table if hashlib.sha256(table).hexdigest() == _SHA256 else None


def encoding() -> tiktoken.Encoding:
    """The ``o200k_base`` encoding, built once per process."""
    global _encoding
    with _lock:
        if _encoding is None:
            table = _shipped_table()
            if table is None:
                try:
                    _encoding = tiktoken.get_encoding(ENCODING)
                except Exception as exc:  # noqa: BLE001 - a download that failed: one clear line
                    raise EvalError(
                        f"cannot load the {ENCODING} tokenizer to count tokens read ({exc}); install "
                        "docs-mcp-core beside docs-mcp-eval, or run once with network access"
                    ) from None
            else:
                ranks = {
                    base64.b64decode(token): int(rank)
                    for token, rank in (line.split() for line in table.splitlines() if line)
                }
                _encoding = tiktoken.Encoding(
                    name=ENCODING, pat_str=_PAT_STR, mergeable_ranks=ranks, special_tokens=_SPECIAL
                )
        return _encoding


def count_tokens(text: str) -> int:
    """Tokens of ``text`` (special-token markers count as plain text)."""
    return len(encoding().encode_ordinary(text))
