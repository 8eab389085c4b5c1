"""Eval cases: what to search for and which chunk a good search must return.

Two file formats are read, both a JSON array with one object per case:

* the runner format of the original harness (``cases.json``)::

    {"query": "...", "expectedChunkId": "guides/retries.md#backoff", "filters": {"language": "python"},
     "limit": 5, "maxRounds": 3, "name": "...", "category": "..."}

* the snake-case suite format the original documents but never reads (``eval-suite.json``), where the
  expected chunk is ``expected_chunk_id`` and the round budget ``max_rounds_allowed``.

Only ``query`` and the expected chunk id are required; ``filters`` defaults to ``{}``, ``limit`` to 5
and the round budget to 3. Unknown keys are ignored, as the original ignores them. Any malformed case
is reported with the file, the case's index (0-based, as in the JSON array) and the field at fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docs_mcp_eval.errors import CaseFileError, json_limit

DEFAULT_LIMIT = 5
"""Page size asked of ``search_docs`` when a case does not set ``limit``."""

DEFAULT_MAX_ROUNDS = 3
"""Pages a case may walk (following ``next_cursor``) when it does not set a round budget."""

_EXPECTED_KEYS = ("expectedChunkId", "expected_chunk_id")
_MAX_ROUNDS_KEYS = ("maxRounds", "max_rounds_allowed")


@dataclass(frozen=True, kw_only=True)
class EvalCase:
    """One query of the suite and the chunk a good search returns for it."""

    query: str
    """Text sent as ``search_docs.query``."""
    expected_chunk_id: str
    """The chunk id that counts as the right answer."""
    filters: Mapping[str, str] = field(default_factory=dict)
    """Taxonomy filters sent along with the query (``{"language": "python"}``)."""
    limit: int = DEFAULT_LIMIT
    """Page size sent as ``search_docs.limit``."""
    max_rounds: int = DEFAULT_MAX_ROUNDS
    """How many pages the harness may walk before the case counts as not found."""
    name: str | None = None
    """Label used in reports and to match cases against a baseline."""
    category: str | None = None
    """Group used by the per-category tables (``uncategorized`` when absent)."""

    def label(self, index: int) -> str:
        """The case's name, or ``case-<index>`` like the original when it has none."""
        return self.name if self.name is not None else f"case-{index}"


MAX_JSON_FILE_BYTES = 64 << 20
"""A case or baseline file is read up to this size: ``--cases /dev/zero`` (or a dump given by
mistake) was read until memory ran out."""


