"""Pages of a command-line tool's reference: the command's own name, and where a man page begins.

Books of command-line tools generate one page per command, named with the tool's name first
(``commands/cargo-yank.md``, ``reference/cli/uv-tool-install.md``, ``git-rebase.txt``), and many of
them render the command's man page, whose first sections are a header, not an introduction: ``NAME``
(the command and one line) and ``SYNOPSIS`` (its usage line), then ``DESCRIPTION``.

A reader names such a page by the command (``yank``, ``tool install``), not by the tool's name that
every page of the folder repeats. So when most file names of a folder start with the same word
(:func:`tool_prefixes`), a page of that folder is also named by its file name without that word
(:func:`command_names`); and a section headed ``NAME`` or ``SYNOPSIS`` is never a page's
introduction (:func:`is_man_header`): the topic signal (:mod:`.intent`) then finds the description.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

__all__ = ["MAN_HEADERS", "command_names", "is_man_header", "tool_prefixes"]

MAN_HEADERS = frozenset({"name", "synopsis"})
PREFIX_SHARE = 0.8  # of a folder's file names that start with the same word ...
PREFIX_MIN_FILES = 5  # ... of at least this many files, for that word to be the tool's name
_STEM_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def _stem_words(filepath: str) -> list[str]:
    return _STEM_WORD_RE.findall(filepath.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower())


def tool_prefixes(filepaths: Iterable[str]) -> dict[str, str]:
    """Folder -> the word that at least :data:`PREFIX_SHARE` of its files' names (of two words or
    more, at least :data:`PREFIX_MIN_FILES` files) start with: ``commands`` -> ``cargo``."""
    firsts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    files: Counter[str] = Counter()
    for path in set(filepaths):
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        files[folder] += 1
        words = _stem_words(path)
        if len(words) >= 2:
            firsts[folder][words[0]] += 1
    prefixes: dict[str, str] = {}
    for folder, counts in firsts.items():
        word, count = counts.most_common(1)[0]
        if count >= PREFIX_MIN_FILES and count >= PREFIX_SHARE * files[folder]:
            prefixes[folder] = word
    return prefixes


def command_names(filepath: str, prefixes: dict[str, str]) -> set[str]:
    """The file name of a page without its folder's tool prefix, as one word (``commands/cargo-yank.md``
    -> ``yank``; ``reference/cli/uv-tool-install.md`` -> ``toolinstall``); empty for other pages."""
    prefix = prefixes.get(filepath.rsplit("/", 1)[0] if "/" in filepath else "")
    words = _stem_words(filepath)
    if prefix is None or len(words) < 2 or words[0] != prefix:
        return set()
    return {"".join(words[1:])}


def is_man_header(heading: str) -> bool:
    """Whether a section is a man page's header (``NAME``, ``SYNOPSIS``), not its introduction."""
    return heading.strip().lower() in MAN_HEADERS
