"""Number formatting shared by every report, matching the original harness digit for digit.

The original is written in JavaScript and formats with ``Number.prototype.toFixed``: the exact binary
value is rounded to the nearest decimal, ties away from zero, and negative values keep their sign even
when they round to zero (``(-1e-9).toFixed(6) == "-0.000000"``). Python's ``format`` rounds ties to
even, which differs on values such as 0.0078125, so reports go through :func:`to_fixed` instead.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

METRIC_DECIMALS = 6
"""Every metric in a run result is rounded to this many decimals, like the original."""


def to_fixed(value: float, digits: int) -> str:
    """Format ``value`` with ``digits`` decimals exactly as JavaScript's ``toFixed`` does.

    Non-finite values print as JavaScript prints them (``NaN``, ``Infinity``, ``-Infinity``), and so
    do values of 1e21 and more (``1e+21``).
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if abs(value) >= 1e21:
        # JavaScript's toFixed gives the number's own text from 1e21 on ("1e+21"), as repr() does;
        # rounding 1e300 to 6 decimals would also exceed the decimal module's 28 digits
        return repr(float(value))
    quantum = Decimal(1).scaleb(-digits)
    text = format(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP), "f")
    if value == 0 and text.startswith("-"):
        # JavaScript prints -0 as "0"; only a negative non-zero value keeps its sign.
        text = text[1:]
    return text


def round_metric(value: float) -> float:
    """Round a metric to :data:`METRIC_DECIMALS` decimals (``Number(x.toFixed(6))``)."""
    if not math.isfinite(value):
        return 0.0
    return float(to_fixed(value, METRIC_DECIMALS))


def signed_fixed(value: float, digits: int) -> str:
    """``+x`` for values >= 0, ``-x`` otherwise, both with ``digits`` decimals."""
    text = to_fixed(value, digits)
    return f"+{text}" if value >= 0 else text


def format_size(num_bytes: int) -> str:
    """Human size as the benchmark report prints it: ``12.3MB`` from 1 MiB up, else ``456KB``."""
    mib = num_bytes / (1024 * 1024)
    if mib >= 1:
        return f"{to_fixed(mib, 1)}MB"
    return f"{to_fixed(num_bytes / 1024, 0)}KB"
