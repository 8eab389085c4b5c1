"""Split evaluation sets into a tuning half and a check half.

    uv run python scripts/evalsets/split_cases.py evals/sdk-docs/handwritten.json ...

For each ``x.json`` writes ``x.tune.json`` and ``x.check.json`` next to it (see
:func:`evalset_common.split_halves` for the rule: stratified by category, ordered by a hash of the
case name, dealt out alternately). Tune ranking on the tuning halves; the check halves are for
reporting only.

A new or removed case reshuffles the later cases of its category, so that a set split again after
it changed would move cases someone tuned on into its check half. With ``--keep``, every case
already in ``x.tune.json`` or ``x.check.json`` (by name) stays in its half and only the new cases
are dealt out.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from evalset_common import (
    EvalSetError,
    category_counts,
    fail,
    half_paths,
    is_half,
    read_cases,
    split_halves,
    split_keeping,
    write_cases,
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Split evaluation sets into tuning and check halves.")
    parser.add_argument("sets", nargs="+", type=Path, help="full case files (x.json)")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the cases of the existing halves in their half (by name); deal out only new cases",
    )
    args = parser.parse_args(argv)
    for path in args.sets:
        if is_half(path):
            return fail(f"{path}: this is already a half; pass the full set it was split from")
        try:
            cases = read_cases(path)
        except EvalSetError as exc:
            return fail(str(exc))
        tune_path, check_path = half_paths(path)
        if args.keep:
            try:
                before = [{str(c.get("name")) for c in read_cases(p)} for p in (tune_path, check_path)]
            except EvalSetError as exc:
                return fail(f"{exc} (--keep needs both halves of the earlier split)")
            tune, check = split_keeping(cases, before[0], before[1])
        else:
            tune, check = split_halves(cases)
        write_cases(tune_path, tune)
        write_cases(check_path, check)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(category_counts(check).items()))
        print(
            f"{path}: {len(tune)} tune -> {tune_path.name}, {len(check)} check -> {check_path.name} ({counts})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
