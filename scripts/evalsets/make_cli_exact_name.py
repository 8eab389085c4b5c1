"""Generate mechanical exact-name cases for a command-line tool's book (uv's docs) from the corpus.

    uv run python scripts/evalsets/make_cli_exact_name.py --index-dir /tmp/uv-idx \\
        --out evals/uv-docs/exact-name-mechanical.json
    uv run python scripts/evalsets/split_cases.py evals/uv-docs/exact-name-mechanical.json

Input is the ``chunks.json`` of a build of the book (``scripts/evalsets/fetch_cli_corpus.py`` brings
it), so the generator sees exactly the sections a search returns. Three kinds of name come out, each
answered by the one section that defines it:

* **options**: every ``<dt id="uv-sync--frozen">`` of a generated command page (the page's first
  heading is the command, ``uv sync``). The query names the option with its command in one of four
  wordings (``uv sync --frozen``, ``uv sync --frozen option``, ``what does --frozen do in uv sync``,
  ``--frozen flag for uv sync``); one option in six is kept, by a stable hash of its id, so the
  options do not outnumber the other kinds.
* **keys**: every section of the settings reference whose heading is a key with an attribute-list id
  (``cache-dir {: #cache-dir }``, ``upgrade-package {: #pip_upgrade-package }``), named as a
  configuration file writes it (``tool.uv.cache-dir``, ``[tool.uv.pip] upgrade-package``, ...).
* **variables**: every section of the environment reference whose heading is one variable
  (``UV_CACHE_DIR``), alone or in a short question.

The wording is picked by a stable hash of the name, so the output is the same on every run.

``--one-word-keys`` writes another set instead: every key whose name is one word (``package``,
``managed``, ``strict {: #pip_strict }``), in every wording of its table, so that the wordings that
write a key's shape (``tool.uv.package``, ``[tool.uv] package``) and the plain ones (``package
setting``) are measured on the same keys.
"""

from __future__ import annotations

import argparse
import re
import sys
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

OPTION_ID = re.compile(r'<dt id="([^"]+?)--([a-z0-9][a-z0-9-]*)"')
KEY_HEADING = re.compile(r"^([a-z0-9-]+) \{: #([a-z0-9_-]+) \}$")
VARIABLE = re.compile(r"[A-Z][A-Z0-9_]+")
OPTION_SHARE = 6  # one option in this many is kept

OPTION_WORDINGS = ("{c} {f}", "{c} {f} option", "what does {f} do in {c}", "{f} flag for {c}")
PIP_KEY_WORDINGS = ("[tool.uv.pip] {k}", "pip {k} setting", "tool.uv.pip.{k}")
PROJECT_KEY_WORDINGS = ("tool.uv.{k}", "[tool.uv] {k}", "{k} in pyproject")
KEY_WORDINGS = ("{k} setting", "tool.uv.{k}", "[tool.uv] {k}", "{k} in uv.toml")
VARIABLE_WORDINGS = ("{v}", "what does {v} do", "{v} environment variable", "set {v}")


def _command(chunk: Chunk) -> str:
    """The command a generated page documents: its first heading (``uv pip list``)."""
    if chunk.heading.startswith("uv"):
        return chunk.heading
    for line in chunk.content.splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return chunk.filepath.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")


def option_cases(chunks: Sequence[Chunk]) -> list[Case]:
    cases: list[Case] = []
    for chunk in chunks:
        if "/cli/" not in f"/{chunk.filepath}":
            continue
        for prefix, flag in OPTION_ID.findall(chunk.content):
            element = f"{prefix}--{flag}"
            if stable_hash(element) % OPTION_SHARE:
                continue
            query = pick_wording(OPTION_WORDINGS, element).format(c=_command(chunk), f=f"--{flag}")
            cases.append(exact_name_case(f"option {element}", query, chunk))
    return cases


def _key_wordings(anchor: str, chunk: Chunk) -> Sequence[str]:
    if anchor.startswith("pip_"):
        return PIP_KEY_WORDINGS
    if "#project-metadata/" in chunk.chunk_id:
        return PROJECT_KEY_WORDINGS
    return KEY_WORDINGS


def one_word_key_cases(chunks: Sequence[Chunk]) -> list[Case]:
    """Every key of one word (no hyphen in its name), once in each wording of its table."""
    cases: list[Case] = []
    for chunk in chunks:
        match = KEY_HEADING.match(chunk.heading) if chunk.filepath.endswith("settings.md") else None
        if match is None or "-" in match.group(1):
            continue
        key, anchor = match.groups()
        for wording in _key_wordings(anchor, chunk):
            query = wording.format(k=key)
            shape = "plain" if " setting" in wording or " in " in wording else "shaped"
            cases.append(exact_name_case(f"key1 {shape} {anchor}: {query}", query, chunk))
    return cases


def key_cases(chunks: Sequence[Chunk]) -> list[Case]:
    cases: list[Case] = []
    for chunk in chunks:
        match = KEY_HEADING.match(chunk.heading) if chunk.filepath.endswith("settings.md") else None
        if match is None:
            continue
        key, anchor = match.groups()
        cases.append(
            exact_name_case(
                f"key {anchor}", pick_wording(_key_wordings(anchor, chunk), anchor).format(k=key), chunk
            )
        )
    return cases


def variable_cases(chunks: Sequence[Chunk]) -> list[Case]:
    cases: list[Case] = []
    for chunk in chunks:
        if chunk.filepath.endswith("environment.md") and VARIABLE.fullmatch(chunk.heading):
            query = pick_wording(VARIABLE_WORDINGS, chunk.heading).format(v=chunk.heading)
            cases.append(exact_name_case(f"variable {chunk.heading}", query, chunk))
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate exact-name cases for a command-line tool's book.")
    parser.add_argument("--index-dir", type=Path, required=True, help="a build of the book (its chunks.json)")
    parser.add_argument("--out", type=Path, required=True, help="the case file to write")
    parser.add_argument(
        "--one-word-keys", action="store_true", help="every key of one word in every wording, instead"
    )
    args = parser.parse_args(argv)
    try:
        chunks = load_chunks(args.index_dir)
    except EvalSetError as exc:
        return fail(str(exc))
    if args.one_word_keys:
        kinds = {"one-word keys": one_word_key_cases(chunks)}
    else:
        kinds = {
            "options": option_cases(chunks),
            "keys": key_cases(chunks),
            "variables": variable_cases(chunks),
        }
    if not write_generated(args.out, kinds):
        return fail(f"{args.index_dir}: no option ids, key headings or variables found; is this uv's book?")
    return 0


if __name__ == "__main__":
    sys.exit(main())
