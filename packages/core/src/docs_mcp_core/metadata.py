"""``metadata.json``: the contract between ``docs-mcp build`` and the server.

``build`` writes ``metadata.json`` beside the ``.lancedb/`` folder. It records what the corpus is
(``corpus_description``), the filterable taxonomy (every metadata key with its values, which the
server turns into enums on ``search_docs``), corpus statistics, the embedding model used (or ``null``
for a full-text-only index), prompts from ``*.template.*`` files, optional tool descriptions and server
instructions, document titles and where the table lives. The server reads nothing else to boot.

This module holds the pydantic model, :func:`normalize_metadata` (every validation and normalisation
rule, with errors that name the offending field), :func:`read_metadata` and
:func:`metadata_to_json`, which writes the same layout as the original TypeScript implementation so
indexes stay interchangeable in both directions.

It is longer than the project's 500 lines on purpose: it is the whole of one file format, and a
change to that format (a key, a limit, an error text) must be made to the model, the rules, the
reader and the writer together; split, they would drift apart.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, SkipValidation

from docs_mcp_core.errors import (
    InvalidPrompt,
    MetadataError,
    MetadataNotFoundError,
    StorageError,
    format_path,
    json_limit,
)
from docs_mcp_core.index.location import is_uri, open_storage
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.prompts import (
    PromptArgument,
    PromptContent,
    PromptDefinition,
    PromptMessage,
    prompt_from_mapping,
)

METADATA_VERSION = "1.1.0"
SUPPORTED_MAJOR = 1
METADATA_FILENAME = "metadata.json"

MAX_TAXONOMY_KEYS = 64
MAX_KEY_LENGTH = 64
MAX_VALUES_PER_KEY = 512
MAX_VALUE_LENGTH = 128

_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


class TaxonomyValueProperties(BaseModel):
    """Per-value switches; ``mcp_resource`` exposes the value's documents as MCP resources."""

    mcp_resource: bool = False


class TaxonomyField(BaseModel):
    """One filterable metadata key: its values (trimmed, unique, sorted) and behaviour flags."""

    description: str | None = None
    values: list[str]
    vector_collapse: bool = False
    properties: dict[str, TaxonomyValueProperties] = {}


class AutoInclude(BaseModel):
    """The auto-include rule of filters (``docs/manifest.md``). When ``key`` is filtered and
    ``scope_key`` is not: a chunk whose ``scope_key`` is ``specific`` must carry the filtered value,
    one whose ``scope_key`` is ``shared`` always matches, and any other chunk matches when it carries
    the value or no value for ``key``. The defaults are the original's rule."""

    key: str = "language"
    scope_key: str = "scope"
    specific: str = "sdk-specific"
    shared: str = "global-guide"


ORIGINAL_AUTO_INCLUDE = AutoInclude()


class CorpusStats(BaseModel):
    total_chunks: int
    total_files: int
    indexed_at: str
    source_commit: str | None = None


class EmbeddingInfo(BaseModel):
    provider: str
    model: str
    dimensions: int


class ToolDescriptions(BaseModel):
    """Replacement descriptions for the built-in tools (``None`` keeps the default text)."""

    search_docs: str | None = None
    get_doc: str | None = None


class IndexLocation(BaseModel):
    engine: str = "lancedb"
    table: str = "chunks"
    path: str = ".lancedb"


class IndexMetadata(BaseModel):
    """The parsed ``metadata.json``. Build one, then write it with :func:`metadata_to_json`."""

    metadata_version: str = METADATA_VERSION
    corpus_description: str
    taxonomy: dict[str, TaxonomyField] = {}
    stats: CorpusStats
    embedding: EmbeddingInfo | None = None
    # ours: the model that embedded each section's heading path (search/heading_leg.py), or None
    heading_vectors: EmbeddingInfo | None = None
    prompts: list[PromptDefinition] | None = None
    tool_descriptions: ToolDescriptions | None = None
    mcpServerInstructions: str | None = None  # the key as written in metadata.json
    # one entry per file (40,000 at ten times sdk-docs): normalize_metadata checks them itself, in a
    # loop that passes a build's entries as they are; the model's own check would walk them again
    files: Annotated[dict[str, dict[str, str]], SkipValidation] = {}
    index: IndexLocation = Field(default_factory=IndexLocation)
    # None: no auto-include (a manifest said ``"auto_include": false``)
    auto_include: AutoInclude | None = ORIGINAL_AUTO_INCLUDE

    @property
    def mcp_server_instructions(self) -> str | None:
        return self.mcpServerInstructions


