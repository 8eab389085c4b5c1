"""Human titles for documentation files (MCP resource titles).

``sentence_case`` reproduces change-case 5's ``sentenceCase`` (word splitting on case changes and
non-alphanumerics, first word capitalised, the rest lower-cased); ``proper_case`` restores the
canonical spelling of well-known acronyms and product names ("api" → "API", "typescript" →
"TypeScript"). Together they turn ``guides/rate-limiting.md`` into ``Guides / Rate limiting``.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata

_DICTIONARY: dict[str, str] = {
    word.upper(): word
    for word in (
        ".NET", "AGI", "AI", "API", "CLI", "CSharp", "CSS", "CSV", "HTML", "HTTP", "HTTPS", "ID", "IP",
        "JavaScript", "JS", "JSON", "JSONL", "JWE", "JWK", "JWS", "JWT", "LLM", "Markdown", "MCP", "ML",
        "OpenAI", "OpenAPI", "PKI", "RFC", "SDK", "SQL", "SSE", "SSL", "TCP", "TLS", "TypeScript", "UDP",
        "URL", "UUID", "XML", "YAML",
    )
}  # fmt: skip
_DELIMITERS = re.compile(r"([ -])")


def _is_lower(char: str) -> bool:
    return unicodedata.category(char) == "Ll"


def _is_upper(char: str) -> bool:
    return unicodedata.category(char) == "Lu"


def _is_digit(char: str) -> bool:
    return "0" <= char <= "9"


def split_words(value: str) -> list[str]:
    """Split like change-case: at lower→Upper and UPPER→Upperlower boundaries and at non-alphanumerics."""
    text = value.strip()
    out: list[str] = []
    i = 0
    while i < len(text):  # "aB" / "1B" → "a\0B"
        if i + 1 < len(text) and (_is_lower(text[i]) or _is_digit(text[i])) and _is_upper(text[i + 1]):
            out += [text[i], "\0", text[i + 1]]
            i += 2
        else:
            out.append(text[i])
            i += 1
    text = "".join(out)
    out = []
    i = 0
    while i < len(text):  # "XMLHttp" → "XML\0Http"
        if i + 2 < len(text) and _is_upper(text[i]) and _is_upper(text[i + 1]) and _is_lower(text[i + 2]):
            out += [text[i], "\0", text[i + 1], text[i + 2]]
            i += 3
        else:
            out.append(text[i])
            i += 1
    words: list[str] = []
    current: list[str] = []
    for char in out:
        if char != "\0" and (char.isalpha() or _is_digit(char)):
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return words


def sentence_case(value: str) -> str:
    """``"rate-limiting"`` → ``"Rate limiting"``; ``"."`` → ``""``."""
    words = split_words(value)
    return " ".join(
        (word[:1].upper() + word[1:].lower()) if index == 0 else word.lower()
        for index, word in enumerate(words)
    )


def proper_case(value: str) -> str:
    """Replace known acronyms and product names (whole string first, then each space/hyphen word)."""
    found = _DICTIONARY.get(value.upper())
    if found:
        return found
    parts = _DELIMITERS.split(value)
    if len(parts) <= 1:
        return value
    return "".join(part if i % 2 else _DICTIONARY.get(part.upper(), part) for i, part in enumerate(parts))


def file_title(filepath: str, title: str | None = None) -> str:
    """Resource title: each directory name and the file's title (or name) in proper case, joined by ``/``.

    Unlike the original, a file at the corpus root gets no leading ``" / "``.
    """
    directory, basename = posixpath.split(filepath)
    stem = posixpath.splitext(basename)[0]
    parts = [proper_case(sentence_case(part)) for part in directory.split("/") if part]
    parts = [part for part in parts if part]
    tail = title.strip() if title and title.strip() else proper_case(sentence_case(stem))
    parts.append(tail or basename)
    return " / ".join(parts)
