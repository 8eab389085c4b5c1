"""``.docs-mcp.json`` manifests: the model, parsing with precise errors, and per-file resolution.

Resolution, lowest precedence first (identical to the original):

1. the default strategy ``{"chunk_by": "h2"}`` and no metadata;
2. the nearest manifest's ``strategy`` and ``metadata`` (the nearest manifest wins exclusively);
3. each matching override, in order: metadata merges, strategy replaces (the last match wins);
   patterns are globs matched against the path relative to the manifest's folder;
4. an HTML hint comment ``<!-- mcp_chunking_hint: {"chunk_by": "h3"} -->`` replaces ``chunk_by`` only;
5. front matter: ``mcp_strategy`` replaces the strategy, else ``mcp_chunking_hint`` becomes
   ``{"chunk_by": ...}`` (dropping size limits); ``metadata`` then ``mcp_metadata`` merge over.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from unicodedata import normalize

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from docs_mcp_core.chunking import CHUNK_BY_VALUES, Strategy, heading_name
from docs_mcp_core.errors import ManifestError, format_path, json_limit, quoted, shown
from docs_mcp_core.globs import PatternIndex
from docs_mcp_core.json_lines import loads_noting_repeats
from docs_mcp_core.utf8 import LoneSurrogate, first_lone_surrogate, is_utf8

MANIFEST_FILENAME = ".docs-mcp.json"
# the longest server instructions or tool description: every client's initialize (or tools/list)
# answer carries it whole into its agent's context; a manifest of 12 MB gave each one 12 MB
MAX_TOOL_TEXT_LENGTH = 32_768
HINT_RE = re.compile(r"<!--\s*mcp_chunking_hint:\s*(\{[^}]+\})\s*-->")
"""A chunking hint comment. Use :func:`hint_comments` to find them: searching a document with this
pattern retries it from every ``<!--`` up to a distant ``}``, which is quadratic on hostile input."""
_HINT_OPEN_RE = re.compile(r"<!--\s*mcp_chunking_hint:\s*\{")
_HINT_CLOSE_RE = re.compile(r"\s*-->")


class StrategyModel(BaseModel):
    """How files are cut into chunks."""

    model_config = ConfigDict(extra="forbid", strict=True)

    chunk_by: Literal["h1", "h2", "h3", "file"] = Field(
        description="Heading level that starts a new chunk, or 'file' for one chunk per file."
    )
    max_chunk_size: int | None = Field(
        default=None,
        gt=0,
        description="Largest chunk in UTF-16 code units (default 20000); larger sections are split.",
    )
    min_chunk_size: int | None = Field(
        default=None, gt=0, description="Parts smaller than this are merged back into the previous part."
    )

    def to_strategy(self) -> Strategy:
        return Strategy(self.chunk_by, self.max_chunk_size, self.min_chunk_size)


class TaxonomyValueConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    mcp_resource: bool = Field(
        default=False, description="Expose every file with this value as an MCP resource docs:///<path>."
    )


class TaxonomyKeyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    vector_collapse: bool = Field(
        default=False,
        description="Collapse near-identical hits that differ only by this key when it is not filtered.",
    )
    description: str | None = Field(
        default=None,
        description="Description of the search_docs filter (default 'Filter results by <key>.').",
    )
    properties: dict[str, TaxonomyValueConfig] = Field(default_factory=dict)


class AutoIncludeConfig(BaseModel):
    """The auto-include rule of filters; every field defaults to the original's rule."""

    model_config = ConfigDict(extra="forbid", strict=True)

    key: str = Field(default="language", min_length=1, description="The filter that includes more chunks.")
    scope_key: str = Field(
        default="scope",
        min_length=1,
        description="The taxonomy key whose values say how a chunk is included.",
    )
    specific: str = Field(
        default="sdk-specific",
        min_length=1,
        description="Scope value of chunks that match only when they carry the filtered value.",
    )
    shared: str = Field(
        default="global-guide",
        min_length=1,
        description="Scope value of chunks that match whatever the filter.",
    )


class OverrideModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    pattern: str = Field(min_length=1, description="Glob matched against the path relative to this manifest.")
    strategy: StrategyModel | None = None
    metadata: dict[str, str] | None = None


