"""A query's word pieces without the tokenizers library: exactly the library's ids for ASCII text,
none for anything else (the library then splits it)."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from docs_mcp_core.embedding.wordpiece import QueryPieces

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = ROOT / "packages/core/src/docs_mcp_core/models/all-MiniLM-L6-v2/tokenizer.json"
MAX_TOKENS = 256


@pytest.fixture(scope="module")
def library() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_TOKENS)
    return tokenizer


@pytest.fixture(scope="module")
def pieces() -> QueryPieces:
    loaded = QueryPieces.load(TOKENIZER, MAX_TOKENS)
    assert loaded is not None
    return loaded


def _queries() -> Iterator[str]:
    """Every query of the evaluation sets in the repository, and of the shared development sets."""
    for path in sorted((ROOT / "evals").glob("*/*.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            yield case["query"]
    for path in sorted((ROOT.parent / "shared" / "corpora").glob("*-cases.json")):
        for case in json.loads(path.read_text(encoding="utf-8")):
            yield case["query"]


def _generated(seed: int) -> str:
    """Text of every kind ASCII has: words, identifiers, punctuation runs, digits, control
    characters, tabs and newlines, words longer than the model reads, ``##`` in the text."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t\n\r\x00\x01\x0b\x0c\x1f\x7f"
    parts = []
    for _ in range(rng.randint(0, 40)):
        kind = rng.random()
        if kind < 0.5:
            words = [
                "create",
                "links",
                "Webhook",
                "createMany",
                "UV_CACHE_DIR",
                "##ing",
                "[unused1]",
                "[mask]",
            ]
            parts.append(rng.choice(words))
        elif kind < 0.6:
            parts.append("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(90, 110))))
        else:
            parts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))))
    return rng.choice([" ", "", "\t", "-"]).join(parts)


def test_every_query_of_the_sets_gets_the_librarys_ids(library: Tokenizer, pieces: QueryPieces) -> None:
    queries = list(_queries())
    assert len(queries) > 1000
    compared = 0
    for query in queries:
        ours = pieces.encode(query)
        if ours is None:
            assert not query.isascii()
            continue
        assert ours == library.encode(query).ids, query
        compared += 1
    assert compared > 1000


@pytest.mark.parametrize("seed", range(300))
def test_generated_ascii_text_gets_the_librarys_ids(
    library: Tokenizer, pieces: QueryPieces, seed: int
) -> None:
    text = _generated(seed)
    assert pieces.encode(text) == library.encode(text).ids, repr(text)


def test_long_text_is_cut_where_the_library_cuts_it(library: Tokenizer, pieces: QueryPieces) -> None:
    for text in (
        " ".join(f"token{i % 50} alpha" for i in range(300)),
        "a " * 254,
        "a " * 255,
        ". " * 400,
    ):
        ours = pieces.encode(text)
        assert ours == library.encode(text).ids
        assert ours is not None and len(ours) <= MAX_TOKENS


@pytest.mark.parametrize(
    "text", ["café", "naïve users", "日本語", "a\u00a0b", "\ud800", "emoji 🎉", "use [MASK] here", "[CLS]x"]
)
def test_text_that_is_not_ascii_or_writes_a_special_token_is_left_to_the_library(
    pieces: QueryPieces, text: str
) -> None:
    assert pieces.encode(text) is None


@pytest.mark.parametrize(
    "change",
    [
        lambda spec: spec["normalizer"].update(lowercase=False),
        lambda spec: spec.update(pre_tokenizer={"type": "Whitespace"}),
        lambda spec: spec["model"].update(type="BPE"),
        lambda spec: spec["model"]["vocab"].pop("[UNK]"),
        lambda spec: spec.update(post_processor=None),
    ],
)
def test_a_tokenizer_of_another_kind_is_not_imitated(tmp_path: Path, change: object) -> None:
    spec = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    change(spec)  # type: ignore[operator]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    assert QueryPieces.load(path, MAX_TOKENS) is None
    path.write_text("{not json", encoding="utf-8")
    assert QueryPieces.load(path, MAX_TOKENS) is None
    assert QueryPieces.load(tmp_path / "missing.json", MAX_TOKENS) is None
