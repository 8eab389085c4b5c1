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
from typing import TYPE_CHECKING, Any

from docs_mcp_core.errors import json_limit
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
    """A draft 2020-12 validator of ``schema`` whose ``pattern`` gives up after :data:`PATTERN_SECONDS`
    (matched with the ``regex`` module, which can stop a match): the value is then refused, named
    by its length, instead of holding the server."""
    import regex
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern(validator: Any, wanted: str, instance: Any, _schema: Any) -> Iterator[ValidationError]:
        if not validator.is_type(instance, "string"):
            return
        try:
            found = regex.search(wanted, instance, timeout=PATTERN_SECONDS)
        except TimeoutError:
            yield ValidationError(
                f"a value of {len(instance):,} characters could not be matched against {wanted!r} within "
                f"{PATTERN_SECONDS} s (the pattern backtracks); send a shorter value"
            )
            return
        except regex.error:  # a pattern only Python's re reads (check_schema compiled it with re)
            found = re.search(wanted, instance)
        if found is None:
            yield ValidationError(f"{instance!r} does not match {wanted!r}")

    return validators.extend(Draft202012Validator, {"pattern": pattern})(schema)


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
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionsError(
            f"{source} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    except (RecursionError, ValueError) as exc:  # ValueError: an integer of over 4,300 digits
        raise OptionsError(f"{source} cannot be read: {json_limit(exc)}") from None
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