class Manifest(BaseModel):
    """The ``.docs-mcp.json`` file (version 1)."""

    model_config = ConfigDict(extra="forbid", strict=True, title="docs-mcp manifest")

    schema_: str | None = Field(default=None, alias="$schema")
    version: Literal["1"] = Field(description="Manifest format version; always '1'.")
    strategy: StrategyModel | None = None
    metadata: dict[str, str] | None = Field(
        default=None, description="Metadata attached to every chunk of the files this manifest governs."
    )
    taxonomy: dict[str, TaxonomyKeyConfig] | None = None
    mcpServerInstructions: str | None = Field(
        default=None, description="Instructions the MCP server gives to clients."
    )
    overrides: list[OverrideModel] | None = None
    auto_include: AutoIncludeConfig | Literal[False] | None = Field(
        default=None,
        description=(
            "The auto-include rule of search filters (default: the original's, key 'language', "
            "scope key 'scope', values 'sdk-specific' and 'global-guide'); false turns it off."
        ),
    )
    _override_index: PatternIndex | None = PrivateAttr(default=None)

    def override_index(self) -> PatternIndex:
        """Its override patterns, indexed by their literal starts (built once): a path's overrides
        are found without running the patterns that cannot match it."""
        if self._override_index is None:
            self._override_index = PatternIndex([ov.pattern for ov in self.overrides or []])
        return self._override_index


def manifest_json_schema() -> dict[str, Any]:
    """JSON schema of the manifest, as committed in ``schemas/docs-mcp.schema.json``."""
    schema = Manifest.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


@dataclass(frozen=True)
class ManifestIssue:
    message: str
    severity: Literal["error", "warning"] = "error"


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "manifest"


def _describe(err: Mapping[str, Any]) -> str:
    if "literal[False]" in err["loc"]:
        return ""  # auto_include's other branch: the object branch's error says what is wrong
    loc = tuple(p for p in err["loc"] if p not in ("function-after", "AutoIncludeConfig"))
    where = _format_loc(loc)
    typ = err["type"]
    value = err.get("input")
    if typ in ("model_type", "dict_type"):
        return f"{where} must be {'false or ' if loc == ('auto_include',) else ''}an object (got {quoted(value)})"
    if loc and loc[-1] == "chunk_by":
        return f"{where} must be one of: {', '.join(CHUNK_BY_VALUES)} (got {quoted(value)})"
    if loc == ("version",):
        return f"version must be '1' (got {quoted(value)})"
    if typ == "extra_forbidden":
        return f"{where}: unknown key (remove it or check its spelling)"
    if typ in ("greater_than", "int_type", "int_parsing", "int_from_float"):
        return f"{where} must be a positive integer (got {quoted(value)})"
    if typ == "bool_type":
        return f"{where} must be true or false (got {quoted(value)})"
    if typ == "string_type":
        return f"{where} must be a string (got {quoted(value)})"
    if typ == "missing":
        return f"{where} is required"
    return f"{where}: {err['msg']}"


