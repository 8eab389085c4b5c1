"""JSON that is valid syntax but beyond what Python's ``json`` reads: arrays nested deeper than its
recursion limit (``RecursionError``) and an integer longer than its 4,300-digit limit
(``ValueError``). Every reader of a user's JSON file must turn both into one error line."""

from __future__ import annotations

DEPTH = 100_000
TOO_DEEP = "[" * DEPTH + "]" * DEPTH
HUGE_NUMBER = "9" * 5000
