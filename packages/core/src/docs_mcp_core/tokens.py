"""Offline token counting: embedding inputs and the token budgets of the tools' answers.

Two of OpenAI's tokenizers ship inside the package, in tiktoken's own rank-table format, and are
verified against the SHA-256 that tiktoken pins for them, so counting never touches the network
(plain tiktoken downloads its tables on first use):

* ``cl100k_base`` (``data/cl100k_base.tiktoken``): the tokenizer of OpenAI's embedding models.
  Embedding inputs are measured with it and cut at the model's window (8,191 tokens), instead of
  the original's blind 24,000-character cut.
* ``o200k_base`` (``data/o200k_base.tiktoken.xz``, xz-compressed: 1.2 MB instead of 3.6 MB): the
  tokenizer of current OpenAI chat models, and the default for ``max_tokens`` budgets
  (:mod:`docs_mcp_core.search.budget`).

See ``data/NOTICE`` for where each file comes from. An encoding is loaded lazily, once per process,
on its first use (cl100k_base about 0.2 s, o200k_base about 0.4 s), and tiktoken is imported then:
a search without a token budget, a starting server's first one among them, never needs it.
"""

from __future__ import annotations

import base64
import hashlib
import lzma
import threading
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME = "cl100k_base"  # the embedding models' tokenizer
ENCODING_FILE = "cl100k_base.tiktoken"
ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
TokenEncoding = Literal["cl100k_base", "o200k_base"]  # the keys of ENCODINGS
BUDGET_ENCODING: TokenEncoding = "o200k_base"  # the default tokenizer of max_tokens budgets


@dataclass(frozen=True)
class EncodingSpec:
    """How to build one shipped encoding: the same split pattern and special tokens as
    tiktoken_ext/openai_public.py, and the rank table's file and pinned SHA-256 (of the
    uncompressed table)."""

    name: str
    file: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int] = field(default_factory=dict)


ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        file=ENCODING_FILE,
        sha256=ENCODING_SHA256,
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
            r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        name="o200k_base",
        file="o200k_base.tiktoken.xz",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}
"""The encodings this package can load offline, by tiktoken name."""

DEFAULT_EMBEDDING_TOKEN_LIMIT = 8191
"""Context window used for embedding models the table below does not know."""

EMBEDDING_MODEL_TOKEN_LIMITS: dict[str, int] = {
    "text-embedding-3-large": 8191,
    "text-embedding-3-small": 8191,
    "text-embedding-ada-002": 8191,
}

_lock = threading.Lock()
_encodings: dict[str, tiktoken.Encoding] = {}


def _load_ranks(spec: EncodingSpec) -> dict[bytes, int]:
    """Read (and decompress) a shipped rank table and verify it."""
    data = resources.files("docs_mcp_core").joinpath("data", spec.file).read_bytes()
    if spec.file.endswith(".xz"):
        data = lzma.decompress(data)
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise RuntimeError(
            f"docs_mcp_core/data/{spec.file} is corrupt (sha256 {digest}, expected {spec.sha256}); "
            "reinstall docs-mcp-core"
        )
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def get_encoding(name: str = ENCODING_NAME) -> tiktoken.Encoding:
    """A shipped encoding (``cl100k_base`` by default), built on first use (thread-safe).

    Raises ``ValueError`` for a name that is not in :data:`ENCODINGS`.
    """
    encoding = _encodings.get(name)
    if encoding is not None:
        return encoding
    spec = ENCODINGS.get(name)
    if spec is None:
        raise ValueError(f"unknown token encoding '{name}'. Valid encodings: {', '.join(ENCODINGS)}")
    import tiktoken

    with _lock:
        encoding = _encodings.get(name)
        if encoding is None:
            encoding = tiktoken.Encoding(
                name=spec.name,
                pat_str=spec.pat_str,
                mergeable_ranks=_load_ranks(spec),
                special_tokens=spec.special_tokens,
            )
            # tiktoken keeps the rank table it was given only to pickle the encoding, which
            # nothing here does; its tokenizer holds its own copy. Dropped, the two encodings
            # hold 63 MB instead of 105 (measured in Private_Dirty after a build of both).
            encoding._mergeable_ranks = {}
            from docs_mcp_core.memory import release_free_heap

            release_free_heap()
            _encodings[name] = encoding
    return encoding


def count_tokens(text: str, encoding: str = ENCODING_NAME) -> int:
    """Number of tokens in ``text`` (special-token markers count as plain text)."""
    return len(get_encoding(encoding).encode_ordinary(text))


def token_upper_bound(text: str) -> int:
    """A cheap upper bound on :func:`count_tokens`: every token covers at least one UTF-8 byte.

    Short texts are bounded by their byte length without tokenizing; long ones are counted exactly.
    """
    size = len(text.encode("utf-8"))
    return size if size <= 4096 else count_tokens(text)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` (cut on a ``cl100k_base`` token boundary) that has at most
    ``max_tokens`` tokens.

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
