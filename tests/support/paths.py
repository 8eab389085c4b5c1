"""Where things are: the repository, the example corpus, the shared corpora."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DOCS = REPO_ROOT / "examples" / "docs"
SHARED_DIR = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared")).resolve()
