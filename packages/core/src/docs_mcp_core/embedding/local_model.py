"""The shipped local models: where their files are, and each loaded once per process.

docs-mcp-core ships all-MiniLM-L6-v2 as an int8 ONNX file with its tokenizer
(``models/all-MiniLM-L6-v2/``). :func:`load_model` reads a model into one ONNX Runtime session
and tokenizer per process while anything holds it, which every
:class:`~docs_mcp_core.embedding.local.LocalEmbeddingProvider` of that model shares (a session
accepts concurrent runs): a server whose index has both chunk
vectors and heading vectors, or that reopens its index, loads the model once, and a server can
start loading it as soon as it has read ``metadata.json``, while the engine's code is imported and
the index opens.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from docs_mcp_core.embedding.wordpiece import QueryPieces
from docs_mcp_core.errors import EmbeddingError
from docs_mcp_core.memory import release_free_heap
from docs_mcp_core.utf8 import utf8_safe

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_MODELS",
    "LoadedModel",
    "LocalModel",
    "load_model",
    "resolve_local_model",
]


class LocalModel:
    """One shipped model: where its files are and what it produces."""

    def __init__(
        self,
        name: str,
        folder: str,
        onnx_file: str,
        onnx_sha256: str,
        dimensions: int,
        max_tokens: int,
        aliases: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.folder = folder
        self.onnx_file = onnx_file
        self.onnx_sha256 = onnx_sha256
        self.dimensions = dimensions
        self.max_tokens = max_tokens
        self.aliases = tuple(aliases)

    def directory(self) -> Path:
        """The installed folder holding the model files."""
        return Path(str(resources.files("docs_mcp_core").joinpath("models", self.folder)))

    @property
    def onnx_path(self) -> Path:
        return self.directory() / self.onnx_file

    @property
    def tokenizer_path(self) -> Path:
        return self.directory() / "tokenizer.json"


DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"

LOCAL_MODELS: dict[str, LocalModel] = {
    DEFAULT_LOCAL_MODEL: LocalModel(
        name=DEFAULT_LOCAL_MODEL,
        folder="all-MiniLM-L6-v2",
        onnx_file="model_int8.onnx",
        # Pinned: a different file gives different vectors, so it must change the cache fingerprint.
        onnx_sha256="6cab9cf1765bf7e6c09b5ddabe4e8062876c1e8e9dfea100eb82e1ea7a840d47",
        dimensions=384,
        max_tokens=256,
        aliases=("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2"),
    ),
}


def resolve_local_model(model: str | None) -> LocalModel:
    """The shipped model called ``model`` (default: all-MiniLM-L6-v2); aliases are case-insensitive."""
    if model is None or not model.strip():
        return LOCAL_MODELS[DEFAULT_LOCAL_MODEL]
    wanted = model.strip().casefold()
    for candidate in LOCAL_MODELS.values():
        if wanted == candidate.name.casefold() or wanted in (a.casefold() for a in candidate.aliases):
            return candidate
    raise EmbeddingError(
        f"local embedding model '{model}' is not shipped with docs-mcp-core. "
        f"Available: {', '.join(LOCAL_MODELS)} (omit --embedding-model to use the default)"
    )


class LoadedModel:
    """A model in memory: its ONNX Runtime session and its tokenizer. It stays loaded while anything
    holds it (a provider, a server), and is freed with the last holder.

    The ``tokenizers`` library's tokenizer is loaded when first used (many texts at once, a query
    that is not ASCII): a query of ASCII text is split by :class:`~.wordpiece.QueryPieces`, which
    reads only the vocabulary, so that a starting server's first answer does not wait for the
    library (see :mod:`docs_mcp_core.embedding.wordpiece`)."""

    def __init__(
        self, session: onnxruntime.InferenceSession, spec: LocalModel, pieces: QueryPieces | None
    ) -> None:
        self.session = session
        self._spec = spec
        self._pieces = pieces
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._tokenizer_lock = threading.Lock()

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        """The model's tokenizer (loaded on first use; raises :class:`EmbeddingError`)."""
        tokenizer = self._tokenizer
        if tokenizer is None:
            with self._tokenizer_lock:
                if self._tokenizer is None:
                    self._tokenizer = _load_tokenizer(self._spec)
                tokenizer = self._tokenizer
        return tokenizer

    def query_ids(self, text: str) -> list[int]:
        """One text's input ids: by :class:`~.wordpiece.QueryPieces` when it is ASCII, else by
        the tokenizer (a lone surrogate, as a client's JSON may send, replaced first)."""
        ids = self._pieces.encode(text) if self._pieces is not None else None
        return ids if ids is not None else self.tokenizer.encode(utf8_safe(text)).ids