def read_json_text(file: Path, what: str) -> str:
    """The text of a case or baseline file; ``ValueError`` (its message naming ``what`` and the file)
    when it is larger than :data:`MAX_JSON_FILE_BYTES` or not UTF-8. ``OSError`` as ``open`` raises it."""
    with file.open("rb") as handle:
        data = handle.read(MAX_JSON_FILE_BYTES + 1)
    if len(data) > MAX_JSON_FILE_BYTES:
        raise ValueError(
            f"{what} {file} is larger than {MAX_JSON_FILE_BYTES >> 20} MiB; is it the right file?"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(
            f"{what} {file} is not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); re-save it as UTF-8"
        ) from None


def read_json_file(file: Path, what: str, error: type[Exception], *, missing: str, label: str) -> Any:
    """The decoded JSON of a case or baseline ``file``; every failure is an ``error`` naming it:
    ``missing`` when there is no such file, ``label`` before what is wrong with its JSON."""
    try:
        text = read_json_text(file, what)
    except FileNotFoundError:
        raise error(f"{missing}: {file}") from None
    except OSError as exc:
        raise error(f"cannot read {what} {file}: {exc}") from None
    except ValueError as exc:
        raise error(str(exc)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{label}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except (RecursionError, ValueError) as exc:  # ended the command with a bare traceback
        raise error(f"{label}: cannot be read: {json_limit(exc)}") from None


def load_cases(path: str | Path) -> list[EvalCase]:
    """Read and validate a case file (either format); raise :class:`CaseFileError` when it is unusable."""
    file = Path(path)
    data = read_json_file(file, "case file", CaseFileError, missing="case file not found", label=str(file))
    return parse_cases(data, source=str(file))


def parse_cases(data: Any, *, source: str = "<cases>") -> list[EvalCase]:
    """Validate already-decoded JSON (a list of case objects) into :class:`EvalCase` values."""
    if not isinstance(data, list):
        raise CaseFileError(f"{source}: expected a JSON array of cases, got {_json_type(data)}")
    if not data:
        raise CaseFileError(f"{source}: the case file contains no cases")
    return [_parse_case(raw, index, source) for index, raw in enumerate(data)]


def _parse_case(raw: Any, index: int, source: str) -> EvalCase:
    if not isinstance(raw, dict):
        raise CaseFileError(f"{source}: case {index}: expected an object, got {_json_type(raw)}")
    where = _case_where(source, index, raw)
    _refuse_lone_surrogates(raw, where)

    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise CaseFileError(f"{where}: field 'query' must be a non-empty string (got {_show(query)})")

    expected = _pick_alias(raw, _EXPECTED_KEYS, where)
    expected_key, expected_value = expected if expected else ("expectedChunkId", None)
    if not isinstance(expected_value, str) or not expected_value.strip():
        raise CaseFileError(
            f"{where}: field '{expected_key}' must be a non-empty string naming the expected chunk id"
            f" (got {_show(expected_value)}); use 'expectedChunkId' or 'expected_chunk_id'"
        )

    filters = _parse_filters(raw.get("filters"), where)
    limit = _positive_int(raw, "limit", DEFAULT_LIMIT, where)
    rounds = _pick_alias(raw, _MAX_ROUNDS_KEYS, where)
    max_rounds = DEFAULT_MAX_ROUNDS
    if rounds is not None:
        max_rounds = _positive_int({rounds[0]: rounds[1]}, rounds[0], DEFAULT_MAX_ROUNDS, where)

    name = _optional_str(raw, "name", where)
    category = _optional_str(raw, "category", where)
    return EvalCase(
        query=query,
        expected_chunk_id=expected_value,
        filters=filters,
        limit=limit,
        max_rounds=max_rounds,
        name=name,
        category=category,
    )


def _refuse_lone_surrogates(raw: Mapping[str, Any], where: str) -> None:
    """A ``\\ud800`` escape in a field the run sends or reports is half of a UTF-16 pair, which no
    request or report can hold: the run ended in a traceback when the query was sent."""
    fields: list[tuple[str, Any]] = [
        (key, raw.get(key)) for key in ("query", *_EXPECTED_KEYS, "name", "category")
    ]
    filters = raw.get("filters")
    if isinstance(filters, dict):
        for key, value in filters.items():  # pyright: ignore[reportUnknownVariableType]
            fields += [("filters", key), (f"filters.{key}", value)]
    for name, value in fields:
        if not isinstance(value, str):
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CaseFileError(
                f"{where}: field '{name}' holds '\\u{ord(value[exc.start]):04x}', half of a UTF-16 surrogate "
                "pair, which is not a character; write the character itself or remove it"
            ) from None


def _case_where(source: str, index: int, raw: Mapping[str, Any]) -> str:
    name = raw.get("name")
    if isinstance(name, str) and name:
        return f"{source}: case {index} ({name!r})"
    return f"{source}: case {index}"


def _pick_alias(raw: Mapping[str, Any], keys: Sequence[str], where: str) -> tuple[str, Any] | None:
    """Return ``(key, value)`` for whichever alias is present; both with different values is an error."""
    present = [(key, raw[key]) for key in keys if key in raw and raw[key] is not None]
    if not present:
        return None
    if len(present) > 1 and present[0][1] != present[1][1]:
        raise CaseFileError(
            f"{where}: fields '{present[0][0]}' and '{present[1][0]}' disagree"
            f" ({_show(present[0][1])} vs {_show(present[1][1])}); keep only one"
        )
    return present[0]


def _parse_filters(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CaseFileError(
            f"{where}: field 'filters' must be an object of taxonomy key to value (got {_show(value)})"
        )
    filters: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str) or not item.strip():
            raise CaseFileError(
                f"{where}: field 'filters.{key}' must be a non-empty string (got {_show(item)})"
            )
        filters[str(key)] = item
    return filters


def _positive_int(raw: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CaseFileError(f"{where}: field '{key}' must be a positive integer (got {_show(value)})")
    return value


def _optional_str(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise CaseFileError(f"{where}: field '{key}' must be a string (got {_show(value)})")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
