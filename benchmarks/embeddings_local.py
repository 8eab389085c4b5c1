"""What a ``local`` build costs: ``uv run python benchmarks/embeddings_local.py [--docs-dir DOCS]``.

Issue #30's line for ``--embedding-provider local``: a fresh build at most 8 times the same corpus
built with ``--embedding-provider none``. In one run, A and B interleaved (A B B A ...), medians:

* ``docs-mcp build`` of ``DOCS`` (default ``../shared/corpora/sdk-docs``) with ``none`` and with
  ``local``, ``--pairs`` times each, every build into a new folder (so the embedding cache, which
  lives in the output folder, is cold and every chunk is a miss, and no previous index's heading
  vectors are reused): wall time and CPU time (user + system, worker processes included), and their
  ratios, with the load average before each build;
* with ``--buckets``, the model's CPU time per call on one thread for inputs of 16 to 256 word
  pieces (one input per call, as the provider runs chunks), so the cost per word piece can be read
  per length; with ``--candidate FILE`` as well, the same for another ONNX file of the model
  (lengths interleaved), and the cosine of its vectors to the shipped model's on ``--sample``
  chunks of the corpus (their breadcrumb and text, as chunks.json holds them).

``--unfuse-to FILE`` writes such a candidate and exits: the shipped int8 graph with three of ONNX
Runtime's fused ops split into ops whose CPU kernels are vectorised (``SkipLayerNormalization``
into ``Add`` and ``LayerNormalization``, ``BiasGelu`` into ``Add`` and ``Gelu``, ``QAttention``
into ``MatMulIntegerToFloat``, ``Split`` and an unmasked ``MultiHeadAttention``: the provider
never pads). Same weights; the vectors move by int8 rounding (docs/scaling.md has the figures).
It needs the ``onnx`` package: ``uv run --with onnx python benchmarks/embeddings_local.py
--unfuse-to /tmp/unfused.onnx``. A candidate runs with ONNX Runtime's ``SkipLayerNormFusion`` and
``BiasGeluFusion`` off, which would fuse it back.

Exits 2 when the docs folder is missing (``../shared`` absent).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from docs_mcp_core.embedding import to_embedding_input
from docs_mcp_core.embedding.local import LocalEmbeddingProvider, resolve_local_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heading_vectors import build as timed_build

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DOCS_MCP_SHARED_DIR", REPO_ROOT.parent / "shared"))
DEFAULT_DOCS = SHARED / "corpora" / "sdk-docs"
LENGTHS = (16, 32, 64, 128, 192, 256)
UNFUSED = ["SkipLayerNormFusion", "BiasGeluFusion"]  # what would fuse a candidate back


def build(docs_dir: Path, out: Path, mode: str) -> tuple[float, float]:
    """One fresh ``docs-mcp build``: (wall seconds, CPU seconds of the build and its workers)."""
    cpu: list[float] = []
    wall = timed_build(docs_dir, out, mode, cpu)
    return wall, cpu[0]


def session(path: Path, disabled: list[str]) -> Any:
    """A one-thread ONNX Runtime session on ``path``, as the provider makes it."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=disabled
    )


def pooled(sess: Any, ids: list[int]) -> np.ndarray:
    """One input's unit vector: the mean of its token states, L2-normalised (the provider's)."""
    x = np.asarray(ids, dtype=np.int64).reshape(1, -1)
    feeds = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)}
    mean = np.asarray(sess.run(None, feeds)[0], dtype=np.float32)[0].mean(axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12)


def per_call(sess: Any, ids: list[int], repeats: int) -> float:
    for _ in range(3):
        pooled(sess, ids)
    started = time.process_time()
    for _ in range(repeats):
        pooled(sess, ids)
    return (time.process_time() - started) / repeats


def buckets(repeats: int, candidate: Path | None, texts: list[str]) -> None:
    """The model's CPU time per call for inputs of each length, on one thread; a candidate's too."""
    spec = resolve_local_model(None)
    models = {"shipped": session(spec.onnx_path, [])}
    if candidate is not None:
        models["candidate"] = session(candidate, UNFUSED)
    rng = np.random.default_rng(7)
    print("\nmodel CPU time per call, one input per call, one thread (ms; µs per word piece):")
    print("| word pieces | " + " | ".join(models) + " |" + (" candidate / shipped |" if candidate else ""))
    print("| ---: |" + " ---: |" * (len(models) + (1 if candidate else 0)))
    for length in LENGTHS:
        ids = rng.integers(1000, 29000, size=length).tolist()
        times = {name: per_call(sess, ids, repeats) for name, sess in models.items()}
        cells = [f"{t * 1e3:.2f} ({t / length * 1e6:.1f})" for t in times.values()]
        ratio = f" {times['candidate'] / times['shipped']:.2f} |" if candidate else ""
        print(f"| {length} | " + " | ".join(cells) + " |" + ratio)
    if candidate is None or not texts:
        return
    tokenizer = LocalEmbeddingProvider()._load()[1].tokenizer  # the provider's own tokenizer
    cosines = np.array(
        [
            float(pooled(models["shipped"], e.ids) @ pooled(models["candidate"], e.ids))
            for e in tokenizer.encode_batch(texts)
        ]
    )
    print(
        f"\ncandidate's vectors against the shipped model's, {len(texts)} chunks: cosine mean "
        f"{cosines.mean():.5f}, min {cosines.min():.5f}, identical {int((cosines >= 1 - 1e-7).sum())}"
    )


