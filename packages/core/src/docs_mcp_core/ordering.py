"""The one deterministic string order used everywhere (files, taxonomy values, overrides, tie-breaks).

The original sorts with JavaScript's ``localeCompare``: ICU's root collation, which compares the
characters' base letters first (case and accents aside), then their accents, then their case
(lowercase first), and which orders punctuation neither by code point nor as it is typed
(``_`` before ``-`` before ``.`` before ``/`` before ``#``, all before digits and letters). Paths and
chunk ids are made of exactly those characters (``container_ls.md`` against ``container.md``), so a
code-point order puts many of them elsewhere than the original does, and equal scores would then
rank differently under ``--ranking original``.

:func:`sort_key` reproduces that order for ASCII text exactly (the base-letter order of every ASCII
character as ICU 78 gives it; checked against Node's ``localeCompare`` on every chunk id of the
corpora we measure and on random strings of every printable character), ignoring the control
characters ICU ignores. Beyond ASCII it is close, not exact: accents are compared after base letters
in ICU's order of the common combining marks, ``ß`` counts as ``ss`` and ``æ`` as ``ae``, and letters
of other scripts follow the Latin ones by code point. It never depends on the machine's locale.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# Which order a stored order (a derived file's tie-break ranks) was made with. 1: case-folded code
# points; 2: ICU's root collation.
ORDER_VERSION = 2

# ASCII in the order of ICU's root collation (its primary weights): whitespace, punctuation and
# symbols, digits, letters. Upper-case letters share their lower-case letter's place.
_ICU_ASCII = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_PRIMARY: dict[int, str | None] = {ord(c): chr(0x21 + i) for i, c in enumerate(_ICU_ASCII)}
_PRIMARY.update({ord(c.upper()): chr(0x21 + _ICU_ASCII.index(c)) for c in "abcdefghijklmnopqrstuvwxyz"})
_IGNORED: dict[int, str | None] = {i: None for i in (*range(0x20), 0x7F) if i not in _PRIMARY}
_PRIMARY.update(_IGNORED)  # the control characters ICU ignores
_ASCII_PRIMARY = bytes(ord(_PRIMARY.get(i) or "\0") for i in range(128)) + bytes(range(128, 256))
_ASCII_IGNORED = bytes(_IGNORED)
# ICU's order of the combining marks (the accents' weights), the common ones first
_MARKS = (
    "\u034f\u0332\u0313\u0343\u0314\u0301\u0341\u0300\u0340\u0306\u0302\u030c\u030a\u0342\u0308"
    "\u0344\u030b\u0303\u0307\u0338\u0327\u0328\u0304\u030d\u030e\u0312\u0315\u031a"
)
_MARK_RANK = {mark: chr(0x21 + i) for i, mark in enumerate(_MARKS)}
# Latin letters without a decomposition that ICU sorts as a base letter with an accent (or two)
_VARIANTS = {"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "ł": "l", "ħ": "h", "ı": "i"}
_VARIANT_MARK = chr(0x21 + len(_MARKS))


def sort_key(value: str) -> tuple[bytes, bytes, bytes, str]:
    """Key for :func:`sorted` that orders strings as ICU's root collation does (see the module's
    docstring): base letters, then accents, then case, then code points (for strings ICU holds
    equal)."""
    if value.isascii():
        kept = value.encode("ascii").translate(None, _ASCII_IGNORED)
        return (kept.translate(_ASCII_PRIMARY), b"", kept.swapcase(), value)
    base: list[str] = []
    marks: list[str] = []
    for char in unicodedata.normalize("NFD", value):
        if unicodedata.combining(char):
            marks.append(_MARK_RANK.get(char, char))
        elif char.lower() in _VARIANTS:
            letters = _VARIANTS[char.lower()]
            base.append(letters if char.islower() else letters.upper())
            marks.append(_VARIANT_MARK + " " * (len(letters) - 1))
        else:
            base.append(char)
            marks.append(" ")
    letters = "".join(base).translate(_IGNORED)
    return (
        _utf8(letters.casefold().translate(_PRIMARY)),
        _utf8("".join(marks).rstrip()),
        _utf8(letters.swapcase()),
        value,
    )


def _utf8(text: str) -> bytes:
    # code-point order as bytes; a file name that is not UTF-8 holds lone surrogates (surrogateescape)
    return text.encode("utf-8", "surrogatepass")


def sorted_strings(values: Iterable[str]) -> list[str]:
    """Return ``values`` in the project's deterministic order."""
    return sorted(values, key=sort_key)
