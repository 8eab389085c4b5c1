"""A query's word pieces for the shipped model, without the ``tokenizers`` library, for ASCII text.

A server embeds each search query with the shipped model (the heading-path leg of the default
build, the vector leg of a ``local`` one). Loading the ``tokenizers`` library and the model's
tokenizer costs a starting server about 27 ms under the interpreter's lock (the import 12 ms,
reading ``tokenizer.json`` 15 ms) before its first answer; reading the vocabulary of that same file
with :mod:`json` costs 8 ms, and the word pieces of a query take microseconds in Python.

:class:`QueryPieces` does what the model's tokenizer does (BERT's uncased normaliser, its
pre-tokeniser, greedy longest-match WordPiece, ``[CLS]`` and ``[SEP]``, truncation) for text of
ASCII characters only, where every step is a plain rule: control characters dropped, whitespace
separating words, each punctuation mark a word of its own, upper case lowered. Anything else (accents
to strip, Chinese characters to isolate, Unicode punctuation and whitespace, the tokenizer's own
tokens such as ``[MASK]`` written in the text) is left to the library:
:meth:`QueryPieces.encode` returns ``None`` for it, as it does for a ``tokenizer.json`` that does not
describe exactly that tokenizer. ``tests/core/test_wordpiece.py`` compares the two on every query of
the evaluation sets and on generated text.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["QueryPieces"]

_PUNCTUATION = frozenset(string.punctuation)  # Rust's is_ascii_punctuation: the same 32 characters
_WHITESPACE = frozenset("\t\n\r ")
# BERT's clean-up drops NUL and the control characters (category Cc) but tab, newline and return
_DROPPED = frozenset(chr(c) for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F))
_EXPECTED_NORMALIZER = {
    "type": "BertNormalizer",
    "clean_text": True,
    "handle_chinese_chars": True,
    "strip_accents": None,
    "lowercase": True,
}


class QueryPieces:
    """The shipped model's tokenizer for ASCII text (see the module's docstring)."""

    def __init__(
        self,
        vocab: Mapping[str, int],
        max_tokens: int,
        max_word_chars: int = 100,
        added: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
    ) -> None:
        self._vocab = vocab
        self._max_tokens = max_tokens
        self._max_word_chars = max_word_chars
        self._added = added  # tokens the library finds as they are written (``[MASK]``) before splitting
        self._unk, self._cls, self._sep = vocab["[UNK]"], vocab["[CLS]"], vocab["[SEP]"]

    @classmethod
    def load(cls, tokenizer_json: Path, max_tokens: int) -> QueryPieces | None:
        """The pieces of the tokenizer ``tokenizer_json`` describes, or None when it is not the
        uncased BERT WordPiece tokenizer this class reproduces (or cannot be read)."""
        try:
            spec: Any = json.loads(tokenizer_json.read_bytes())
            model = spec["model"]
            if (
                spec.get("normalizer") != _EXPECTED_NORMALIZER
                or spec.get("pre_tokenizer") != {"type": "BertPreTokenizer"}
                or model.get("type") != "WordPiece"
                or model.get("unk_token") != "[UNK]"
                or model.get("continuing_subword_prefix") != "##"
                or _template(spec) != ["[CLS]", "A", "[SEP]"]
            ):
                return None
            vocab = model["vocab"]
            if not isinstance(vocab, dict) or not {"[UNK]", "[CLS]", "[SEP]"} <= vocab.keys():
                return None
            added = tuple(str(token["content"]) for token in spec.get("added_tokens") or [])
            return cls(vocab, max_tokens, int(model.get("max_input_chars_per_word", 100)), added)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
            return None

    def encode(self, text: str) -> list[int] | None:
        """The model's input ids for ``text`` (``[CLS]``, its pieces, ``[SEP]``, at most
        ``max_tokens`` in all), or None when ``text`` is not all ASCII or writes one of the
        tokenizer's own tokens (``[MASK]``), which the library reads as that token."""
        if not text.isascii() or any(token in text for token in self._added):
            return None
        ids: list[int] = []
        room = self._max_tokens - 2
        for word in _words(text.lower()):
            ids.extend(self._pieces(word))
            if len(ids) >= room:
                del ids[room:]
                break
        return [self._cls, *ids, self._sep]

    def _pieces(self, word: str) -> list[int]:
        """Greedy longest-match-first WordPiece; a word with a part not in the vocabulary (or
        longer than the longest word the model reads) is one ``[UNK]``."""
        if len(word) > self._max_word_chars:
            return [self._unk]
        vocab, pieces, start = self._vocab, [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self._unk]
            pieces.append(found)
            start = end
        return pieces


def _words(text: str) -> list[str]:
    """BERT's clean-up and pre-tokeniser on lower-cased ASCII text: the words and punctuation marks."""
    words: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _DROPPED:
            continue
        if char in _WHITESPACE or char in _PUNCTUATION:
            if current:
                words.append("".join(current))
                current = []
            if char in _PUNCTUATION:
                words.append(char)
            continue
        current.append(char)
    if current:
        words.append("".join(current))
    return words


def _template(spec: Mapping[str, Any]) -> list[str] | None:
    """The single-sequence template of the post-processor, as its special tokens and ``A``."""
    single = (spec.get("post_processor") or {}).get("single")
    if not isinstance(single, list):
        return None
    out: list[str] = []
    for item in single:
        if "SpecialToken" in item:
            out.append(item["SpecialToken"]["id"])
        elif "Sequence" in item:
            out.append(item["Sequence"]["id"])
    return out
