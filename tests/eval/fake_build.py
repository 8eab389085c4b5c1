"""A stand-in for ``docs-mcp build`` used by the benchmark test.

Accepts the flags the benchmark passes (``build --docs-dir D --out O --embedding-provider P
[--embedding-model M]``) and writes ``O/fake-index.json`` for ``fake_docs_server.py --index-dir O``:
provider ``hash`` gets the ``swapped`` ranking variant (so the two columns differ) and a bigger index.
``--fail-for P`` makes the build fail for provider P.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--docs-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--embedding-provider", required=True)
    parser.add_argument("--embedding-model")
    parser.add_argument("--fail-for", action="append", default=[])
    args = parser.parse_args(argv)
    if args.embedding_provider in args.fail_for:
        print(f"fake build: refusing provider {args.embedding_provider}", file=sys.stderr)
        return 2
    if not args.docs_dir.is_dir():
        print(f"fake build: no docs dir {args.docs_dir}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    variant = "swapped" if args.embedding_provider == "hash" else "default"
    (args.out / "fake-index.json").write_text(json.dumps({"variant": variant}))
    padding = 4096 if args.embedding_provider == "hash" else 1024
    (args.out / "padding.bin").write_bytes(b"\0" * padding)
    print(f"fake build wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
