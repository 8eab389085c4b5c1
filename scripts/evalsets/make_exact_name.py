"""Generate the mechanical exact-name cases for sdk-docs from the corpus itself.

    uv run python scripts/evalsets/make_exact_name.py --index-dir /tmp/ev-lex \\
        --dev-cases ../shared/corpora/sdk-docs-dev-cases.json \\
        --dev-cases ../shared/corpora/sdk-docs-dev2-cases.json \\
        --out evals/sdk-docs/exact-name-mechanical.json

Input is the ``chunks.json`` of a build of ``sdk-docs`` (every chunk's markdown), so the generator
sees exactly the sections a search returns. Two kinds of case come out:

* **operation calls**: every section of an SDK resource page (``docs/sdks/<resource>/README.md``,
  one h2 per method) holds a usage example. The generator finds the client variable the example
  constructs (``const dub = new Dub(``, ``with Mistral(...) as mistral:``, ``s := dubgo.New(``) and
  the first call made on it: ``dub.links.createMany``, ``d_client.partners.retrieve_links``,
  ``s.Links.CreateMany``. TypeScript sections also show the standalone function
  (``linksCreateMany(dubCore, ...)``). The expected chunk is the chunk of that section holding the
  call (a section cut by size keeps its example in a ``.../example-usage`` part).
* **type names**: the request, response and error types an operation section names
  (``[operations.GetLinksRequest](../../models/...)``, ``sdkerrors.NotFound`` in the errors table),
  spelled as that language's page spells them. The expected chunk is the type page's ``Fields``
  section, the table that defines the type.

A case must be answerable from its words and filters: the spelling (compared case-insensitively,
as a search engine folds case) may belong to no other operation or type that the filters admit, and
no byte-identical twin of the expected chunk may pass the filters. A case is first tried with no
filter (the spelling is then the only language cue), then with the language filter, then with
language and service; a candidate ambiguous under all three is dropped.

Each kept candidate gets one realistic wrapper ("how to call X", "X example", "X returns", ...)
and one filter mode, picked by a stable hash of its name, so the output is the same on every run.
Candidates whose target is already the target of a development exact-name case, or whose query
equals a development query, are left out. A stratified sample (by service, language and kind)
keeps the set to ``--size`` cases, a quarter of them type names (``--type-share``).
"""

from __future__ import annotations

import argparse
import posixpath
import re
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalset_common import (
    Case,
    Chunk,
    EvalSetError,
    admitted,
    fail,
    load_chunks,
    normalise_query,
    read_cases,
    stable_hash,
    write_cases,
)

RESOURCE_PAGE = re.compile(
    r"^sdks/(?P<service>[^/]+)/(?P<language>typescript|python|go)/"
    r"(?:packages/(?P<package>[^/]+)/)?docs/sdks/(?P<resource>[^/]+)/README\.md$"
)
SDK_ROOT = re.compile(r"^(sdks/[^/]+/(?:typescript|python|go)/(?:packages/[^/]+/)?)")

FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```", re.M | re.S)
TS_CLIENT = re.compile(r"\bconst\s+(\w+)\s*=\s*new\s+(\w+)\(")
PY_CLIENT_WITH = re.compile(r"\bwith\s+(\w+)\((?:.|\n)*?\)\s+as\s+(\w+)\s*:")
PY_CLIENT_ASSIGN = re.compile(r"^\s*(\w+)\s*=\s*(Mistral\w*|Dub\w*)\(", re.M)
GO_CLIENT = re.compile(r"\b(\w+)\s*:=\s*\w+\.New\(")
TYPE_LINK = re.compile(r"\[\\?\*?(?P<name>[A-Za-z_]\w*\.[A-Z]\w*)\]\((?P<href>[^)#\s]+\.md)\)")
ERROR_ROW = re.compile(r"^\|\s*(?P<name>[A-Za-z_]\w*\.[A-Z]\w*)\s*\|", re.M)
FIELD_ROW = re.compile(r"^\|\s*`(?P<field>[A-Za-z_]\w*)`\s*\|", re.M)

LANGUAGE_WORDS = {"typescript": "TypeScript", "python": "Python", "go": "Go"}

CALL_WRAPPERS = (
    "{x}",
    "{x}",
    "how to call {x}",
    "{x} example",
    "{x} returns",
    "what does {x} return",
    "{x} parameters",
    "usage of {x}",
)
STANDALONE_WRAPPERS = (
    "{x}",
    "{x} standalone function",
    "how to call {x}",
    "{x} example",
    "{x} result",
)
TYPE_WRAPPERS = (
    "{x}",
    "{x} fields",
    "what fields does {x} have",
    "{x} {fields}",
)
GO_TYPE_WRAPPERS = (*TYPE_WRAPPERS, "{x} struct fields")


@dataclass(frozen=True)
class Candidate:
    """A spelling and the chunk it must find, before a wrapper and filters are chosen."""

    kind: str  # "call", "standalone" or "type"
    spelling: str
    target: Chunk
    service: str
    language: str
    package: str
    fields: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        sdk = self.service + (f"-{self.package}" if self.package else "")
        return f"{sdk}/{self.language}"


def section_key(chunk_id: str, has_h1: bool) -> str:
    """The operation a chunk of a resource page belongs to: its id cut to the h2 level."""
    path, _, fragment = chunk_id.partition("#")
    parts = fragment.split("/")
    depth = 2 if has_h1 else 1
    return path + "#" + "/".join(parts[:depth])


def resource_sections(chunks: Sequence[Chunk]) -> dict[str, list[Chunk]]:
    """Group the chunks of every SDK resource page by operation section (the overview left out)."""
    by_file: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        if RESOURCE_PAGE.match(chunk.filepath):
            by_file[chunk.filepath].append(chunk)
    sections: dict[str, list[Chunk]] = {}
    for file_chunks in by_file.values():
        has_h1 = file_chunks[0].content.lstrip().startswith("# ")
        for chunk in file_chunks:
            if chunk.chunk_id.endswith("#_preamble"):
                continue
            key = section_key(chunk.chunk_id, has_h1)
            if key.endswith("/overview") or key.endswith("#overview"):
                continue
            sections.setdefault(key, []).append(chunk)
    return sections


def first_code(text: str, language: str) -> str | None:
    for match in FENCE.finditer(text):
        if match.group("lang") == language:
            return match.group("body")
    return None


def code_blocks(text: str, language: str) -> list[str]:
    return [m.group("body") for m in FENCE.finditer(text) if m.group("lang") == language]


def client_call(code: str, language: str) -> str | None:
    """The first call on the SDK client the example constructs, as written (``dub.links.create``)."""
    variable: str | None = None
    if language == "typescript":
        found = [m for m in TS_CLIENT.finditer(code) if not m.group(2).endswith("Core")]
        variable = found[0].group(1) if found else None
    elif language == "python":
        match = PY_CLIENT_WITH.search(code) or None
        if match:
            variable = match.group(2)
        else:
            assign = PY_CLIENT_ASSIGN.search(code)
            variable = assign.group(1) if assign else None
    else:
        match = GO_CLIENT.search(code)
        variable = match.group(1) if match else None
    if variable is None:
        return None
    call = re.search(rf"\b{re.escape(variable)}((?:\.\w+)+)\(", code)
    return variable + call.group(1) if call else None


def standalone_call(code: str) -> str | None:
    """The standalone function a TypeScript example calls with the ``...Core`` client."""
    core = [m.group(1) for m in TS_CLIENT.finditer(code) if m.group(2).endswith("Core")]
    if not core:
        return None
    match = re.search(rf"\bawait\s+([a-z]\w*)\(\s*{re.escape(core[0])}\b", code)
    return match.group(1) if match else None


def sdk_root(filepath: str) -> str:
    match = SDK_ROOT.match(filepath)
    return match.group(1) if match else ""


def operation_candidates(sections: Mapping[str, list[Chunk]]) -> list[Candidate]:
    candidates: list[Candidate] = []
    for section in sections.values():
        page = RESOURCE_PAGE.match(section[0].filepath)
        assert page is not None
        language = page.group("language")
        blocks = code_blocks("\n".join(c.content for c in section), language)
        if not blocks:
            continue
        spellings = [("call", client_call(blocks[0], language))]
        if language == "typescript":
            standalone = next((name for name in map(standalone_call, blocks[1:]) if name), None)
            spellings.append(("standalone", standalone))
        for kind, spelling in spellings:
            if not spelling:
                continue
            holder = next((c for c in section if spelling + "(" in c.content), None)
            if holder is not None:
                candidates.append(
                    Candidate(
                        kind, spelling, holder, page.group("service"), language, page.group("package") or ""
                    )
                )
    return candidates


def type_candidates(sections: Mapping[str, list[Chunk]], chunks: Sequence[Chunk]) -> list[Candidate]:
    """Types named by operation sections, resolved to their page's ``Fields`` chunk."""
    files: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        files[chunk.filepath].append(chunk)
    model_files_by_root: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in files:
        root = sdk_root(path)
        if root and "/docs/" in path and "/docs/sdks/" not in path:
            model_files_by_root[root][posixpath.basename(path)].append(path)

    seen: set[tuple[str, str]] = set()
    candidates: list[Candidate] = []
    for section in sections.values():
        page = RESOURCE_PAGE.match(section[0].filepath)
        assert page is not None
        language = page.group("language")
        service, package = page.group("service"), page.group("package") or ""
        text = "\n".join(c.content for c in section)
        root = sdk_root(section[0].filepath)
        refs: list[tuple[str, str | None]] = []
        for match in TYPE_LINK.finditer(text):
            href = posixpath.normpath(posixpath.join(posixpath.dirname(section[0].filepath), match["href"]))
            refs.append((match["name"], href))
        errors = text.split("### Errors", 1)
        if len(errors) == 2:
            refs.extend((m["name"], None) for m in ERROR_ROW.finditer(errors[1]))
        for name, href in refs:
            namespace, type_name = name.split(".", 1)
            if type_name in ("SDKError", "APIError", "RequestOptions"):
                continue  # the generic catch-all error is documented in the README, not as a type page
            path = href
            if path is None or path not in files:
                options = model_files_by_root[root].get(type_name.lower() + ".md", [])
                preferred = [p for p in options if posixpath.basename(posixpath.dirname(p)) == namespace]
                chosen = preferred or options
                path = chosen[0] if len(chosen) == 1 else None
            if path is None or (name, path) in seen:
                continue
            seen.add((name, path))
            target = next((c for c in files[path] if c.chunk_id.endswith("/fields")), None)
            if target is None:
                continue
            fields = tuple(dict.fromkeys(FIELD_ROW.findall(target.content)))
            candidates.append(Candidate("type", name, target, service, language, package, fields))
    return candidates


def filter_options(candidate: Candidate) -> list[dict[str, str]]:
    base: list[dict[str, str]] = [{}, {"language": candidate.language}]
    base.append({"language": candidate.language, "service": candidate.service})
    return base


def is_unambiguous(
    candidate: Candidate,
    filters: Mapping[str, str],
    by_spelling: Mapping[str, list[Chunk]],
    by_content: Mapping[str, list[Chunk]],
) -> bool:
    if not admitted(candidate.target, filters):
        return False
    rivals = [c for c in by_spelling[candidate.spelling.lower()] if c.chunk_id != candidate.target.chunk_id]
    if any(admitted(c, filters) for c in rivals):
        return False
    twins = [c for c in by_content[candidate.target.content] if c.chunk_id != candidate.target.chunk_id]
    return not any(admitted(c, filters) for c in twins)


def render(candidate: Candidate, salt: str) -> tuple[str, str]:
    """Pick a wrapper for the candidate; returns ``(query, wrapper-label)``."""
    if candidate.kind == "standalone":
        wrappers: Sequence[str] = STANDALONE_WRAPPERS
    elif candidate.kind == "type":
        wrappers = GO_TYPE_WRAPPERS if candidate.language == "go" else TYPE_WRAPPERS
        if len(candidate.fields) < 2:
            wrappers = [w for w in wrappers if "{fields}" not in w]
    else:
        wrappers = CALL_WRAPPERS
    wrapper = wrappers[stable_hash(salt + "|wrapper") % len(wrappers)]
    fields = " ".join(candidate.fields[:2])
    return wrapper.format(x=candidate.spelling, fields=fields), wrapper


def choose_filters(candidate: Candidate, usable: list[dict[str, str]], salt: str) -> dict[str, str]:
    """Prefer no filter for about half the candidates when that is unambiguous, like the dev sets."""
    if not usable:
        return {}
    if {} in usable and stable_hash(salt + "|filter") % 2 == 0:
        return {}
    filtered = [f for f in usable if f]
    if not filtered:
        return {}
    if len(filtered) > 1 and stable_hash(salt + "|service") % 4 == 0:
        return filtered[-1]
    return filtered[0]


def build_cases(
    candidates: Sequence[Candidate],
    chunks: Sequence[Chunk],
    dev_queries: set[str],
    dev_targets: set[str],
    size: int,
    type_share: float,
) -> list[Case]:
    by_spelling: dict[str, list[Chunk]] = defaultdict(list)
    for candidate in candidates:
        by_spelling[candidate.spelling.lower()].append(candidate.target)
    by_content: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_content[chunk.content].append(chunk)

    pools: dict[tuple[str, str], list[Case]] = defaultdict(list)
    taken: set[tuple[str, str]] = set()
    for candidate in candidates:
        key = (candidate.spelling, candidate.target.chunk_id)
        if key in taken or candidate.target.chunk_id in dev_targets:
            continue
        taken.add(key)
        usable = [
            f for f in filter_options(candidate) if is_unambiguous(candidate, f, by_spelling, by_content)
        ]
        if not usable:
            continue
        salt = f"{candidate.kind}|{candidate.spelling}|{candidate.target.chunk_id}"
        if candidate.kind == "type":
            # type names are shared between languages and many type pages are byte-identical across
            # them: a bare type name with no filter names no language, so types always carry one
            usable = [f for f in usable if f] or usable
        filters = choose_filters(candidate, usable, salt)
        query, _ = render(candidate, salt)
        if normalise_query(query) in dev_queries:
            continue
        name = f"mech {candidate.kind} {candidate.group} {candidate.spelling}"
        pools[(candidate.group, "type" if candidate.kind == "type" else "call")].append(
            Case(
                name=name,
                category="exact-name",
                query=query,
                expected_chunk_id=candidate.target.chunk_id,
                filters=filters,
            )
        )
    type_size = round(size * type_share)
    calls = {key: cases for key, cases in pools.items() if key[1] != "type"}
    types = {key: cases for key, cases in pools.items() if key[1] == "type"}
    return sorted(sample(calls, size - type_size) + sample(types, type_size), key=lambda case: case.name)


def sample(pools: Mapping[tuple[str, str], list[Case]], size: int) -> list[Case]:
    """Take ``size`` cases, as evenly as the pools allow, each pool in a stable hashed order."""
    ordered = {
        key: sorted(cases, key=lambda case: (stable_hash(case.name), case.name))
        for key, cases in sorted(pools.items())
    }
    quotas = dict.fromkeys(ordered, 0)
    remaining = min(size, sum(len(v) for v in ordered.values()))
    while remaining > 0:
        open_pools = [k for k in ordered if quotas[k] < len(ordered[k])]
        for key in open_pools:
            if remaining == 0:
                break
            quotas[key] += 1
            remaining -= 1
    return [case for key, cases in ordered.items() for case in cases[: quotas[key]]]


def dev_exclusions(paths: Sequence[Path]) -> tuple[set[str], set[str]]:
    queries: set[str] = set()
    targets: set[str] = set()
    for path in paths:
        for case in read_cases(path):
            queries.add(normalise_query(str(case.get("query", ""))))
            if case.get("category") == "exact-name":
                targets.add(str(case.get("expectedChunkId", "")))
    return queries, targets


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--index-dir", type=Path, required=True, help="index built from sdk-docs")
    parser.add_argument("--dev-cases", type=Path, action="append", default=[], help="dev case file to avoid")
    parser.add_argument("--out", type=Path, required=True, help="case file to write")
    parser.add_argument("--size", type=int, default=260, help="cases to keep (default 260)")
    parser.add_argument(
        "--type-share", type=float, default=0.25, help="share of type-name cases (default 0.25)"
    )
    parser.add_argument("--stats", action="store_true", help="print the candidate pools")
    args = parser.parse_args(argv)
    try:
        chunks = load_chunks(args.index_dir)
        dev_queries, dev_targets = dev_exclusions(args.dev_cases)
    except EvalSetError as exc:
        return fail(str(exc))
    sections = resource_sections(chunks)
    if not sections:
        return fail(f"{args.index_dir}: no SDK resource pages (docs/sdks/<resource>/README.md) in this index")
    candidates = operation_candidates(sections) + type_candidates(sections, chunks)
    cases = build_cases(candidates, chunks, dev_queries, dev_targets, args.size, args.type_share)
    if args.stats:
        pools: dict[str, int] = defaultdict(int)
        for candidate in candidates:
            pools[f"{candidate.group} {candidate.kind}"] += 1
        for key, count in sorted(pools.items()):
            print(f"candidates {key}: {count}", file=sys.stderr)
    count = write_cases(args.out, (case.to_json() for case in cases))
    unfiltered = sum(1 for case in cases if not case.filters)
    print(f"wrote {count} cases to {args.out} ({unfiltered} without a filter, {len(sections)} sections read)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