def parse_manifest(text: str, *, source: str = MANIFEST_FILENAME) -> tuple[Manifest, list[ManifestIssue]]:
    """Parse and check a manifest. Raises :class:`ManifestError` naming ``source`` on any error.
    Unknown top-level keys are reported as warnings and ignored (the original ignores them too)."""
    try:
        raw, twice = loads_noting_repeats(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{source}:{exc.lineno}: manifest is not valid JSON: {exc.msg}") from None
    except (RecursionError, ValueError) as exc:  # ValueError: an integer of over 4,300 digits
        raise ManifestError(f"{source}: manifest cannot be read: {json_limit(exc)}") from None
    if (bad := lone_surrogate(raw)) is not None:
        raise ManifestError(f"{source}: {bad}")
    manifest, issues = manifest_from_data(raw, source=source)
    issues += [
        ManifestIssue(
            f"the key '{shown(key)}' is given twice in one object; only its last value counts (and docs-mcp "
            "fix will not rewrite this manifest); remove the other",
            "warning",
        )
        for key in twice
    ]
    return manifest, issues


def lone_surrogate(value: Any, where: str = "") -> str | None:
    """Where a JSON or YAML ``value`` (named ``where``) holds a lone surrogate, as the end of an
    error message (``metadata.note holds '\\ud800', half of ...``); None when all of it is text."""
    found = first_lone_surrogate(value)
    if found is None:
        return None
    place = format_path(((where,) if where else ()) + found.path)
    if found.in_key:
        return f"a key {'in ' + place + ' ' if place else ''}holds {found.escape}, {LoneSurrogate.NOT_TEXT}"
    return f"{place or 'the value'} holds {found.escape}, {LoneSurrogate.NOT_TEXT}"


def manifest_from_data(raw: Any, *, source: str = MANIFEST_FILENAME) -> tuple[Manifest, list[ManifestIssue]]:
    if not isinstance(raw, dict):
        raise ManifestError(f"{source}: manifest must be a JSON object")
    issues: list[ManifestIssue] = []
    known = {
        *("$schema", "version", "strategy", "metadata", "taxonomy"),
        *("mcpServerInstructions", "overrides", "auto_include"),
    }
    data = {}
    for key, value in raw.items():
        if key in known:
            if key == "overrides" and value is not None and not isinstance(value, list):
                raise ManifestError(
                    f"{source}: overrides must be an array of {{pattern, strategy?, metadata?}} objects"
                )
            if key == "mcpServerInstructions" and isinstance(value, str):
                # like the original: an empty value is skipped, a blank one is an error, others trimmed
                if value and not value.strip():
                    raise ManifestError(f"{source}: mcpServerInstructions must be a non-empty string")
                value = value.strip() or None
                if value is not None and len(value) > MAX_TOOL_TEXT_LENGTH:
                    raise ManifestError(
                        f"{source}: mcpServerInstructions is {len(value):,} characters long; at most "
                        f"{MAX_TOOL_TEXT_LENGTH:,} are allowed (every client receives it whole when it "
                        "connects): shorten it, and let the documents say the rest"
                    )
            data[key] = value
        else:
            issues.append(ManifestIssue(f"unknown manifest key '{key}' is ignored", "warning"))
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        messages = "; ".join(filter(None, (_describe(e) for e in exc.errors())))
        raise ManifestError(f"{source}: {messages}") from None
    for where, meta in _metadata_blocks(manifest):
        _check_metadata(meta, where, source)
    for i, ov in enumerate(manifest.overrides or []):
        if not ov.pattern.strip():
            raise ManifestError(f"{source}: overrides[{i}].pattern must be a non-empty string")
    return manifest, issues


def _metadata_blocks(manifest: Manifest) -> list[tuple[str, dict[str, str]]]:
    blocks: list[tuple[str, dict[str, str]]] = []
    if manifest.metadata is not None:
        blocks.append(("metadata", manifest.metadata))
    for i, ov in enumerate(manifest.overrides or []):
        if ov.metadata is not None:
            blocks.append((f"overrides[{i}].metadata", ov.metadata))
    return blocks


RESERVED_METADATA_KEYS = ("query", "limit", "cursor", "max_tokens", "facets")
"""Arguments of ``search_docs`` itself: a taxonomy key of one of these names would replace it."""

TABLE_COLUMNS = (
    *("chunk_id", "filepath", "heading", "heading_level", "content", "content_text", "breadcrumb"),
    *("chunk_index", "metadata_json", "file_fingerprint", "search_heading", "search_text", "search_path"),
    *("search_prior", "search_dedup", "search_spellings", "search_plain", "vector"),
    # LanceDB's own: row ids and addresses, and the scores it adds to a query's rows
    *("_rowid", "_rowaddr", "_rowoffset", "_row_created_at_version", "_row_last_updated_at_version"),
    *("_score", "_distance", "_relevance_score"),
)
"""Column names of the index's table besides the taxonomy's (every metadata key is a column too):
such a key, or one holding a ``.`` (a struct field to LanceDB), ended the build with "failed
unexpectedly" when the table was written. ``tests/core/test_manifest.py`` checks the list against
:func:`docs_mcp_core.index.table.table_schema`."""

PORTABLE_METADATA_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""Argument names every MCP client accepts (some model APIs refuse a tool whose input schema has
a property name outside this pattern, which would lose the whole tool, not just the filter)."""


def unportable_key_warning(key: str) -> str | None:
    """Why some clients would refuse ``key`` (trimmed) as a ``search_docs`` argument, or ``None``."""
    if PORTABLE_METADATA_KEY.fullmatch(key):
        return None
    ascii_key = normalize("NFKD", key).encode("ascii", "ignore").decode()  # été: ete, not t
    suggestion = re.sub(r"[^A-Za-z0-9_-]+", "_", ascii_key).strip("_")[:64] or "key"
    return (
        f"metadata key '{key}' becomes a search_docs argument name, and some agents' model APIs refuse a tool "
        f"whose argument names are not 1-64 letters, digits, '_', '.' or '-'; rename it (e.g. '{suggestion}')"
    )


def _check_metadata(meta: Mapping[str, Any], where: str, source: str) -> None:
    for key, value in meta.items():
        if (bad := lone_surrogate({key: value}, where)) is not None:
            raise ManifestError(f"{source}: {bad}")
        if not key.strip():
            raise ManifestError(f"{source}: {where} contains an empty key")
        if any(ch < " " or ch == "\x7f" for ch in key):
            raise ManifestError(
                f"{source}: {where} key {json.dumps(key)} contains a control character; metadata keys "
                "become search_docs argument names, so use letters, digits, '_', '.' or '-'"
            )
        if key.strip() in RESERVED_METADATA_KEYS:
            raise ManifestError(
                f"{source}: {where}.{key.strip()} would replace search_docs's own '{key.strip()}' "
                "argument (metadata keys become search_docs arguments); rename the key, e.g. "
                f"'{key.strip()}_kind'"
            )
        if key.strip() in TABLE_COLUMNS or "." in key:
            raise ManifestError(
                f"{source}: {where} key '{key.strip()}' cannot be a column of the index's table "
                + ("(a '.' makes it a struct field)" if "." in key else "(the table has one of that name)")
                + f"; rename it, e.g. '{key.strip().replace('.', '_') if '.' in key else key.strip() + '_kind'}'"
            )
        if not isinstance(value, str):
            raise ManifestError(f"{source}: {where}.{key} must be a string (got {quoted(value)})")
        if not value.strip():
            raise ManifestError(f"{source}: {where}.{key} cannot be empty")
        if "\0" in value:  # the filter's SQL literal drops it: the value offered would match nothing
            raise ManifestError(
                f"{source}: {where}.{key} holds a NUL character, which no search_docs filter can match; remove it"
            )


def clean_metadata(meta: Mapping[str, str]) -> dict[str, str]:
    """Trim keys and values, as the original does."""
    return {k.strip(): v.strip() for k, v in meta.items()}


# ── per-file resolution ────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class ResolvedConfig:
    strategy: Strategy
    metadata: dict[str, str]
    title: str | None


def hint_comments(markdown: str) -> dict[int, str]:
    """Every offset where :data:`HINT_RE` matches, with its JSON text (group 1), in offset order.

    Linear in the size of ``markdown``: the JSON of a hint ends at the first ``}`` after its ``{``,
    so hints that share that ``}`` share one scan for it and one check of the ``-->`` after it.
    """
    found: dict[int, str] = {}
    scanned_from, brace_close = -1, -1  # the first '}' at or after scanned_from (-1: none)
    closed: dict[int, bool] = {}  # whether `\s*-->` follows the '}' at this offset
    for m in _HINT_OPEN_RE.finditer(markdown):
        body = m.end()  # just after '{'
        if not (0 <= scanned_from <= body and (brace_close < 0 or body <= brace_close)):
            scanned_from, brace_close = body, markdown.find("}", body)
        if brace_close < 0:
            break  # no '}' after this hint: none after any later one either
        if brace_close == body:
            continue  # '{}': the JSON needs one character at least
        ok = closed.get(brace_close)
        if ok is None:
            ok = closed[brace_close] = _HINT_CLOSE_RE.match(markdown, brace_close + 1) is not None
        if ok:
            found[m.start()] = markdown[body - 1 : brace_close + 1]
    return found


def find_hint(markdown: str) -> str | None:
    """The ``chunk_by`` of the first valid HTML hint comment, or None (invalid hints are ignored)."""
    if "mcp_chunking_hint" not in markdown:
        return None
    hints = hint_comments(markdown)
    if not hints:
        return None
    try:
        data = json.loads(next(iter(hints.values())))
    except (RecursionError, ValueError):  # validation reports why
        return None
    value = data.get("chunk_by") if isinstance(data, dict) else None
    return value if value in CHUNK_BY_VALUES else None


def front_matter_config(
    front_matter: Mapping[str, Any], source: str
) -> tuple[Strategy | None, dict[str, str]]:
    """Strategy and metadata declared in a file's front matter. Raises ManifestError on bad values."""
    strategy: Strategy | None = None
    if "mcp_strategy" in front_matter and front_matter["mcp_strategy"] is not None:
        raw = front_matter["mcp_strategy"]
        if not isinstance(raw, dict):
            raise ManifestError(
                f"{source}: front matter mcp_strategy must be an object", front_matter_key="mcp_strategy"
            )
        try:
            strategy = StrategyModel.model_validate(raw).to_strategy()
        except ValidationError as exc:
            msgs = "; ".join(_describe({**e, "loc": ("mcp_strategy", *e["loc"])}) for e in exc.errors())
            raise ManifestError(f"{source}: front matter {msgs}", front_matter_key="mcp_strategy") from None
    elif front_matter.get("mcp_chunking_hint") is not None:
        hint = front_matter["mcp_chunking_hint"]
        if hint not in CHUNK_BY_VALUES:
            raise ManifestError(
                f"{source}: front matter mcp_chunking_hint must be one of: {', '.join(CHUNK_BY_VALUES)}"
                f" (got {quoted(hint)})",
                front_matter_key="mcp_chunking_hint",
            )
        strategy = Strategy(str(hint))
    metadata: dict[str, str] = {}
    for key in ("metadata", "mcp_metadata"):
        block = front_matter.get(key)
        if block is None:
            continue
        if not isinstance(block, dict):
            raise ManifestError(f"{source}: front matter {key} must be an object", front_matter_key=key)
        if (odd := next((k for k in block if not isinstance(k, str)), ...)) is not ...:
            # str() made the keys true and null the filters 'True' and 'None'
            written = quoted(odd).strip('"')
            raise ManifestError(
                f"{source}: front matter {key} key {written} is not text (YAML reads an unquoted true, "
                f'null, number or date as one, not as a name); quote it: "{written}": ...',
                front_matter_key=key,
            )
        try:
            _check_metadata({str(k): v for k, v in block.items()}, f"front matter {key}", source)
        except ManifestError as exc:
            raise ManifestError(str(exc), front_matter_key=key) from None
        metadata.update(clean_metadata({str(k): v for k, v in block.items()}))
    return strategy, metadata


