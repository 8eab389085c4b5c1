"""Anchors: the names reference pages give their definitions, and the names a query gives them.

Reference pages generated for command-line tools and configuration files name each definition in an
element id: the option block of a command (``<dt id="uv-sync--frozen">``), the section of a
configuration key (``### cache-dir {: #cache-dir }``, ``{: #pip_index-url }``). The id is the
definition's full name slugged: the command and the option, the table and the key. A chunk's ids
(and its heading, when the heading is one key- or flag-shaped name) are stored as anchor spellings
(:data:`ANCHOR_MARK`, words joined by dots); a query that names a flag (``--frozen``), a kebab-case
or bracketed key (``required-version``, ``[pip] torch-backend``) gets the slugs of the word runs
around that name as anchor spellings, so ``uv sync --frozen`` finds ``uv-sync--frozen``, and
``[pip] torch-backend`` finds ``pip_torch-backend`` rather than the top-level ``torch-backend``. A
key of one word has an id of one word (``### package {: #package }``): a chunk stores its heading's
one-word id too, and only a query that writes such a key with its table (``tool.uv.package``,
``[tool.uv] package``) asks for one, so the word in prose (``build a package``) never does. A
command's page titled in its front matter (``title: pnpm add <pkg>``) that defines its options by
headings (``### --save-peer``) stores them with the command (``pnpm.add.--save.peer``), as an id
would. Page names (:data:`PAGE_MARK`) are the words of a file's name.

The names a chunk defines below its own heading (:func:`defined_names`) are read here too, from the
lines outside its fenced code (:func:`fenced_lines`, which :mod:`docs_mcp_core.spellings` reads the
code from). :mod:`docs_mcp_core.spellings` stores these anchors beside a chunk's identifier
spellings, in one column the spelling leg searches.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

__all__ = [
    "ANCHOR_MARK",
    "PAGE_MARK",
    "anchor_slug",
    "chunk_anchors",
    "defined_names",
    "element_ids",
    "fenced_lines",
    "is_constant_name",
    "is_dotted_key",
    "key_tails",
    "one_word_ids",
    "option_links",
    "query_anchors",
    "query_constants",
    "query_key_in_bare_file",
    "query_option_names",
    "query_page_names",
    "query_writes_a_key_shape",
    "table_keys",
]

_FENCE_OPEN_RE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_TABLE_RE = re.compile(r"\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\]")  # [package], [profile.release]
_CODE_KEY_RE = re.compile(r"`([a-z][a-z0-9_-]{0,60})`")  # a key of a table in code: `edition`
_INNER_HEADING_RE = re.compile(r" {0,3}#{1,6}[ \t]+(.*)")  # its closing #s are stripped after: linear
# a list item that opens with one name in code and a dash or colon: "* `CARGO_HOME` --- ..."
_DEFINITION_ITEM_RE = re.compile(
    r"[ \t]{0,3}[*+-][ \t]+`([^`\n]{2,100})`[ \t]*(?:-{1,3}|\u2014|\u2013|:)[ \t]"
)

ANCHOR_MARK = "~"  # prefixed to an anchor spelling (an element id's words, joined by dots)
PAGE_MARK = "="  # prefixed to a page name: the words of a file's name (``uv-tool-install.md``)
MAX_ANCHOR_WORDS = 8
# ids that name a definition: HTML id/name attributes, attribute lists ({: #id } / {#id})
MAX_LINKED_OPTIONS = 8  # options an options table may link to one section
_OPTION_LINK_RE = re.compile(r"\[`?(--?[A-Za-z0-9][\w-]*)`?\]\(#([\w-]{1,100})\)")
_ID_ATTR_RE = re.compile(r"""<[A-Za-z][^<>]*?\s(?:id|name)\s*=\s*["']([^"'<>]{1,200})["']""")
_ATTR_LIST_RE = re.compile(r"\{:?\s*#([A-Za-z0-9_:.-]{1,200})[^{}\n]*\}")
_SLUG_WORD_RE = re.compile(r"-{2,}[a-z0-9]+|[a-z0-9]+")  # "--frozen" keeps its dashes
# a key- or flag-shaped query word: an option (--frozen, -n), a bracketed table ([pip]), or a name
# with a hyphen between word characters (required-version, project.requires-python)
_KEYISH_RE = re.compile(r"^(?:--?[A-Za-z0-9]|\[.+\]$)|[A-Za-z0-9]-[A-Za-z0-9]")
_QUERY_WORD_RE = re.compile(r"[^\s]+")
_HYPHENATED_RE = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")  # re-open, two-factor, requires-python
_CONSTANT_RE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # UV_NO_CACHE, MAX_RETRIES
_ONE_WORD_RE = re.compile(r"[a-z][a-z0-9]*")  # a key of one word, after its [table]
# a dotted key whose last part is one word (tool.uv.package, tool.uv.pip.strict): its id may be
# that one word, which no key-shaped word of the query asks for otherwise
_DOTTED_KEY_RE = re.compile(r"(?:[a-z][a-z0-9]+(?:[-_][a-z0-9]+)*\.)+[a-z][a-z0-9]+")
# the last part of a file's name, not of a key (uv.toml, package.json, requirements.txt)
_CONFIG_SUFFIXES = frozenset({"toml", "json", "yaml", "yml", "cfg", "conf", "ini"})
_FILE_SUFFIXES = frozenset(
    {
        "cfg",
        "conf",
        "css",
        "csv",
        "env",
        "go",
        "html",
        "ini",
        "js",
        "json",
        "lock",
        "md",
        "mdx",
        "py",
        "rs",
        "sh",
        "toml",
        "ts",
        "txt",
        "xml",
        "yaml",
        "yml",
    }
)
_SHORT_FLAG_RE = re.compile(r"-[A-Za-z0-9]")  # -q, -F: one dash, one letter
_FLAG_RE = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9-]*$")  # a query word that is an option: --frozen, -v
# an HTML element in a heading: <a name="filter"></a> (markdown_text has the build's; it imports the parser)
_TAG_RE = re.compile(r"<[^<>]{0,200}>")
_TRAILING_LIST_RE = re.compile(r"\(([^()]{1,200})\)$")  # the list in parentheses a heading ends with


@functools.lru_cache(maxsize=1)  # a build reads a chunk's code and its definitions from the same lines
def fenced_lines(markdown: str) -> tuple[list[str], list[str]]:
    """The lines of a markdown text inside its fenced code blocks, and the others (not the fences);
    shared by callers: read-only."""
    code: list[str] = []
    prose: list[str] = []
    fence = ""  # the open fence's marker run, "" outside a fenced block
    for line in markdown.split("\n"):
        if fence:
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            else:
                code.append(line)
            continue
        opened = _FENCE_OPEN_RE.match(line)
        if opened is not None:
            fence = opened.group(1)
        else:
            prose.append(line)
    return code, prose


@functools.lru_cache(maxsize=1)  # a build asks twice per chunk (its spellings, its anchors): read-only
def defined_names(content: str) -> list[str]:
    """The names a chunk's text defines below its own heading: the text of each heading inside it
    (a section the chunking kept within its parent, ``#### `build.jobs` ``) and the variable's,
    key's or flag's name in code that opens a list item before a dash or a colon (``* `CARGO_HOME`
    --- ...``, ``- `build.jobs`: ...``: a list of settings); in order, each once. Not a plain
    identifier opening an item (``- `agent_id`: ...``): lists of a call's arguments in a walkthrough
    do that. Fenced code is skipped (a ``# comment`` there is no heading)."""
    if "#" not in content and "`" not in content:
        return []
    found: dict[str, None] = {}
    for number, line in enumerate(fenced_lines(content)[1]):
        heading = _INNER_HEADING_RE.match(line)
        if heading is not None and number:  # a first line that is a heading is the chunk's own
            if text := heading.group(1).rstrip(" \t#").strip():
                found[text] = None
            continue
        item = _DEFINITION_ITEM_RE.match(line)
        if item is not None and _names_a_setting(item.group(1)):
            found[item.group(1)] = None
    return list(found)


def _names_a_setting(name: str) -> bool:
    """Whether ``name`` is written as a variable (``CARGO_HOME``), a key (``build.jobs``,
    ``target-dir``) or a flag (``--locked``) is, rather than as a code identifier (``agent_id``)."""
    return is_constant_name(name) or (bool(_key_heading(name)) and re.search(r"[.-]", name) is not None)


def _slug_words(text: str) -> list[str]:
    """The words of a name or an id, lower-cased; an option keeps two leading dashes (``--frozen``
    in ``uv-sync--frozen``, ``cargo-build---release`` and ``uv sync --frozen`` alike)."""
    return ["--" + w.lstrip("-") if w[0] == "-" else w for w in _SLUG_WORD_RE.findall(text.lower())]


def anchor_slug(text: str) -> str:
    """The words of a name or an id joined by dots (``uv-sync--frozen`` and ``uv sync --frozen``
    both give ``uv.sync.--frozen``); "" for fewer than two words or more than eight."""
    words = _slug_words(text)
    return ".".join(words) if 2 <= len(words) <= MAX_ANCHOR_WORDS else ""


def is_constant_name(text: str) -> bool:
    """Whether ``text`` is an upper-case constant's or environment variable's name (``UV_NO_CACHE``,
    ``MAX_RETRIES``): capitals, digits and underscores, one underscore at least."""
    return _CONSTANT_RE.fullmatch(text) is not None


def _key_heading(heading: str) -> str:
    """The name a heading consists of, when it is one key- or flag-shaped word (``cache-dir``,
    ``[`cache-dir`](#cache-dir) {: #cache-dir }``, ``--frozen``, ``tool.cache_dir``), else "".

    Not an upper-case constant or environment variable (``UV_NO_CACHE``): queries write those in
    their own spelling, which the spelling forms find, and their words slugged (``uv.no.cache``)
    would answer the tail of a configuration key (``tool.uv.no-cache``)."""
    text = _ATTR_LIST_RE.sub("", heading).replace("`", "").strip()
    if text.startswith("[") and "](" in text:
        text = text[1 : text.index("](")]
    if is_constant_name(text):
        return ""
    return text if len(text.split()) == 1 and re.search(r"[-_.]", text.strip("-")) else ""


@functools.lru_cache(maxsize=1)  # a build asks twice per chunk (its spellings, its search text)
def element_ids(heading: str, content: str) -> list[str]:
    """The slugs of a chunk's element ids and attribute-list ids, and of its heading when that is
    one key- or flag-shaped name (``uv.sync.--frozen``, ``cache.dir``); sorted, each once."""
    ids = _ID_ATTR_RE.findall(content) if "id" in content or "name" in content else []
    if "{" in content:
        ids.extend(_ATTR_LIST_RE.findall(content))
    ids.append(_key_heading(heading))
    return sorted({slug for slug in map(anchor_slug, ids) if slug})


def one_word_ids(heading: str) -> list[str]:
    """The ids of one word a heading's attribute list gives it (``package {: #package }``), lower-cased.
    Only a heading's: it is the name the author gave the section, where an id in the text (an HTML
    anchor, a ``<span id>`` kept for old links) may mark anything. Not :func:`element_ids` (they do
    not end the search text): a one-word id says nothing to the words of a query (``package`` is
    everywhere), only to a key the query writes with its table (``tool.uv.package``,
    :func:`query_spellings`)."""
    ids = _ATTR_LIST_RE.findall(heading) if "{" in heading else []
    return sorted({w[0] for w in map(_slug_words, ids) if len(w) == 1 and not w[0].startswith("-")})


def chunk_anchors(
    heading: str,
    content: str,
    commands: Sequence[str] = (),
    linked: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The anchor spellings of a chunk: its :func:`element_ids`, each with its trailing runs of two
    words or more (an id may prefix the name with words of its own: ``option-cargo-build---release``),
    the options its headings name (and those its heading's anchor is named after, when the chunk
    writes them: ``<a name="mount">`` and ``--mount``, or when the page links them to that anchor:
    ``linked``, :func:`option_links`) slugged with each of the page's ``commands`` (``pnpm add``:
    ``pnpm.add.--save.peer``), and its :func:`one_word_ids`; sorted, each once."""
    found: set[str] = set(one_word_ids(heading))
    names = defined_names(content)
    inner = {slug for slug in (anchor_slug(_key_heading(name)) for name in names) if slug}
    inner.update(table_keys(heading, names))
    flags = [flag for name in [heading, *names] for flag in _heading_flags(name)] if commands else []
    if commands:  # a heading's anchor named as an option its section writes: <a name="mount"> and --mount
        ids = _ID_ATTR_RE.findall(heading)
        flags.extend(f"--{i}" for i in ids if _writes_option(content, i))
        flags.extend(flag for i in ids for flag in (linked or {}).get(i, ()))
    for command in commands:  # the options a command's page defines by headings, named with the command
        inner.update(slug for slug in (anchor_slug(f"{command} {flag}") for flag in flags) if slug)
    for slug in inner.union(element_ids(heading, content)):
        words = slug.split(".")
        found.update(".".join(words[start:]) for start in range(len(words) - 1))
    return sorted(found)


def option_links(*texts: str) -> dict[str, list[str]]:
    """The options a page's ``texts`` (its chunks', in order) link to a section of the same page, by
    the section's anchor: an options table's ``[`--publish`](#publish), [`-p`](#publish)`` says the
    section anchored ``publish`` documents ``--publish`` and ``-p`` (as ``--p``: :func:`_as_option`),
    whatever its heading calls them (``Publish or expose port (-p, --expose)``). At most
    :data:`MAX_LINKED_OPTIONS` an anchor: a section documents an option and its short form, not a
    table's worth."""
    found: dict[str, dict[str, None]] = {}
    for text in texts:
        for flag, target in _OPTION_LINK_RE.findall(text):
            options = found.setdefault(target, {})
            if len(options) < MAX_LINKED_OPTIONS:
                options[_as_option(flag)] = None
    return {target: list(options) for target, options in found.items()}


def _writes_option(content: str, name: str) -> bool:
    """Whether ``content`` writes the option ``--name`` (not inside a longer word or option)."""
    return (
        f"--{name}" in content and re.search(rf"(?<![\w-])--{re.escape(name)}(?![\w-])", content) is not None
    )


def _heading_flags(heading: str) -> list[str]:
    """The options a heading names: ``--frozen-lockfile``, ``--recursive, -r`` (each of a list), or
    lists in parentheses at its end after the words that say what they do (``Filtering (--filter)``,
    ``Show all containers (-a, --all)``)."""
    text = _TAG_RE.sub("", _ATTR_LIST_RE.sub("", heading)).strip()
    tail = _TRAILING_LIST_RE.search(text)
    for names in (text, tail.group(1) if tail else ""):
        parts = [part.strip().strip("`") for part in names.split(",")]
        if all(_FLAG_RE.match(part) for part in parts):
            return [_as_option(part) for part in parts]
    return []


def table_keys(heading: str, names: list[str]) -> list[str]:
    """The keys of a configuration table's section, slugged with the table: a section headed with one
    bracketed table (``The `[package]` section``) whose headings inside name keys in code (``The
    `edition` field``, ``The `license` and `license-file` fields``) defines ``package.edition``,
    ``package.license.file``: what a query writes as ``[package] edition`` or ``package.edition``."""
    tables = _TABLE_RE.findall(heading.replace("`", ""))
    if len(tables) != 1:
        return []
    keys = (key for name in names for key in _CODE_KEY_RE.findall(name))
    return sorted({slug for slug in (anchor_slug(f"{tables[0]} {key}") for key in keys) if slug})


def key_tails(parts: list[str]) -> list[str]:
    """The anchor slugs of a configuration key written with its tables (``tool``, ``uv``, ``pip``,
    ``strict``): the key with its tables dropped one by one from the front, down to the key alone
    (``tool.uv.pip.strict``, ``uv.pip.strict``, ``pip.strict``, ``strict``); each once."""
    found: dict[str, None] = {}
    for start in range(len(parts)):
        words = _slug_words(".".join(parts[start:]))
        if 1 <= len(words) <= MAX_ANCHOR_WORDS:
            found[".".join(words)] = None
    return list(found)


def is_dotted_key(word: str) -> bool:
    """Whether a query word is a dotted key whose last part is one word (``tool.uv.package``,
    ``tool.uv.pip.strict``): lower-case parts of two letters or more (not ``e.g``), the last not a
    file's suffix (``uv.toml``, ``package.json`` are files)."""
    return _DOTTED_KEY_RE.fullmatch(word) is not None and word.rsplit(".", 1)[1] not in _FILE_SUFFIXES


def query_anchors(text: str) -> list[str]:
    """Anchor spellings of a query: for each key- or flag-shaped word, the slugs of the runs of up to
    four words that end with it (``uv sync --frozen`` → ``uv.sync.frozen``, ``sync.frozen``), and of
    the word itself with its leading dotted parts dropped one by one (``tool.uv.build-backend.module-name``
    → ... ``build.backend.module.name``, ``module.name``). A bracketed table followed by a key of one
    word also asks for the key with its tables dropped one by one, down to the key alone
    (``[tool.uv.pip] strict`` → ... ``pip.strict``, ``strict``: :func:`key_tails`). Most specific
    first, each once."""
    words = _query_words(text)
    found: dict[str, None] = {}
    for end, word in enumerate(words):
        if not word or _KEYISH_RE.search(word) is None:
            continue
        for start in range(max(0, end - 3), end + 1):
            slug = anchor_slug(" ".join(words[start : end + 1]))
            if slug:
                found[slug] = None
        parts = word.strip("[]").split(".")
        for start in range(1, len(parts)):
            slug = anchor_slug(".".join(parts[start:]))
            if slug:
                found[slug] = None
        following = words[end + 1].rstrip(".?!") if end + 1 < len(words) else ""
        if word.startswith("[") and _ONE_WORD_RE.fullmatch(following):  # [tool.uv] package
            found.update(dict.fromkeys(key_tails([*parts, following])))
    # a query that is a key of one word in a named file ("managed in uv.toml"); a word of prose
    # before "in" ("set the cache directory in uv.toml") names no key
    in_file = _key_in_file(words)
    if in_file is not None and _names_a_file(in_file[1]):
        found.update(dict.fromkeys(key_tails([in_file[0]])))
    return sorted(found, key=lambda s: (-s.count("."), s))


def query_key_in_bare_file(text: str) -> tuple[list[str], list[str]] | None:
    """For a query that is a key of one word in a file named without its suffix (``managed in
    pyproject``): the key's anchor spellings and the file names it may mean (``pyproject.toml``,
    ``pyproject.json``, ...), of which the corpus must write one for the word to name a file (a
    reader names ``pyproject.toml`` by its stem; ``shared in memory`` names no file). None otherwise."""
    in_file = _key_in_file(_query_words(text))
    if in_file is None or _ONE_WORD_RE.fullmatch(in_file[1]) is None:
        return None
    key, stem = in_file
    return [ANCHOR_MARK + slug for slug in key_tails([key])], [
        f"{stem}.{s}" for s in sorted(_CONFIG_SUFFIXES)
    ]


def query_writes_a_key_shape(text: str) -> bool:
    """Whether the query writes a name in a shape prose never takes: a flag (``--frozen``), a
    bracketed table, a dotted name (``project.requires-python``) or a key of one word in a named
    file. A word that is only hyphenated (``re-open``, ``two-factor``, ``requires-python``) is not
    one: prose writes those too, so such a word names a definition only where the corpus has one."""
    words = _query_words(text)
    for word in words:
        if (
            word
            and _KEYISH_RE.search(word) is not None
            and _HYPHENATED_RE.fullmatch(word.rstrip(".?!")) is None
        ):
            return True
    in_file = _key_in_file(words)
    return in_file is not None and _names_a_file(in_file[1])


def query_constants(text: str) -> list[str]:
    """The query's words written as an environment variable or a constant is (``UV_CACHE_DIR``,
    ``NODE_ENV``: :func:`is_constant_name`), a shape prose never takes."""
    return [name for w in _query_words(text) if is_constant_name(name := w.rstrip(".?!"))]


def _query_words(text: str) -> list[str]:
    """A query's words without the quotes, commas and brackets of prose around them; a short flag
    written with its two dashes (:func:`_as_option`)."""
    return [_as_option(w.strip("`'\",;:()")) for w in _QUERY_WORD_RE.findall(text)]


def _as_option(word: str) -> str:
    """A flag as ids slug it: a short one with two dashes (``-q`` is ``--q``: an id joins the command
    and the flag with a dash, ``option-cargo-clean--q``)."""
    return "-" + word if _SHORT_FLAG_RE.fullmatch(word) else word


def _key_in_file(words: list[str]) -> tuple[str, str] | None:
    """``(key, file)`` for a query that is a key of one word in a file (``managed in uv.toml``,
    ``managed in pyproject``): its first word and its third without a sentence's end; else None."""
    if len(words) >= 3 and _ONE_WORD_RE.fullmatch(words[0]) is not None and words[1] == "in":
        return words[0], words[2].rstrip(".?!")
    return None


def _names_a_file(word: str) -> bool:
    """Whether a query word is a file's name with a configuration file's suffix (``uv.toml``)."""
    stem, _, suffix = word.rstrip(".?!").rpartition(".")
    return bool(stem) and suffix in _CONFIG_SUFFIXES


def query_option_names(text: str) -> list[str]:
    """The anchor slugs of an option named with what it belongs to, wherever the query puts the
    two: every flag-shaped word after every run of one to three other words of the query
    (``uv sync --frozen``, ``what does --frozen do in uv sync`` → ``uv.sync.--frozen``, ...);
    most specific first, each once."""
    words = [_as_option(w.strip("`'\",;:()?!")) for w in _QUERY_WORD_RE.findall(text)]
    flags = [w for w in words if _FLAG_RE.match(w)]
    runs: list[list[str]] = [[]]  # the query's stretches of other words, between its flags
    for word in words:
        if _FLAG_RE.match(word):
            runs.append([])
        elif word:
            runs[-1].append(word)
    found: dict[str, None] = {}
    for flag in flags:
        for run in runs:
            for start in range(len(run)):
                for end in range(start + 1, min(len(run), start + 3) + 1):
                    slug = anchor_slug(" ".join([*run[start:end], flag]))
                    if slug:
                        found[slug] = None
    return sorted(found, key=lambda s: (-s.count("."), s))


def query_page_names(text: str) -> list[str]:
    """The slugs of every run of two to four words of a query (page names it may contain: a page
    named ``uv-python-upgrade.md`` documents ``uv python upgrade``), longest first."""
    words = [w for w in (w.strip("`'\",;:()?!") for w in _QUERY_WORD_RE.findall(text)) if w]
    found: dict[str, None] = {}
    for start in range(len(words)):
        for end in range(start + 2, min(len(words), start + 4) + 1):
            slug = anchor_slug(" ".join(words[start:end]))
            if slug:
                found[slug] = None
    return sorted(found, key=lambda s: (-s.count("."), s))
