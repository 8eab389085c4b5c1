"""Generate mechanical exact-name cases for the Cargo book (a command-line tool's book) from a build.

    uv run python scripts/evalsets/make_book_exact_name.py --index-dir /tmp/ev-cargo \\
        --avoid evals/cargo-book/hand-written.json --out evals/cargo-book/exact-name-mechanical.json
    uv run python scripts/evalsets/split_cases.py evals/cargo-book/exact-name-mechanical.json

The uv generator (``make_cli_exact_name.py``) reads uv's layout; this one reads the other common one
(``fetch_book_corpus.py`` brings it), from the build's ``chunks.json``, so it sees exactly the
sections a search returns. Three kinds of name, each answered by the one section that defines it:

* **options**: every ``<dt class="option-term" id="option-cargo-build---release">`` of a command's
  own page (``commands/cargo-build.md``; the id names the command), short flags too (``-r``). The
  query names the option with its command in one of four wordings (``cargo build --release``,
  ``cargo build --release option``, ``what does --release do in cargo build``, ``--release flag for
  cargo build``); one option in four is kept, by a stable hash of its id.
* **keys**: every key heading of the configuration reference (``#### `build.jobs` ``, inside the
  section of its table), worded as the file writes it (``build.jobs``), with its table
  (``[build] jobs``) or in prose (``build.jobs in config.toml``).
* **variables**: every variable that opens an item of a list of the environment reference
  (``* `CARGO_HOME` --- ...``) in exactly one section, alone or in a short question.

The wording is picked by a stable hash of the name, so the output is the same on every run. A query
that another set already asks (``--avoid``) is left out.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from evalset_common import (
    Case,
    Chunk,
    EvalSetError,
    exact_name_case,
    fail,
    load_chunks,
    pick_wording,
    stable_hash,
    write_generated,
)

OPTION_ID = re.compile(r'<dt class="option-term" id="option-([a-z0-9-]+?)-(-?-[A-Za-z0-9][A-Za-z0-9-]*)"')
KEY_HEADING = re.compile(r"^#{2,6} `([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+)`[ \t]*$", re.MULTILINE)
VARIABLE_ITEM = re.compile(r"^[*-] `([A-Z][A-Z0-9_]*)` (?:-{1,3}|\u2014)", re.MULTILINE)
OPTION_SHARE = 4  # one option in this many is kept

OPTION_WORDINGS = ("{c} {f}", "{c} {f} option", "what does {f} do in {c}", "{f} flag for {c}")
KEY_WORDINGS = ("{k}", "[{t}] {r}", "{k} in config.toml")
VARIABLE_WORDINGS = ("{v}", "what does {v} do", "{v} environment variable")


def option_cases(chunks: Sequence[Chunk]) -> list[Case]:
    cases: list[Case] = []
    for chunk in chunks:
        if not chunk.filepath.startswith("commands/"):
            continue
        page = chunk.filepath.rsplit("/", 1)[-1].removesuffix(".md")
        for command, flag in OPTION_ID.findall(chunk.content):
            element = f"{command}-{flag}"
            if command != page or stable_hash(element) % OPTION_SHARE:
                continue
            query = pick_wording(OPTION_WORDINGS, element).format(c=command.replace("-", " "), f=flag)
            cases.append(exact_name_case(f"option {element}", query, chunk))
    return cases


def key_cases(chunks: Sequence[Chunk]) -> list[Case]:
    cases: list[Case] = []
    for chunk in chunks:
        if chunk.filepath != "reference/config.md":
            continue
        for key in KEY_HEADING.findall(chunk.content):
            table, _, rest = key.partition(".")
            query = pick_wording(KEY_WORDINGS, key).format(k=key, t=table, r=rest)
            cases.append(exact_name_case(f"key {key}", query, chunk))
    return cases


def variable_cases(chunks: Sequence[Chunk]) -> list[Case]:
    found = [
        (name, chunk)
        for chunk in chunks
        if chunk.filepath == "reference/environment-variables.md"
        for name in dict.fromkeys(VARIABLE_ITEM.findall(chunk.content))
    ]
    sections = Counter(name for name, _ in found)
    return [
        exact_name_case(f"variable {name}", pick_wording(VARIABLE_WORDINGS, name).format(v=name), chunk)
        for name, chunk in found
        if sections[name] == 1  # defined in two sections (read, and set for build scripts): either answers
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate exact-name cases for the Cargo book.")
    parser.add_argument("--index-dir", type=Path, required=True, help="a build of the book (its chunks.json)")
    parser.add_argument("--out", type=Path, required=True, help="the case file to write")
    parser.add_argument(
        "--avoid", type=Path, action="append", default=[], help="a set whose queries to leave out"
    )
    args = parser.parse_args(argv)
    try:
        chunks = load_chunks(args.index_dir)
        asked = {c["query"] for path in args.avoid for c in json.loads(path.read_text(encoding="utf-8"))}
    except (OSError, ValueError) as exc:
        return fail(f"cannot read a set to avoid: {exc}")
    except EvalSetError as exc:
        return fail(str(exc))
    kinds = {"options": option_cases(chunks), "keys": key_cases(chunks), "variables": variable_cases(chunks)}
    if not write_generated(args.out, kinds, asked):
        return fail(
            f"{args.index_dir}: no option ids, key headings or variables found; is this the Cargo book?"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