# --------------------------------------------------------------------------------------------
# small helpers


def field_description(key: str, field: TaxonomyField | None = None) -> str:
    """The description of a taxonomy filter: the configured one, else ``Filter results by <key>.``."""
    if field is not None and field.description:
        return field.description
    return f"Filter results by {key}."


def collapse_keys(taxonomy: Mapping[str, TaxonomyField]) -> list[str]:
    """Taxonomy keys with ``vector_collapse`` set, in taxonomy order."""
    return [key for key, field in taxonomy.items() if field.vector_collapse]


def resource_values(taxonomy: Mapping[str, TaxonomyField]) -> list[tuple[str, str]]:
    """``(key, value)`` pairs marked ``mcp_resource``, in taxonomy then value order."""
    return [
        (key, value)
        for key, field in taxonomy.items()
        for value, props in field.properties.items()
        if props.mcp_resource
    ]


def js_length(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts it (the limits are defined that way)."""
    return len(text.encode("utf-16-le")) // 2


def _preview(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def taxonomy_key_problem(key: str) -> str | None:
    """Why ``key`` (already trimmed) cannot be a taxonomy key, or ``None``."""
    if not key:
        return "taxonomy keys cannot be empty"
    if js_length(key) > MAX_KEY_LENGTH:
        return f"key is {js_length(key)} characters long; at most {MAX_KEY_LENGTH} are allowed"
    return None


def taxonomy_value_problem(value: str) -> str | None:
    """Why ``value`` (already trimmed) cannot be a taxonomy value, or ``None``."""
    if not value:
        return "cannot be empty"
    if js_length(value) > MAX_VALUE_LENGTH:
        return (
            f"'{_preview(value)}' is {js_length(value)} characters long; "
            f"at most {MAX_VALUE_LENGTH} are allowed"
        )
    return None


def check_taxonomy_limits(taxonomy: Mapping[str, Iterable[str]]) -> list[str]:
    """Every way ``taxonomy`` (key -> values, as discovered in a corpus) breaks the metadata.json limits.

    Keys and values are trimmed first and values deduplicated, exactly as the build does. Each problem
    is one message starting with the field path, e.g. ``taxonomy.language: has 600 values; at most 512
    are allowed``. An empty list means the taxonomy can be written.
    """
    problems: list[str] = []
    keys = [key.strip() for key in taxonomy]
    if len(set(keys)) > MAX_TAXONOMY_KEYS:
        problems.append(
            f"taxonomy: has {len(set(keys))} keys; at most {MAX_TAXONOMY_KEYS} are allowed"
            " (fewer distinct metadata keys are needed)"
        )
    for raw_key, values in taxonomy.items():
        key = raw_key.strip()
        key_problem = taxonomy_key_problem(key)
        if key_problem:
            problems.append(f"taxonomy.{key}: {key_problem}")
        distinct: set[str] = set()
        for raw_value in values:
            value = raw_value.strip()
            value_problem = taxonomy_value_problem(value)
            if value_problem:
                problems.append(f"taxonomy.{key}: value {value_problem}")
            else:
                distinct.add(value)
        if len(distinct) > MAX_VALUES_PER_KEY:
            problems.append(
                f"taxonomy.{key}: has {len(distinct)} values; at most {MAX_VALUES_PER_KEY} are allowed"
            )
    return problems


# --------------------------------------------------------------------------------------------
# normalisation


class _Invalid(Exception):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _Invalid(where, f"must be an object, got {_type_name(value)}")
    return value  # pyright: ignore[reportUnknownVariableType]


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(where, f"must be a non-empty string, got {_type_name(value)}")
    text = value.strip()
    if not text:
        raise _Invalid(where, "must be a non-empty string")
    return text


def _optional_text(value: Any, where: str) -> str | None:
    return None if value is None else _text(value, where)


def _integer(value: Any, where: str, minimum: int) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not value.is_integer())  # 1.5, and JSON's Infinity and NaN
    ):
        raise _Invalid(where, f"must be an integer, got {_type_name(value)}")
    if value < minimum:
        raise _Invalid(where, f"must be >= {minimum}, got {int(value)}")
    return int(value)


def _boolean(value: Any, where: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _Invalid(where, f"must be true or false, got {_type_name(value)}")
    return value


def _version(value: Any) -> str:
    version = _text(value, "metadata_version")
    match = _SEMVER.match(version)
    if not match:
        raise _Invalid("metadata_version", f"must be valid semver (MAJOR.MINOR.PATCH), got '{version}'")
    if int(match.group(1)) != SUPPORTED_MAJOR:
        raise _Invalid(
            "",
            f"Unsupported metadata_version major: expected {SUPPORTED_MAJOR}.x.x, got {version}. "
            "Rebuild the index with this version of docs-mcp.",
        )
    return version


def _taxonomy_values(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, list):
        raise _Invalid(where, f"must be an array of strings, got {_type_name(raw)}")
    values: set[str] = set()
    for index, item in enumerate(raw):  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
        if not isinstance(item, str):
            raise _Invalid(f"{where}[{index}]", f"must be a string, got {_type_name(item)}")
        value = item.strip()
        problem = taxonomy_value_problem(value)
        if problem:
            raise _Invalid(f"{where}[{index}]", problem)
        values.add(value)
    if len(values) > MAX_VALUES_PER_KEY:
        raise _Invalid(where, f"has {len(values)} distinct values; at most {MAX_VALUES_PER_KEY} are allowed")
    return sorted(values, key=sort_key)


def _properties(raw: Any, where: str) -> dict[str, TaxonomyValueProperties]:
    if raw is None:
        return {}
    props: dict[str, TaxonomyValueProperties] = {}
    for raw_value, raw_props in _mapping(raw, where).items():
        value = raw_value.strip()
        here = f"{where}.{value}"
        if not value:
            raise _Invalid(where, "value names cannot be empty")
        entry = _mapping(raw_props, here)
        if _boolean(entry.get("mcp_resource"), f"{here}.mcp_resource"):
            props[value] = TaxonomyValueProperties(mcp_resource=True)
    return {value: props[value] for value in sorted(props, key=sort_key)}


def _taxonomy(raw: Any) -> dict[str, TaxonomyField]:
    entries = _mapping(raw, "taxonomy")
    if len(entries) > MAX_TAXONOMY_KEYS:
        raise _Invalid("taxonomy", f"has {len(entries)} keys; at most {MAX_TAXONOMY_KEYS} are allowed")
    taxonomy: dict[str, TaxonomyField] = {}
    for raw_key, raw_field in entries.items():
        key = raw_key.strip()
        problem = taxonomy_key_problem(key)
        if problem:
            raise _Invalid(f"taxonomy.{key}" if key else "taxonomy", problem)
        if key in taxonomy:
            raise _Invalid(f"taxonomy.{key}", "duplicate key (keys are compared after trimming)")
        where = f"taxonomy.{key}"
        entry = _mapping(raw_field, where)
        description = entry.get("description")
        if description is not None and not isinstance(description, str):
            raise _Invalid(f"{where}.description", f"must be a string, got {_type_name(description)}")
        taxonomy[key] = TaxonomyField(
            description=(description or "").strip() or None,
            values=_taxonomy_values(entry.get("values"), f"{where}.values"),
            vector_collapse=_boolean(entry.get("vector_collapse"), f"{where}.vector_collapse"),
            properties=_properties(entry.get("properties"), f"{where}.properties"),
        )
    return taxonomy


def _stats(raw: Any) -> CorpusStats:
    entry = _mapping(raw, "stats")
    commit = entry.get("source_commit")
    if commit is not None:
        if not isinstance(commit, str):
            raise _Invalid("stats.source_commit", f"must be null or a string, got {_type_name(commit)}")
        commit = commit.strip()
        if not _SHA1.match(commit):
            raise _Invalid(
                "stats.source_commit", f"must be null or a 40-char lowercase git SHA-1, got '{commit}'"
            )
    return CorpusStats(
        total_chunks=_integer(entry.get("total_chunks"), "stats.total_chunks", 0),
        total_files=_integer(entry.get("total_files"), "stats.total_files", 0),
        indexed_at=_text(entry.get("indexed_at"), "stats.indexed_at"),
        source_commit=commit,
    )


def _embedding(raw: Any, key: str = "embedding") -> EmbeddingInfo | None:
    if raw is None:
        return None
    entry = _mapping(raw, key)
    return EmbeddingInfo(
        provider=_text(entry.get("provider"), f"{key}.provider"),
        model=_text(entry.get("model"), f"{key}.model"),
        dimensions=_integer(entry.get("dimensions"), f"{key}.dimensions", 1),
    )


def _prompts(raw: Any) -> list[PromptDefinition] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise _Invalid("prompts", f"must be an array, got {_type_name(raw)}")
    prompts: list[PromptDefinition] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
        try:
            prompt = prompt_from_mapping(item)
        except InvalidPrompt as exc:
            raise _Invalid(format_path(("prompts", index, *exc.path)), exc.problem) from exc
        if prompt.name in seen:
            raise _Invalid(f"prompts[{index}].name", f"Duplicate prompt name '{prompt.name}'")
        seen.add(prompt.name)
        prompts.append(prompt)
    return prompts or None


def _tool_descriptions(raw: Any) -> ToolDescriptions | None:
    if raw is None:
        return None
    entry = _mapping(raw, "tool_descriptions")
    tools = ToolDescriptions(
        search_docs=_optional_text(entry.get("search_docs"), "tool_descriptions.search_docs"),
        get_doc=_optional_text(entry.get("get_doc"), "tool_descriptions.get_doc"),
    )
    return tools if tools.search_docs or tools.get_doc else None


def _files(raw: Any) -> dict[str, dict[str, str]]:
    if raw is None:
        return {}
    files: dict[str, dict[str, str]] = {}
    for path, raw_entry in _mapping(raw, "files").items():
        if type(raw_entry) is dict and all(type(v) is str for v in raw_entry.values()) and path.strip():
            files[path] = raw_entry  # as a build writes it (one per file: the common case, kept fast)
            continue
        if not path.strip():
            raise _Invalid("files", "file paths cannot be empty")
        entry = _mapping(raw_entry, f"files.{path}")
        title = entry.get("title")
        if title is not None and not isinstance(title, str):
            raise _Invalid(f"files.{path}.title", f"must be a string, got {_type_name(title)}")
        files[path] = {k: v for k, v in entry.items() if isinstance(v, str)}
    return files


def _index(raw: Any) -> IndexLocation:
    if raw is None:
        return IndexLocation()
    entry = _mapping(raw, "index")
    default = IndexLocation()
    return IndexLocation(
        engine=_optional_text(entry.get("engine"), "index.engine") or default.engine,
        table=_file_system_path(entry.get("table"), "index.table") or default.table,
        path=_file_system_path(entry.get("path"), "index.path") or default.path,
    )


def _file_system_path(value: Any, where: str) -> str | None:
    """A path the index is opened at: one with a NUL or a name over 255 bytes (the longest a file
    system holds) made the first look at it raise, not an error naming the field."""
    text = _optional_text(value, where)
    if text is not None and (
        "\0" in text or any(len(name.encode("utf-8", "surrogatepass")) > 255 for name in text.split("/"))
    ):
        raise _Invalid(
            where, "must be a path a file system can hold (no NUL character, no name over 255 bytes)"
        )
    return text


def _instructions(raw: Mapping[str, Any]) -> str | None:
    for key in ("mcpServerInstructions", "instructions"):  # "instructions": pre-0.10 originals
        if raw.get(key) is not None:
            return _text(raw[key], key)
    return None


def _auto_include(raw: Any) -> AutoInclude | None:
    """``auto_include``: absent or null is the original's rule, ``false`` none, else an object."""
    if raw is None:
        return ORIGINAL_AUTO_INCLUDE
    if raw is False:
        return None
    if not isinstance(raw, Mapping):
        raise _Invalid("auto_include", f"must be false or an object, got {_type_name(raw)}")
    entry: Mapping[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    values = {
        name: _text(entry[name], f"auto_include.{name}")
        for name in AutoInclude.model_fields
        if entry.get(name) is not None
    }
    return AutoInclude(**values)


def normalize_metadata(raw: Any) -> IndexMetadata:
    """Validate and normalise a ``metadata.json`` document (a parsed JSON value or an :class:`IndexMetadata`).

    Rules: ``metadata_version`` is semver with major 1; ``corpus_description`` non-empty; taxonomy keys
    trimmed (≤64 keys of ≤64 chars), values trimmed, deduplicated and sorted (≤512 values of ≤128
    chars, none empty); ``stats`` counts are integers ≥0 and ``source_commit`` is null or a lowercase
    40-hex SHA-1; ``embedding`` is null or has ``dimensions`` ≥1; prompts have unique names and valid
    messages. Unknown keys are ignored, so files written by the original implementation load too.
    Raises :class:`MetadataError` whose message starts with the offending field's path.
    """
    if isinstance(raw, IndexMetadata):
        raw = metadata_to_dict(raw, validate=False)
    try:
        if not isinstance(raw, Mapping):
            raise _Invalid("", f"metadata must be a JSON object, got {_type_name(raw)}")
        doc: Mapping[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
        return IndexMetadata(
            metadata_version=_version(doc.get("metadata_version")),
            corpus_description=_text(doc.get("corpus_description"), "corpus_description"),
            taxonomy=_taxonomy(doc.get("taxonomy")),
            stats=_stats(doc.get("stats")),
            embedding=_embedding(doc.get("embedding")),
            heading_vectors=_embedding(doc.get("heading_vectors"), "heading_vectors"),
            prompts=_prompts(doc.get("prompts")),
            tool_descriptions=_tool_descriptions(doc.get("tool_descriptions")),
            mcpServerInstructions=_instructions(doc),
            files=_files(doc.get("files")),
            index=_index(doc.get("index")),
            auto_include=_auto_include(doc.get("auto_include")),
        )
    except _Invalid as exc:
        raise MetadataError(str(exc)) from None


# --------------------------------------------------------------------------------------------
# reading and writing


def read_metadata(
    index_dir: str | Path, *, storage_options: Mapping[str, str] | None = None
) -> IndexMetadata:
    """Load ``<index_dir>/metadata.json``; every failure is a :class:`MetadataError` naming the file.

    ``index_dir`` may also be an object-store URI (``s3://bucket/prefix``, see
    :mod:`docs_mcp_core.index.location`); ``storage_options`` then override the AWS environment variables.
    """

    if is_uri(index_dir):
        return _read_remote_metadata(str(index_dir), storage_options)
    folder = Path(index_dir)
    path = folder / METADATA_FILENAME
    if not folder.is_dir():
        raise MetadataNotFoundError(
            f"Index directory does not exist: '{folder.resolve()}'. Run `docs-mcp build --out {folder}` first."
        )
    if not path.is_file():
        raise MetadataNotFoundError(
            f"metadata.json not found in index directory '{folder.resolve()}'. {missing_index_advice(folder)}"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MetadataError(f"Cannot read metadata.json at '{path}': {exc}") from None
    return parse_metadata_bytes(data, str(path))


_DOCS_SUFFIXES = (".md", ".mdx")
_DOCS_PROBE_ENTRIES = 2000  # entries looked at, at most, to tell a docs folder from an empty one


def missing_index_advice(folder: Path) -> str:
    """What to do about a folder that should hold an index and has no ``metadata.json``: build
    one into it or, when it holds markdown documentation itself (``--index-dir`` given the docs
    folder), build from it into another folder."""
    taken = folder / METADATA_FILENAME
    if taken.exists() or taken.is_symlink():  # the name is there, not as a file
        kind = "a directory" if taken.is_dir() else "not a regular file"
        return (
            f"The metadata.json there is {kind}: remove it, then run "
            f"`docs-mcp build --docs-dir DOCS --out {folder}` to create the index."
        )
    if not _holds_docs(folder):
        return f"Run `docs-mcp build --docs-dir DOCS --out {folder}` to create the index."
    return (
        "That folder holds markdown files: it is a docs folder, not an index. Build the index into a "
        f"folder of its own (`docs-mcp build --docs-dir {folder} --out ./idx`) and pass that folder as "
        "--index-dir."
    )


def _holds_docs(folder: Path) -> bool:
    """Whether ``folder`` or a folder below it holds a manifest or markdown files (looking at a
    bounded number of entries, breadth first)."""
    from docs_mcp_core.manifest import MANIFEST_FILENAME  # on this error path only: it loads the chunker

    pending, seen = [folder], 0
    while pending and seen < _DOCS_PROBE_ENTRIES:
        try:
            with os.scandir(pending.pop(0)) as entries:
                for entry in entries:
                    seen += 1
                    if seen > _DOCS_PROBE_ENTRIES:
                        break
                    if entry.name == MANIFEST_FILENAME or entry.name.lower().endswith(_DOCS_SUFFIXES):
                        return True
                    if not entry.name.startswith(".") and entry.is_dir():
                        pending.append(Path(entry.path))
        except OSError:
            continue
    return False


def _read_remote_metadata(uri: str, storage_options: Mapping[str, str] | None) -> IndexMetadata:

    where = f"{uri.rstrip('/')}/{METADATA_FILENAME}"
    try:
        data = open_storage(uri, storage_options).read_bytes(METADATA_FILENAME)
    except FileNotFoundError:
        raise MetadataNotFoundError(
            f"metadata.json not found at '{where}'. Run `docs-mcp build --out {uri}` to publish the index there."
        ) from None
    except StorageError as exc:
        raise MetadataError(str(exc)) from None
    except OSError as exc:
        raise MetadataError(
            f"Cannot read metadata.json at '{where}': {exc} (check the endpoint and credentials: "
            "AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION or --storage-option)"
        ) from None
    return parse_metadata_bytes(data, where)


# The last bytes parsed and their model: a server reads metadata.json at start-up and again when the
# index opens, and a build of many files writes a large "files" map (40,000 entries at ten times
# sdk-docs take 0.1-0.2 s to validate). Equal bytes parse to the same model, which is shared.
_last_parsed: tuple[bytes, IndexMetadata] | None = None


def parse_metadata_bytes(data: bytes, where: str) -> IndexMetadata:
    """Parse and validate the bytes of a ``metadata.json`` read from ``where`` (named in errors).

    The same bytes as the previous call give the same model object: treat it as read-only.
    """
    global _last_parsed
    last = _last_parsed
    if last is not None and last[0] == data:
        return last[1]
    metadata = _parse_metadata_bytes(data, where)
    _last_parsed = (data, metadata)
    return metadata


def _parse_metadata_bytes(data: bytes, where: str) -> IndexMetadata:
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise MetadataError(
            f"Invalid metadata.json at '{where}': not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno})"
        ) from None
    except UnicodeDecodeError as exc:
        raise MetadataError(f"Cannot read metadata.json at '{where}': {exc}") from None
    except (RecursionError, ValueError) as exc:  # ValueError: an integer of over 4,300 digits
        raise MetadataError(
            f"Invalid metadata.json at '{where}': {json_limit(exc, advice=False)}; "
            "re-run docs-mcp build to write the index again"
        ) from None
    try:
        return normalize_metadata(raw)
    except MetadataError as exc:
        raise MetadataError(f"Invalid metadata.json at '{where}': {exc}") from None


def _taxonomy_dict(key: str, field: TaxonomyField) -> dict[str, Any]:
    out: dict[str, Any] = {"description": field_description(key, field), "values": list(field.values)}
    if field.vector_collapse:
        out["vector_collapse"] = True
    resources = {value: {"mcp_resource": True} for value, p in field.properties.items() if p.mcp_resource}
    if resources:
        out["properties"] = resources
    return out


def metadata_to_dict(meta: IndexMetadata, *, validate: bool = True) -> dict[str, Any]:
    """The JSON document for ``meta``, keys in the original's order (validated first by default)."""
    if validate:
        meta = normalize_metadata(meta)
    out: dict[str, Any] = {
        "metadata_version": meta.metadata_version,
        "corpus_description": meta.corpus_description,
        "taxonomy": {key: _taxonomy_dict(key, field) for key, field in meta.taxonomy.items()},
        "stats": {
            "total_chunks": meta.stats.total_chunks,
            "total_files": meta.stats.total_files,
            "indexed_at": meta.stats.indexed_at,
            "source_commit": meta.stats.source_commit,
        },
        "embedding": meta.embedding.model_dump() if meta.embedding else None,
    }
    if meta.prompts:
        out["prompts"] = [prompt.to_dict() for prompt in meta.prompts]
    if meta.tool_descriptions:
        tools = {k: v for k, v in meta.tool_descriptions.model_dump().items() if v is not None}
        if tools:
            out["tool_descriptions"] = tools
    if meta.mcpServerInstructions is not None:
        out["mcpServerInstructions"] = meta.mcpServerInstructions
    if meta.heading_vectors is not None:
        out["heading_vectors"] = meta.heading_vectors.model_dump()
    if meta.auto_include != ORIGINAL_AUTO_INCLUDE:  # written only when a manifest changed it
        out["auto_include"] = meta.auto_include.model_dump() if meta.auto_include else False
    out["files"] = {path: dict(entry) for path, entry in meta.files.items()}
    out["index"] = {"engine": meta.index.engine, "table": meta.index.table, "path": meta.index.path}
    return out


def metadata_to_json(meta: IndexMetadata) -> str:
    """Serialise ``meta`` exactly like the original (2-space JSON, no trailing newline); validates first."""
    return json.dumps(metadata_to_dict(meta), indent=2, ensure_ascii=False)


def write_metadata(index_dir: str | Path, meta: IndexMetadata) -> Path:
    """Write ``<index_dir>/metadata.json`` (validated, deterministic) and return its path."""
    path = Path(index_dir) / METADATA_FILENAME
    path.write_text(metadata_to_json(meta), encoding="utf-8")
    return path


__all__ = [
    "MAX_KEY_LENGTH",
    "MAX_TAXONOMY_KEYS",
    "MAX_VALUES_PER_KEY",
    "MAX_VALUE_LENGTH",
    "METADATA_FILENAME",
    "METADATA_VERSION",
    "ORIGINAL_AUTO_INCLUDE",
    "SUPPORTED_MAJOR",
    "AutoInclude",
    "CorpusStats",
    "EmbeddingInfo",
    "IndexLocation",
    "IndexMetadata",
    "PromptArgument",
    "PromptContent",
    "PromptDefinition",
    "PromptMessage",
    "TaxonomyField",
    "TaxonomyValueProperties",
    "ToolDescriptions",
    "check_taxonomy_limits",
    "collapse_keys",
    "field_description",
    "js_length",
    "metadata_to_dict",
    "metadata_to_json",
    "missing_index_advice",
    "normalize_metadata",
    "parse_metadata_bytes",
    "read_metadata",
    "resource_values",
    "taxonomy_key_problem",
    "taxonomy_value_problem",
    "write_metadata",
]
