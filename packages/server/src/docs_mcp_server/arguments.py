"""Checking tool-call arguments and explaining what is wrong in the original server's words.

Every call is validated against the tool's published JSON schema (``jsonschema``, draft 2020-12). The
first failure, in the original's order of checks (not an object → unexpected field → each field in
schema order), becomes the exact ``isError`` text the original returns, e.g. ``Unexpected field
'x'``, ``limit must be between 1 and 50`` or ``Invalid taxonomy value for 'language': 'cobol'.
Allowed values: go, python, typescript``. String values are trimmed first, as the original does, and
blank strings are rejected.

Arguments that plainly satisfy one of the built-in tools' schemas (strings, integers in range,
booleans, enum values: the keywords those schemas use) are accepted without ``jsonschema``, whose
import is left until a call needs it: a stdio server answers its first search before the import.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from docs_mcp_core.errors import shown
from docs_mcp_server.errors import ArgumentError
from docs_mcp_server.schemas import CONTEXT_DEFAULT, LIMIT_DEFAULT, SCOPE_DEFAULT

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

# the keywords of a field a plain check understands (anything else: jsonschema decides)
PLAIN_KEYWORDS = frozenset({"type", "description", "default", "minimum", "maximum", "enum"})


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int
    cursor: str | None
    filters: dict[str, str]
    max_tokens: int | None = None
    facets: bool = False

    def search_kwargs(self) -> SearchKwargs:
        """The engine's keyword arguments for this request (``engine.search(query, **kwargs)``)."""
        return SearchKwargs(
            limit=self.limit,
            filters=self.filters,
            cursor=self.cursor,
            max_tokens=self.max_tokens,
            facets=self.facets,
        )


class SearchKwargs(TypedDict):
    """The keyword arguments of ``SearchEngine.search`` / ``search_async`` a search request sets."""

    limit: int
    filters: dict[str, str]
    cursor: str | None
    max_tokens: int | None
    facets: bool


@dataclass(frozen=True)
class GetDocRequest:
    chunk_id: str
    context: int
    scope: str = SCOPE_DEFAULT
    max_tokens: int | None = None
    cursor: str | None = None


