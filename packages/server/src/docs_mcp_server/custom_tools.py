"""Custom tools declared on the command line (``--custom-tools-json``).

Each entry is ``{"name", "description", "inputSchema"}``. Like the original server, such tools are
answered by an echo handler that returns the call's arguments as compact JSON; agent evaluations use
this to collect structured feedback (for example a ``docs_feedback`` tool) through the same server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from docs_mcp_core.errors import json_limit, shown
from docs_mcp_core.json_lines import loads_noting_repeats
from docs_mcp_server.errors import OptionsError
from docs_mcp_server.options import CustomTool

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

MAX_FILE_BYTES = 16 * 1024 * 1024
PATTERN_SECONDS = 0.5
"""How long a custom tool's ``pattern`` may take to match one argument. Python's ``re`` backtracks:
an operator's ``^(a+)+$`` held a call of 31 characters, and every other request of the server with
it, for 46 s (and a few characters more for hours)."""


def schema_validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A draft 2020-12 validator of ``schema`` whose regular expressions (``pattern``, and the
    property-name patterns of ``patternProperties``, which ``additionalProperties`` reads too) give up
    after :data:`PATTERN_SECONDS` (matched with the ``regex`` module, which can stop a match): the
    value is then refused, named by its length, instead of holding the server. ``uniqueItems``,
    ``unevaluatedItems`` and ``unevaluatedProperties`` are checked in time linear in the value's
    size, and no reference is ever fetched."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, wanted: str, instance: Any, _schema: Any) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "string"):
            return
        try:
            if not _search(wanted, instance):
                yield ValidationError(f"{instance!r} does not match {wanted!r}")
        except _TooSlow as slow:
            yield ValidationError(slow.message("a value"))

    def pattern_properties(
        validator: Any, patterns: dict[str, Any], instance: Any, _schema: Any
    ) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "object"):
            return
        for wanted, subschema in patterns.items():
            for key, value in instance.items():
                try:
                    matched = _search(wanted, key)
                except _TooSlow as slow:
                    yield ValidationError(slow.message("a property name"))
                    return
                if matched:
                    yield from validator.descend(value, subschema, path=key, schema_path=wanted)

    def additional_properties(
        validator: Any, allowed: Any, instance: Any, schema: Any
    ) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "object"):
            return
        known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
        try:
            extras = [k for k in instance if k not in known and not any(_search(p, k) for p in patterns)]
        except _TooSlow as slow:
            yield ValidationError(slow.message("a property name"))
            return
        if validator.is_type(allowed, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], allowed, path=extra)
        elif not allowed and extras:  # jsonschema's own messages
            joined = ", ".join(repr(extra) for extra in sorted(extras, key=str))
            if patterns:
                verb = "does" if len(extras) == 1 else "do"
                regexes = ", ".join(repr(p) for p in sorted(patterns))
                yield ValidationError(f"{joined} {verb} not match any of the regexes: {regexes}")
            else:
                verb = "was" if len(extras) == 1 else "were"
                yield ValidationError(f"Additional properties are not allowed ({joined} {verb} unexpected)")

    bounded = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "uniqueItems": _unique_items,
        "unevaluatedItems": _unevaluated_items,
        "unevaluatedProperties": _unevaluated_properties,
    }
    from referencing import Registry

    # no retrieval: a $ref to a URL was fetched (no timeout, on the event loop) when the tool was called
    return validators.extend(Draft202012Validator, bounded)(schema, registry=Registry())


def _unique_items(validator: Any, unique: Any, instance: Any, _schema: Any) -> Iterator[Any]:
    """``uniqueItems`` in time linear in the array's size (jsonschema compared each pair of items
    it cannot sort, such as objects)."""
    from jsonschema.exceptions import ValidationError

    if unique and validator.is_type(instance, "array"):
        seen: set[Any] = set()
        for item in instance:
            if (key := _equality_key(item)) in seen:
                yield ValidationError(f"{instance!r} has non-unique elements")  # jsonschema's words
                return
            seen.add(key)


def _unevaluated_items(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``unevaluatedItems`` as jsonschema checks it, in time linear in the array's size (it looked
    each index up in a list of the evaluated ones)."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "array"):
        return
    evaluated = _evaluated_indexes(validator, instance, schema)
    extras = [item for index, item in enumerate(instance) if index not in evaluated]
    if extras:
        yield ValidationError(f"Unevaluated items are not allowed ({_extras(extras)} unexpected)")


def _unevaluated_properties(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``unevaluatedProperties`` as jsonschema checks it, in time linear in the object's size (it
    looked each key up in a list of the evaluated ones) and with the schema's property-name patterns
    given :data:`PATTERN_SECONDS` (it matched them with Python's ``re``, with no bound)."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    try:
        evaluated = _evaluated_keys(validator, instance, schema)
    except _TooSlow as slow:
        yield ValidationError(slow.message("a property name"))
        return
    invalid = [  # once per error, as jsonschema lists them
        key
        for key in instance
        if key not in evaluated
        for _ in validator.descend(instance[key], unevaluated, path=key, schema_path=key)
    ]
    if invalid and unevaluated is False:
        yield ValidationError(
            f"Unevaluated properties are not allowed ({_extras(sorted(invalid, key=str))} unexpected)"
        )
    elif invalid:
        yield ValidationError(
            f"Unevaluated properties are not valid under the given schema ({_extras(invalid)} unevaluated and invalid)"
        )


def _extras(extras: list[Any]) -> str:
    return ", ".join(repr(extra) for extra in extras) + (" was" if len(extras) == 1 else " were")


def _referenced(validator: Any, schema: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """The validators and schemas of ``schema``'s ``$ref`` and ``$dynamicRef``, as jsonschema follows them."""
    for keyword in ("$ref", "$dynamicRef"):
        if (reference := schema.get(keyword)) is not None:
            resolved = validator._resolver.lookup(reference)  # as jsonschema resolves it
            yield validator.evolve(schema=resolved.contents, _resolver=resolved.resolver), resolved.contents