def resolve_file_config(
    relpath_in_manifest: str,
    manifest: Manifest | None,
    *,
    markdown: str,
    front_matter: Mapping[str, Any] | None,
    first_h1: str | None,
    source: str,
) -> ResolvedConfig:
    """Resolve strategy, metadata and title of one file (see the module docstring for precedence)."""
    strategy = Strategy("h2")
    metadata: dict[str, str] = {}
    if manifest is not None:
        if manifest.strategy is not None:
            strategy = manifest.strategy.to_strategy()
        if manifest.metadata:
            metadata.update(clean_metadata(manifest.metadata))
        overrides = manifest.overrides or []
        for ov in (overrides[i] for i in manifest.override_index().matching(relpath_in_manifest)):
            if ov.metadata:
                metadata.update(clean_metadata(ov.metadata))
            if ov.strategy is not None:
                strategy = ov.strategy.to_strategy()
    hint = find_hint(markdown)
    if hint is not None:
        strategy = Strategy(hint, strategy.max_chunk_size, strategy.min_chunk_size)
    title: str | None = None
    if front_matter:
        fm_strategy, fm_metadata = front_matter_config(front_matter, source)
        if fm_strategy is not None:
            strategy = fm_strategy
        metadata.update(fm_metadata)
        raw_title = front_matter.get("title")
        if isinstance(raw_title, str) and raw_title.strip() and is_utf8(raw_title):
            title = heading_name(raw_title)  # cut as a heading is: it stands above every chunk
    if title is None and first_h1:
        title = first_h1
    return ResolvedConfig(strategy, metadata, title)