_Files = tuple[Path, Path, int]  # the model file, the tokenizer file, the truncation length
_registry_lock = threading.Lock()
_model_locks: dict[_Files, threading.Lock] = {}
_loaded: weakref.WeakValueDictionary[_Files, LoadedModel] = weakref.WeakValueDictionary()


def load_model(spec: LocalModel) -> LoadedModel:
    """``spec`` in memory: the copy some holder keeps loaded in this process, else loaded now.

    Raises :class:`EmbeddingError` (a missing file, a package not installed, a file that does not
    load); a later call tries again.
    """
    key = (spec.onnx_path, spec.tokenizer_path, spec.max_tokens)
    loaded = _loaded.get(key)
    if loaded is not None:
        return loaded
    with _registry_lock:
        lock = _model_locks.setdefault(key, threading.Lock())
    with lock:
        loaded = _loaded.get(key)
        if loaded is None:
            if not spec.tokenizer_path.is_file():
                raise EmbeddingError(_missing(spec.tokenizer_path))
            loaded = _load(spec)
            _loaded[key] = loaded
        return loaded


def _load(spec: LocalModel) -> LoadedModel:
    """The session and the query vocabulary, read side by side: ONNX Runtime builds the session
    without the interpreter's lock (about 45 ms for the shipped model), while this thread reads the
    vocabulary under it (about 8 ms), so a starting server's first answer waits for the longer only."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="docs-mcp-model-load") as pool:
        session = pool.submit(_load_session, spec.onnx_path)
        pieces = QueryPieces.load(spec.tokenizer_path, spec.max_tokens)
    return LoadedModel(session.result(), spec, pieces)


def _load_tokenizer(spec: LocalModel) -> tokenizers.Tokenizer:
    path = spec.tokenizer_path
    if not path.is_file():
        raise EmbeddingError(_missing(path))
    try:  # imported with the model: an engine that never embeds a query does not load it
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingError(
            f"the local embedding provider needs the 'tokenizers' package ({exc}); reinstall docs-mcp-core"
        ) from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise EmbeddingError(f"cannot read the local model's tokenizer {path}: {exc}") from exc
    # The file carries fixed 128-token padding and truncation; sentence-transformers truncates
    # at 256, and inputs run one at a time need no padding at all.
    tokenizer.no_padding()
    tokenizer.enable_truncation(spec.max_tokens)
    return tokenizer


def _load_session(path: Path) -> onnxruntime.InferenceSession:
    if not path.is_file():
        raise EmbeddingError(_missing(path))
    # ONNX Runtime otherwise writes a device id and a usage database under the user's home
    # (~/.cache/Microsoft/DeveloperTools) when it loads a model: a server or build must leave the
    # home alone (it may be read-only, or someone else's). Set it to 0 to let ONNX Runtime decide.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    try:  # imported with the model: ONNX Runtime takes a quarter of a second to import
        import onnxruntime as ort
    except ImportError as exc:
        raise EmbeddingError(
            f"the local embedding provider needs the 'onnxruntime' package ({exc}); reinstall docs-mcp-core"
        ) from exc
    options = ort.SessionOptions()
    # One thread per call: the cores are used by running several inputs at once (embed_array),
    # which wastes none of the time intra-op threads spend synchronising on small matrices.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise EmbeddingError(f"cannot load the local embedding model {path}: {exc}") from exc
    release_free_heap()
    return session


def _missing(path: Path) -> str:
    return (
        f"the local embedding model file {path} is missing; the docs-mcp-core installation is "
        "incomplete (reinstall it, e.g. `pip install --force-reinstall docs-mcp-core`)"
    )