def _applied(validator: Any, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    """The subschemas of ``schema`` that apply to ``instance`` in place and accept it (``allOf``,
    ``oneOf``, ``anyOf``, ``if`` with ``then`` or ``else``), as jsonschema's evaluation counts them."""
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                yield subschema
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            yield schema["if"]
            if "then" in schema:
                yield schema["then"]
        elif "else" in schema:
            yield schema["else"]


def _evaluated_indexes(validator: Any, instance: list[Any], schema: Any) -> set[int]:
    """jsonschema's ``find_evaluated_item_indexes_by_schema``, as a set."""
    if validator.is_type(schema, "boolean"):
        return set()
    if "items" in schema:
        return set(range(len(instance)))
    evaluated: set[int] = set()
    for referenced, contents in _referenced(validator, schema):
        evaluated |= _evaluated_indexes(referenced, instance, contents)
    if "prefixItems" in schema:
        evaluated |= set(range(len(schema["prefixItems"])))
    for keyword in ("contains", "unevaluatedItems"):
        if keyword in schema:
            checker = validator.evolve(schema=schema[keyword])
            evaluated |= {index for index, item in enumerate(instance) if checker.is_valid(item)}
    for subschema in _applied(validator, instance, schema):
        evaluated |= _evaluated_indexes(validator, instance, subschema)
    return evaluated


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
    """jsonschema's ``find_evaluated_property_keys_by_schema``, as a set, its patterns timed."""
    if validator.is_type(schema, "boolean"):
        return set()
    evaluated: set[str] = set()
    for referenced, contents in _referenced(validator, schema):
        evaluated |= _evaluated_keys(referenced, instance, contents)
    if validator.is_type(properties := schema.get("properties"), "object"):
        evaluated |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            evaluated |= {
                k for k, v in instance.items() if next(validator.descend(v, subschema), None) is None
            }
    for pattern in schema.get("patternProperties", {}):
        evaluated |= {key for key in instance if _search(pattern, key)}
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            evaluated |= _evaluated_keys(validator, instance, subschema)
    for subschema in _applied(validator, instance, schema):
        evaluated |= _evaluated_keys(validator, instance, subschema)
    return evaluated


def _equality_key(value: Any) -> Any:
    """A hashable key of a JSON value, equal for values JSON Schema calls equal: numbers by value
    (``1`` and ``1.0``), booleans apart from numbers, objects whatever their key order."""
    if isinstance(value, bool) or value is None:
        return (0, value)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, list):
        return (3, tuple(_equality_key(item) for item in cast(list[Any], value)))
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value).items()
        return (4, frozenset((key, _equality_key(item)) for key, item in items))
    return (5, id(value))  # not JSON: equal only to itself


