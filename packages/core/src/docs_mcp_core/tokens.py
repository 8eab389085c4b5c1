"""Offline token counting for embedding inputs.

OpenAI's embedding models accept at most 8,191 tokens per input. docs-mcp measures inputs with the
same tokenizer those models use (tiktoken's ``cl100k_base``) and cuts anything longer, instead of the
original's blind 24,000-character cut. tiktoken normally downloads its rank table on first use;
here the table ships inside the package (``docs_mcp_core/data/cl100k_base.tiktoken``, see the
``NOTICE`` beside it) and is verified against tiktoken's pinned SHA-256, so counting never touches
the network. The encoding is loaded lazily, once per process, on the first call.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from importlib import resources

import tiktoken

ENCODING_NAME = "cl100k_base"
ENCODING_FILE = "cl100k_base.tiktoken"
ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# Same split pattern and special tokens as tiktoken_ext/openai_public.py's cl100k_base.
_CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

DEFAULT_EMBEDDING_TOKEN_LIMIT = 8191
"""Context window used for embedding models the table below does not know."""

EMBEDDING_MODEL_TOKEN_LIMITS: dict[str, int] = {
    "text-embedding-3-large": 8191,
    "text-embedding-3-small": 8191,
    "text-embedding-ada-002": 8191,
}

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def _load_ranks() -> dict[bytes, int]:
    """Read and verify the shipped rank table (tiktoken's own file format)."""
    data = resources.files("docs_mcp_core").joinpath("data", ENCODING_FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != ENCODING_SHA256:
        raise RuntimeError(
            f"docs_mcp_core/data/{ENCODING_FILE} is corrupt (sha256 {digest}, expected "
            f"{ENCODING_SHA256}); reinstall docs-mcp-core"
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def get_encoding() -> tiktoken.Encoding:
    """The ``cl100k_base`` encoding, built from the shipped file on first use (thread-safe)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = tiktoken.Encoding(
                    name=ENCODING_NAME,
                    pat_str=_CL100K_PAT_STR,
                    mergeable_ranks=_load_ranks(),
                    special_tokens=_CL100K_SPECIAL_TOKENS,
                )
    return _encoding


def count_tokens(text: str) -> int:
    """Number of ``cl100k_base`` tokens in ``text`` (special-token markers count as plain text)."""
    return len(get_encoding().encode_ordinary(text))


def token_upper_bound(text: str) -> int:
    """A cheap upper bound on :func:`count_tokens`: every token covers at least one UTF-8 byte.

    Short texts are bounded by their byte length without tokenizing; long ones are counted exactly.
    """
    size = len(text.encode("utf-8"))
    return size if size <= 4096 else count_tokens(text)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` (cut on a token boundary) that has at most ``max_tokens`` tokens.

    Text that already fits is returned unchanged. A multi-byte character split by the cut is dropped
    rather than replaced, so the result is always a clean prefix of the input.
    """
    if max_tokens <= 0:
        return ""
    if len(text.encode("utf-8")) <= max_tokens:
        return text
    encoding = get_encoding()
    tokens = encoding.encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    keep = max_tokens
    while keep > 0:
        prefix = encoding.decode_bytes(tokens[:keep]).decode("utf-8", errors="ignore")
        # Re-tokenising a prefix can (rarely) merge differently; shrink until it really fits.
        if len(encoding.encode_ordinary(prefix)) <= max_tokens:
            return prefix
        keep -= 1
    return ""


def embedding_token_limit(model: str) -> int:
    """The per-input token window of an OpenAI embedding model."""
    return EMBEDDING_MODEL_TOKEN_LIMITS.get(model, DEFAULT_EMBEDDING_TOKEN_LIMIT)