def unfuse(source: Path, target: Path) -> dict[str, int]:
    """Write the shipped graph with its slow fused CPU ops split (see the module docstring)."""
    import onnx  # type: ignore[import-not-found]  # not a dependency: uv run --with onnx
    from onnx import helper, numpy_helper  # type: ignore[import-not-found]

    model = onnx.load(str(source))
    graph = model.graph
    hidden = 384
    graph.initializer.append(numpy_helper.from_array(np.array([hidden] * 3, dtype=np.int64), "qkv_split"))
    counts = {"SkipLayerNormalization": 0, "BiasGelu": 0, "QAttention": 0}
    nodes = []
    for node in graph.node:
        out = node.output[0] if node.output else ""
        if node.op_type == "SkipLayerNormalization":
            (epsilon,) = [helper.get_attribute_value(a) for a in node.attribute if a.name == "epsilon"]
            x, skip, gamma, beta, bias = node.input
            nodes += [
                helper.make_node("Add", [x, bias], [out + "_biased"]),
                helper.make_node("Add", [out + "_biased", skip], [out + "_sum"]),
                helper.make_node(
                    "LayerNormalization", [out + "_sum", gamma, beta], [out], axis=-1, epsilon=epsilon
                ),
            ]
        elif node.op_type == "BiasGelu":
            nodes += [
                helper.make_node("Add", list(node.input), [out + "_biased"]),
                helper.make_node("Gelu", [out + "_biased"], [out], domain="com.microsoft"),
            ]
        elif node.op_type == "QAttention":
            x, weight, bias, x_scale, w_scale, _mask, x_zero, w_zero = node.input[:8]
            qkv = [out + "_q", out + "_k", out + "_v"]
            inputs = [x, weight, x_scale, w_scale, x_zero, w_zero, bias]
            nodes += [
                helper.make_node("MatMulIntegerToFloat", inputs, [out + "_qkv"], domain="com.microsoft"),
                helper.make_node("Split", [out + "_qkv", "qkv_split"], qkv, axis=-1),
                helper.make_node("MultiHeadAttention", qkv, [out], domain="com.microsoft", num_heads=12),
            ]
        else:
            nodes.append(node)
            continue
        counts[node.op_type] += 1
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.save(model, str(target))
    return counts


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def corpus_texts(out: Path, count: int) -> list[str]:
    """``count`` embedding inputs spread over a built index's chunks (breadcrumb and text)."""
    chunks = json.loads((out / "chunks.json").read_text(encoding="utf-8"))
    step = max(1, len(chunks) // max(count, 1))
    return [to_embedding_input(c["breadcrumb"], c["content_text"]) for c in chunks[::step][:count]]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs-dir", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--pairs", type=int, default=2, help="builds of each kind (default 2)")
    parser.add_argument("--buckets", action="store_true", help="also time the model per input length")
    parser.add_argument("--repeats", type=int, default=40, help="calls per length with --buckets")
    parser.add_argument("--candidate", type=Path, help="with --buckets: another ONNX file of the model")
    parser.add_argument("--sample", type=int, default=300, help="chunks whose vectors --candidate compares")
    parser.add_argument(
        "--unfuse-to", type=Path, help="write the split-op candidate here and exit (needs onnx)"
    )
    args = parser.parse_args()
    if args.unfuse_to is not None:
        counts = unfuse(resolve_local_model(None).onnx_path, args.unfuse_to)
        print(f"wrote {args.unfuse_to}: split {counts}")
        return 0
    if not args.docs_dir.is_dir():
        print(f"no docs folder at {args.docs_dir}", file=sys.stderr)
        return 2
    os.environ.setdefault("LANCEDB_LOG", "error")
    print(f"{cpu_name()}, {os.cpu_count()} CPUs, {args.docs_dir}")
    walls: dict[str, list[float]] = {"none": [], "local": []}
    cpus: dict[str, list[float]] = {"none": [], "local": []}
    order = [("none", "local") if i % 2 == 0 else ("local", "none") for i in range(args.pairs)]
    texts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="docs-mcp-local-bench-") as tmp:
        for i, pair in enumerate(order):
            for mode in pair:
                out = Path(tmp) / f"{mode}-{i}"
                load = os.getloadavg()[0]
                wall, cpu = build(args.docs_dir, out, mode)
                walls[mode].append(wall)
                cpus[mode].append(cpu)
                print(
                    f"{mode:>5} build {i + 1}: {wall:6.1f} s wall, {cpu:6.1f} s CPU (load average before {load:.2f})"
                )
                if not texts and args.candidate is not None:
                    texts = corpus_texts(out, args.sample)
                shutil.rmtree(out, ignore_errors=True)
    wall_none, wall_local = statistics.median(walls["none"]), statistics.median(walls["local"])
    cpu_none, cpu_local = statistics.median(cpus["none"]), statistics.median(cpus["local"])
    print("\n| fresh build, median | none | local | local / none |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| wall time | {wall_none:.1f} s | {wall_local:.1f} s | **{wall_local / wall_none:.1f}x** |")
    print(f"| CPU time | {cpu_none:.1f} s | {cpu_local:.1f} s | {cpu_local / cpu_none:.1f}x |")
    if args.buckets:
        buckets(args.repeats, args.candidate, texts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