class _TooSlow(Exception):
    """A pattern that did not finish matching a text within :data:`PATTERN_SECONDS`."""

    def __init__(self, pattern: str, text: str) -> None:
        super().__init__(pattern)
        self.pattern, self.length = pattern, len(text)

    def message(self, what: str) -> str:
        return (
            f"{what} of {self.length:,} characters could not be matched against {self.pattern!r} within "
            f"{PATTERN_SECONDS} s (the pattern backtracks); send a shorter value"
        )


def _search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``; :class:`_TooSlow` after
    :data:`PATTERN_SECONDS`."""
    import regex

    try:
        return regex.search(pattern, text, timeout=PATTERN_SECONDS) is not None
    except TimeoutError as exc:
        raise _TooSlow(pattern, text) from exc
    except regex.error:  # a pattern only Python's re reads (check_schema compiled it with re)
        return re.search(pattern, text) is not None


def echo_arguments(arguments: dict[str, Any]) -> str:
    """The default custom-tool handler: the arguments as compact JSON."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def parse_custom_tools_json(value: str) -> list[CustomTool]:
    """Parse the ``--custom-tools-json`` value (JSON text, or ``@path`` to read it from a file)."""
    source = "--custom-tools-json"
    text = value
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        source = str(path)
        try:
            with path.open("rb") as handle:  # a bounded read: @/dev/zero grew until memory ran out
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise OptionsError(f"cannot read custom tools file '{path}': {exc.strerror or exc}") from exc
        if len(data) > MAX_FILE_BYTES:
            raise OptionsError(f"custom tools file '{path}' is larger than 16 MiB")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise OptionsError(
                f"custom tools file '{path}' is not UTF-8 text (byte {exc.start}); save it as UTF-8"
            ) from None
    try:
        data, twice = loads_noting_repeats(text)
    except json.JSONDecodeError as exc:
        raise OptionsError(
            f"{source} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    except (RecursionError, ValueError) as exc:  # ValueError: an integer of over 4,300 digits
        raise OptionsError(f"{source} cannot be read: {json_limit(exc)}") from None
    if twice:
        raise OptionsError(
            f"{source} gives the key '{shown(twice[0])}' twice in one object; only the last value would count: "
            "remove the other"
        )
    if not isinstance(data, list):
        raise OptionsError(f"{source} must be a JSON array of {{name, description, inputSchema}} objects")
    tools: list[CustomTool] = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise OptionsError(f"{source}[{index}] must be an object with name, description and inputSchema")
        name = entry.get("name")
        description = entry.get("description")
        schema = entry.get("inputSchema")
        if not isinstance(name, str):
            raise OptionsError(f"{source}[{index}].name must be a string")
        if not isinstance(description, str) or not description.strip():
            raise OptionsError(f"{source}[{index}].description must be a non-empty string")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise OptionsError(f'{source}[{index}].inputSchema must be an object with "type": "object"')
        tools.append(
            CustomTool(name=name, description=description, input_schema=schema, handler=echo_arguments)
        )
    return tools


_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("$defs", "definitions", "properties", "patternProperties", "dependentSchemas")
_SCHEMA_VALUES = (
    "not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema",
)  # fmt: skip
_SAME_VALUE = frozenset(("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"))
"""The keywords whose schemas apply to the value itself, not to a part of it: a cycle of these and
references never ends."""


def reference_problem(validator: Draft202012Validator) -> str | None:
    """What is wrong with the references (``$ref``, ``$dynamicRef``) of a custom tool's schema, as the
    end of a start-up error; ``None`` when each resolves within the schema (or to a JSON Schema
    meta-schema, which jsonschema holds) and none leads back to itself without reading a part of
    the value. ``validator`` is the schema's (:func:`schema_validator`), which fetches nothing:
    without this check such a reference failed only when the tool was called."""
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    # each schema object: the schemas that apply to the same value (their id, the $ref that leads there)
    same_value: dict[int, list[tuple[int, str | None]]] = {}
    root = validator._resolver  # pyright: ignore[reportAttributeAccessIssue] - what a call resolves with
    stack: list[tuple[Any, str, Any]] = [(validator.schema, "", root)]
    while stack:
        node, path, resolver = stack.pop()
        if not isinstance(node, dict) or id(node) in same_value:
            continue
        if "$id" in node:
            resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
        edges = same_value[id(node)] = []
        for keyword, child, where in _subschemas(node, path):
            stack.append((child, where, resolver))
            if keyword in _SAME_VALUE:
                edges.append((id(child), None))
        for keyword in ("$ref", "$dynamicRef"):
            if isinstance(reference := node.get(keyword), str):
                named = f"its {keyword} '{shown(reference)}' at {path or 'the top level'}"
                try:
                    edges.append((id(resolver.lookup(reference).contents), named))
                except Unresolvable:
                    return (
                        f"{named} resolves to nothing in the schema (references to other documents are "
                        "not fetched); copy the schema it names into $defs and refer to '#/$defs/<name>'"
                    )
    return _endless_reference(same_value)


def _subschemas(node: dict[str, Any], path: str) -> Iterator[tuple[str, Any, str]]:
    """The schemas directly inside schema object ``node``: (keyword, schema, where it is)."""
    prefix = f"{path}/" if path else ""
    for keyword in _SCHEMA_LISTS:
        if isinstance(items := node.get(keyword), list):
            for index, child in enumerate(items):
                yield keyword, child, f"{prefix}{keyword}/{index}"
    for keyword in _SCHEMA_MAPS:
        if isinstance(children := node.get(keyword), dict):
            for name, child in children.items():
                yield keyword, child, f"{prefix}{keyword}/{shown(name)}"
    for keyword in _SCHEMA_VALUES:
        if keyword in node:
            yield keyword, node[keyword], f"{prefix}{keyword}"


def _endless_reference(same_value: dict[int, list[tuple[int, str | None]]]) -> str | None:
    """A reference on a cycle of schemas that apply to the same value, as :func:`reference_problem`
    names it; ``None`` when there is no such cycle (a depth-first search, each schema once)."""
    done: set[int] = set()
    for start in same_value:
        if start in done:
            continue
        on_path: dict[int, int] = {start: 0}  # schema: its place on the path
        path: list[tuple[int, str | None, Iterator[tuple[int, str | None]]]] = [
            (start, None, iter(same_value[start]))
        ]
        while path:
            for target, named in path[-1][2]:
                if target in on_path:  # a cycle: the references along it, this one last
                    cycle = [came for _, came, _ in path[on_path[target] + 1 :]] + [named]
                    first = next(came for came in cycle if came is not None)
                    return (
                        f"{first} leads back to itself without reading a part of the value, so checking a "
                        "value would never end; refer to a schema of the value's parts (under properties "
                        "or items) instead"
                    )
                if target in same_value and target not in done:
                    on_path[target] = len(path)
                    path.append((target, named, iter(same_value[target])))
                    break
            else:
                finished, _, _ = path.pop()
                del on_path[finished]
                done.add(finished)
    return None
