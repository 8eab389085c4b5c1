"""Building an index: ``docs-mcp build`` as a library call.

:func:`build_index` runs the pipeline (:mod:`.pipeline`) with :class:`BuildOptions` (:mod:`.options`);
its parts are the destination and the swap (:mod:`.output`), reuse of unchanged files
(:mod:`.reuse`), the embedding step (:mod:`.embedding_step`) and the assembly of ``metadata.json``
(:mod:`.metadata`).
"""

from docs_mcp_core.build.metadata import git_source_commit
from docs_mcp_core.build.options import BuildOptions, BuildReporter, BuildSummary, EmbeddingOptions, ToolTexts
from docs_mcp_core.build.output import CHUNKS_FILENAME, recover_interrupted_swap
from docs_mcp_core.build.pipeline import build_index

__all__ = [
    "CHUNKS_FILENAME",
    "BuildOptions",
    "BuildReporter",
    "BuildSummary",
    "EmbeddingOptions",
    "ToolTexts",
    "build_index",
    "git_source_commit",
    "recover_interrupted_swap",
]