class ToolArguments:
    """Validator for one built-in tool: its schema, its string fields and its field order."""

    def __init__(self, tool: str, schema: Mapping[str, Any], filters: Collection[str] | None = None) -> None:
        """``filters`` are the taxonomy keys among the properties (``None``: every enum is one)."""
        self.tool = tool
        self.filters = filters
        self.schema = schema
        self._validator: Draft202012Validator | None = None
        self.properties: dict[str, Any] = dict(schema.get("properties", {}))
        self.order = list(self.properties)

    @property
    def validator(self) -> Draft202012Validator:
        """The schema's ``jsonschema`` validator (imported and built on first use)."""
        if self._validator is None:
            from jsonschema import Draft202012Validator

            self._validator = Draft202012Validator(self.schema)
        return self._validator

    def plainly_valid(self, normalised: Mapping[str, Any], blank: Collection[str]) -> bool:
        """Whether trimmed arguments certainly satisfy the schema, decided without ``jsonschema``;
        False when unsure (a keyword or value this check does not judge), and the validator decides."""
        schema = self.schema
        if set(schema) - {"type", "additionalProperties", "properties", "required"} or blank:
            return False
        if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
            return False
        if any(key not in normalised for key in schema.get("required", [])):
            return False
        return all(_plain_value(self.properties.get(key), value) for key, value in normalised.items())

    def _normalise(self, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Trim string values of string-typed fields; return the copy and the fields left blank."""
        normalised = dict(arguments)
        blank: list[str] = []
        for key, value in arguments.items():
            spec = self.properties.get(key)
            if isinstance(spec, Mapping) and spec.get("type") == "string" and isinstance(value, str):
                normalised[key] = value.strip()
                if not normalised[key]:
                    blank.append(key)
        return normalised, blank

    def _rank(self, field: str, presence: bool) -> tuple[int, int]:
        """Order of the original's checks: per field in schema order, presence/type before value."""
        return (
            2 + (self.order.index(field) if field in self.order else len(self.order)),
            0 if presence else 1,
        )

    def _message(self, error: ValidationError, arguments: Mapping[str, Any]) -> tuple[tuple[int, int], str]:
        path = list(error.absolute_path)
        if not path:
            if error.validator == "type":
                return (0, 0), f"{self.tool} input must be an object"
            if error.validator == "additionalProperties":
                unexpected = next(key for key in arguments if key not in self.properties)
                return (1, 0), f"Unexpected field '{unexpected}'"
            if error.validator == "required":
                required = self.schema.get("required", [])
                missing = next((f for f in required if f not in arguments), self.order[0])
                return self._rank(missing, True), f"{missing} must be a non-empty string"
            return (1, 1), f"Invalid {self.tool} input: {error.message}"
        field = str(path[0])
        return self._rank(field, error.validator == "type"), self._field_message(field, error)

    def _field_message(self, field: str, error: ValidationError) -> str:
        spec = self.properties.get(field, {})
        if spec.get("type") == "integer":
            if error.validator == "type":
                return f"{field} must be an integer"
            return f"{field} must be between {spec.get('minimum')} and {spec.get('maximum')}"
        if error.validator == "enum":
            allowed = ", ".join(str(v) for v in spec.get("enum", []))
            if self.filters is not None and field not in self.filters:
                return f"{field} must be one of: {allowed}"
            return (
                f"Invalid taxonomy value for '{field}': '{shown(error.instance)}'. Allowed values: {allowed}"
            )
        if spec.get("type") == "boolean":
            return f"{field} must be a boolean"
        if spec.get("type") == "string":
            return f"{field} must be a non-empty string"
        return f"Invalid value for '{field}': {error.message}"

    def check(self, arguments: Any) -> dict[str, Any]:
        """Return the trimmed arguments, or raise :class:`ArgumentError` with the first problem."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise ArgumentError(f"{self.tool} input must be an object")
        normalised, blank = self._normalise(arguments)
        if self.plainly_valid(normalised, blank):
            return normalised
        problems = [self._message(error, normalised) for error in self.validator.iter_errors(normalised)]
        problems += [(self._rank(field, True), f"{field} must be a non-empty string") for field in blank]
        if problems:
            raise ArgumentError(min(problems, key=lambda problem: problem[0])[1])
        return normalised


def _plain_value(spec: Any, value: Any) -> bool:
    """Whether ``value`` certainly satisfies the field ``spec`` (False when unsure)."""
    if not isinstance(spec, Mapping) or set(spec) - PLAIN_KEYWORDS:
        return False
    kind = spec.get("type")
    if "enum" in spec:
        return kind == "string" and type(value) is str and value in spec["enum"]
    if kind == "string":
        return type(value) is str
    if kind == "boolean":
        return type(value) is bool
    if kind == "integer" and type(value) is int:
        low, high = spec.get("minimum", value), spec.get("maximum", value)
        return isinstance(low, int) and isinstance(high, int) and low <= value <= high
    return False


def parse_search_request(
    checker: ToolArguments, arguments: Any, taxonomy_keys: Sequence[str]
) -> SearchRequest:
    args = checker.check(arguments)
    limit = args.get("limit", LIMIT_DEFAULT)
    filters = {key: args[key] for key in taxonomy_keys if key in args}
    budgeted = "max_tokens" in args and "max_tokens" not in taxonomy_keys
    return SearchRequest(
        query=args["query"],
        limit=int(limit),
        cursor=args.get("cursor"),
        filters=filters,
        max_tokens=int(args["max_tokens"]) if budgeted else None,
        facets=args.get("facets") is True and "facets" not in taxonomy_keys,
    )


def parse_get_doc_request(checker: ToolArguments, arguments: Any) -> GetDocRequest:
    args = checker.check(arguments)
    context = args.get("context", CONTEXT_DEFAULT)
    max_tokens = args.get("max_tokens")
    return GetDocRequest(
        chunk_id=args["chunk_id"],
        context=int(context),
        scope=args.get("scope", SCOPE_DEFAULT),
        max_tokens=int(max_tokens) if max_tokens is not None else None,
        cursor=args.get("cursor"),
    )


def check_custom_arguments(tool: str, validator: Draft202012Validator, arguments: Any) -> dict[str, Any]:
    """Validate a custom tool's arguments against its declared schema."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ArgumentError(f"{tool} input must be an object")
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(arguments))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise ArgumentError(
            f"Invalid arguments for '{tool}'{f' at {where!r}' if where else ''}: {error.message}"
        )
    return dict(arguments)
