"""Train the detector network on the features written by build-dataset.ts and export the weights
the TypeScript scorer reads (shared/scoring/models/detectors.{json,bin}).

Model (per segment, 16 heads: jailbreak, injection, harm, 12 harm categories, comply):
  z = hashed word/char n-gram linear part (EmbeddingBag, 2^18 buckets, 1/sqrt(n) weighting)
    + MLP(static sentence embedding + hand features + role)
A text's logit is the max over its segments (multiple-instance learning: only the injected line
of a long document has to look like an injection). Platt scaling per head is fitted on the
calibration split (rows of the training sources held out of fitting); validation rows are never
fitted on.

Usage: python train_detectors.py [--variant both|sparse|dense] [--export] [--epochs N]
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parents[2]
NOT_BUDGETED = set(json.loads((Path(__file__).parent / "not-budgeted.json").read_text())["sources"])
CACHE = Path(os.environ.get("GUARD_TRAIN_CACHE", ROOT / ".cache/guard-train"))
MODELS = ROOT / "shared/scoring/models"
HASH_BITS = 18
SEED = 1234


def load():
    meta = json.loads((CACHE / "meta.json").read_text())
    heads = meta["heads"]
    H = len(heads)
    D = meta["denseDim"]
    seg_doc = np.fromfile(CACHE / "seg_doc.u32", dtype=np.uint32).astype(np.int64)
    seg_nnz = np.fromfile(CACHE / "seg_nnz.u32", dtype=np.uint32).astype(np.int64)
    buckets = np.fromfile(CACHE / "buckets.u32", dtype=np.uint32).astype(np.int64)
    dense = np.fromfile(CACHE / "dense.f32", dtype=np.float32).reshape(-1, D)
    targets = np.fromfile(CACHE / "targets.i8", dtype=np.int8).reshape(-1, H)
    split = np.fromfile(CACHE / "split.u8", dtype=np.uint8)
    docs = [json.loads(l) for l in (CACHE / "docs.jsonl").read_text(encoding="utf-8").split("\n") if l]
    char_lm = np.fromfile(CACHE / "char-lm.f32", dtype=np.float32)
    n_docs = len(docs)
    assert targets.shape[0] == n_docs and split.shape[0] == n_docs
    seg_bstart = np.concatenate([[0], np.cumsum(seg_nnz)])
    doc_sstart = np.searchsorted(seg_doc, np.arange(n_docs + 1), side="left")
    return dict(heads=heads, H=H, D=D, seg_doc=seg_doc, seg_nnz=seg_nnz, buckets=buckets, dense=dense,
                targets=targets, split=split, docs=docs, char_lm=char_lm, seg_bstart=seg_bstart,
                doc_sstart=doc_sstart)


class Net(nn.Module):
    def __init__(self, H, D, hidden, mean, std, sparse_heads, use_dense=True):
        super().__init__()
        self.sparse_heads = list(sparse_heads)
        self.use_sparse, self.use_dense = len(self.sparse_heads) > 0, use_dense
        self.sparse = nn.EmbeddingBag(1 << HASH_BITS, max(1, len(self.sparse_heads)), mode="sum")
        nn.init.zeros_(self.sparse.weight)
        self.register_buffer("mean", torch.tensor(mean))
        self.register_buffer("std", torch.tensor(std))
        self.l1 = nn.Linear(D, hidden)
        self.l2 = nn.Linear(hidden, H)
        self.bias = nn.Parameter(torch.zeros(H))

    def forward(self, idx, offsets, psw, dense):
        out = self.bias.expand(dense.shape[0], -1)
        if self.use_sparse:
            sp = self.sparse(idx, offsets, per_sample_weights=psw)
            out = out.index_add(1, torch.tensor(self.sparse_heads), sp)
        if self.use_dense:
            x = (dense - self.mean) / self.std
            out = out + self.l2(torch.relu(self.l1(x)))
        return out


def batch_tensors(data, doc_ids):
    ss, bs = data["doc_sstart"], data["seg_bstart"]
    s0, s1 = ss[doc_ids], ss[doc_ids + 1]
    nseg = s1 - s0
    segs = np.concatenate([np.arange(a, b) for a, b in zip(s0, s1)])
    seg_owner = np.repeat(np.arange(len(doc_ids)), nseg)
    nnz = data["seg_nnz"][segs]
    # a document's segments, and so its buckets, are contiguous
    idx = np.concatenate([data["buckets"][bs[a]:bs[b]] for a, b in zip(s0, s1)])
    offsets = np.concatenate([[0], np.cumsum(nnz)[:-1]])
    w = np.repeat(1.0 / np.sqrt(np.maximum(nnz, 1)), nnz).astype(np.float32)
    return (torch.from_numpy(idx), torch.from_numpy(offsets.astype(np.int64)), torch.from_numpy(w),
            torch.from_numpy(data["dense"][segs]), torch.from_numpy(seg_owner.astype(np.int64)))


def doc_logits(model, data, doc_ids, H):
    idx, off, w, dense, owner = batch_tensors(data, doc_ids)
    seg_logits = model(idx, off, w, dense)
    out = torch.full((len(doc_ids), H), -1e9)
    out = out.scatter_reduce(0, owner[:, None].expand(-1, H), seg_logits, reduce="amax", include_self=True)
    return out


def predict(model, data, doc_ids, H, bs=2048):
    model.eval()
    outs = []
    with torch.no_grad():
        for i in range(0, len(doc_ids), bs):
            outs.append(doc_logits(model, data, doc_ids[i:i + bs], H).numpy())
    model.train()
    return np.concatenate(outs) if outs else np.zeros((0, H), np.float32)


def doc_weights(data):
    """Cap each (source, label) group at an effective 4,000 rows; upweight hand-made hard negatives."""
    docs = data["docs"]
    groups = {}
    for d in docs:
        if d["split"] == "train":
            k = (d["source"], d["label"])
            groups[k] = groups.get(k, 0) + 1
    w = np.ones(len(docs), np.float32)
    for i, d in enumerate(docs):
        n = groups.get((d["source"], d["label"]), 1)
        w[i] = min(1.0, 4000.0 / n)
        if d["source"] in ("synthetic:harm-lookalike", "synthetic:roleplay-benign", "synthetic:scenario-benign", "synthetic:identity",
                           "synthetic:threats", "synthetic:threat-contrast"):
            w[i] *= 3.0
        if d["role"] == "document" and d["label"] == "benign" and d["source"] == "bipia":
            w[i] *= 3.0
        if d["source"] == "gpteacher_roleplay":
            w[i] *= 2.0  # role-play is what persona jailbreaks imitate: the main over-blocking risk
        if d["source"] == "davidson_hate_offensive":
            w[i] *= 0.5  # mostly profanity, a weak signal of harm
    return w


def auc(pos, neg):
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    s = np.concatenate([pos, neg])
    order = s.argsort(kind="mergesort")
    ranks = np.empty(len(s))
    ranks[order] = np.arange(1, len(s) + 1)
    # average ranks for ties
    _, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=ranks)
    ranks = (sums / counts)[inv]
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def recall_at_fpr(pos, neg, fpr):
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    thr = np.quantile(neg, 1 - fpr, method="higher")
    return float((pos > thr).mean())


LABEL_HEAD = {"jailbreak": "jailbreak", "injection": "injection", "harmful": "harm"}


def report(data, logits, doc_ids, heads):
    docs = data["docs"]
    lab = np.array([docs[i]["label"] for i in doc_ids])
    res = {}
    for label, head in LABEL_HEAD.items():
        h = heads.index(head)
        pos = logits[lab == label, h]
        neg = logits[lab == "benign", h]
        res[label] = dict(auc=round(auc(pos, neg), 4), r1=round(recall_at_fpr(pos, neg, 0.01), 4),
                          r5=round(recall_at_fpr(pos, neg, 0.05), 4), n_pos=int(len(pos)))
    return res


def print_sources(data, logits, doc_ids, heads):
    """Per validation source: share flagged at the threshold giving 5% FPR on all benign rows."""
    docs = data["docs"]
    lab = np.array([docs[i]["label"] for i in doc_ids])
    src = np.array([docs[i]["source"] for i in doc_ids])
    for label, head in LABEL_HEAD.items():
        h = heads.index(head)
        thr = np.quantile(logits[lab == "benign", h], 0.95)
        rows = []
        for s_ in sorted(set(src)):
            for l_ in (label, "benign"):
                m = (src == s_) & (lab == l_)
                if m.sum() > 0:
                    rows.append(f"{s_}/{l_}={(logits[m, h] > thr).mean():.2f}({m.sum()})")
        print(f"[{label} @5%FPR] " + " ".join(rows))


def fit_platt(z, y):
    a = torch.tensor(1.0, requires_grad=True)
    b = torch.tensor(0.0, requires_grad=True)
    zt, yt = torch.tensor(z, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
    opt = torch.optim.LBFGS([a, b], max_iter=200)

    def closure():
        opt.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(a.double() * zt + b.double(), yt) + 1e-4 * a.double() ** 2
        loss.backward()
        return loss

    opt.step(closure)
    return float(a.detach()), float(b.detach())


ROLES = ("prompt", "response", "document")
N_CATEGORIES = 12
# Default thresholds of a policy (spec/decisions.md): pre/post jailbreak 0.3, violation and ipi 0.5.
TARGETS = {"jailbreak": 0.3}
# Share of the benign calibration rows flagged at the operating point (default 1%). The comply
# head's benign rows are refusals and deflections of *harmful* requests, and the engine only uses
# it after a request scored harmful, so its false positives cost P(harmful request) x 5% of
# real traffic; at 1% of ~250 calibration refusals its operating point sat at the top refusal.
BUDGETS = {"comply": 0.05}


def calibrate(model, data, calib_ids, heads, H):
    """Platt scaling and operating threshold per (role, head), fitted on the calibration split.

    A role-specific fit is used where that role has >= 20 positive and negative calibration rows
    for the head (documents score differently from prompts: many segments, max-pooled), else the
    fit over all roles. Operating points: jailbreak, injection and harm at 1% of the role's
    ordinary benign calibration rows flagged; categories at the F1-maximising point. The intercept
    is then shifted so that each operating point maps to the default policy threshold.
    """
    zc = predict(model, data, calib_ids, H)
    tc = data["targets"][calib_ids]
    docs = [data["docs"][i] for i in calib_ids]
    # Ordinary traffic for the over-blocking budget: the abusive-language contrast sets and the
    # template refusals are scored but not budgeted (not-budgeted.json says why).
    benign = np.array([d["label"] == "benign" and d["source"] not in NOT_BUDGETED for d in docs])
    role = np.array([d["role"] for d in docs])
    cat0 = heads.index("harm") + 1
    cat_end = cat0 + N_CATEGORIES
    is_cat = lambda h: cat0 <= h < cat_end  # noqa: E731
    mc = tc[:, cat0:cat_end] >= 0
    pooled_cat = fit_platt(zc[:, cat0:cat_end][mc], tc[:, cat0:cat_end][mc].astype(np.float64))

    def fit(sel, h):
        m = sel & (tc[:, h] >= 0)
        yy = tc[m, h].astype(np.float64)
        if yy.sum() < 20 or (1 - yy).sum() < 20:
            return None
        return fit_platt(zc[m, h], yy)

    everyone = np.ones(len(docs), bool)
    global_fit = [pooled_cat if is_cat(h) else fit(everyone, h) or (1.0, 0.0) for h in range(H)]
    out = {}
    for r in ROLES:  # "prompt" first: other roles fall back to it
        sel = role == r
        a_, b_, t_ = [], [], []
        for h in range(H):
            own = None if is_cat(h) else fit(sel, h)
            if own is None and r != "prompt":
                # No labelled evidence for this head in this role: same scale as prompts.
                a_.append(out["prompt"]["a"][h])
                b_.append(out["prompt"]["b"][h])
                t_.append(out["prompt"]["thresholds"][h])
                continue
            a, b = own or global_fit[h]
            use = sel if r == "prompt" or own is not None else everyone
            m = use & (tc[:, h] >= 0)
            zz, yy = zc[m, h], tc[m, h].astype(np.float64)
            p = 1 / (1 + np.exp(-(a * zz + b)))
            if not is_cat(h):
                neg = p[benign[m]]
                thr = float(np.quantile(neg, 1 - BUDGETS.get(heads[h], 0.01))) if len(neg) else 0.5
                thr = min(0.99, max(1e-4, thr))
            else:
                best, thr = -1.0, 0.5
                for t in np.linspace(0.2, 0.9, 71):
                    tp = float(((p >= t) & (yy == 1)).sum())
                    fp = float(((p >= t) & (yy == 0)).sum())
                    fn = float(((p < t) & (yy == 1)).sum())
                    f1 = 2 * tp / max(1.0, 2 * tp + fp + fn)
                    if f1 > best + 1e-9:
                        best, thr = f1, float(t)
            # Prior shift: move the intercept so the operating point lands on the product's default
            # policy threshold (jailbreak 0.3, everything else 0.5). Scores stay monotone and
            # calibrated up to the class base rate, and default policies get this operating point.
            target = TARGETS.get(heads[h], 0.5)
            b = b + float(np.log(target / (1 - target)) - np.log(thr / (1 - thr)))
            a_.append(float(a))
            b_.append(float(b))
            t_.append(target)
        out[r] = {"a": a_, "b": b_, "thresholds": t_}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="hybrid", choices=["hybrid", "both", "sparse", "dense"],
                    help="hybrid: n-gram part on the harm head only; both: on every head")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=96)
    ap.add_argument("--export", action="store_true")
    ap.add_argument("--out", type=Path, default=MODELS,
                    help="directory for the exported detectors.{json,bin} and parity.json (default shared/scoring/models)")
    ap.add_argument("--from-checkpoint", action="store_true", help="skip training; reload the last checkpoint of this variant")
    args = ap.parse_args()
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    torch.set_num_threads(2)
    t0 = time.time()
    data = load()
    H, D, heads = data["H"], data["D"], data["heads"]
    split = data["split"]
    train_ids = np.where(split == 0)[0]
    calib_ids = np.where(split == 1)[0]
    val_ids = np.where(split == 2)[0]
    train_segs = np.concatenate([np.arange(data["doc_sstart"][d], data["doc_sstart"][d + 1]) for d in train_ids])
    mean = data["dense"][train_segs].mean(0)
    std = data["dense"][train_segs].std(0) + 1e-3
    targets = torch.from_numpy(data["targets"].astype(np.float32))
    mask = (targets >= 0).float()
    y = targets.clamp(min=0)
    w_doc = torch.from_numpy(doc_weights(data))
    # Per-head class balance: positives weighted up to half the negative mass.
    head_w = torch.ones(2, H)
    tr = torch.from_numpy(train_ids)
    for h in range(H):
        m, yy, ww = mask[tr, h], y[tr, h], w_doc[tr]
        pos = float((m * yy * ww).sum())
        neg = float((m * (1 - yy) * ww).sum())
        head_w[1, h] = max(1.0, 0.5 * neg / max(pos, 1.0))
    print(f"loaded {len(data['docs'])} docs in {time.time() - t0:.0f}s; train {len(train_ids)} calib {len(calib_ids)} val {len(val_ids)}", flush=True)

    # The n-gram part serves the heads that read words more than style: harm, and comply
    # (refusal phrases).
    lexical = [heads.index(h) for h in ("harm", "comply") if h in heads]
    sparse_heads = {"hybrid": lexical, "both": list(range(H)), "sparse": list(range(H)), "dense": []}[args.variant]
    model = Net(H, D, args.hidden, mean, std, sparse_heads, use_dense=args.variant != "sparse")
    sparse_params = [model.sparse.weight]
    other = [p for n, p in model.named_parameters() if n != "sparse.weight"]
    opt = torch.optim.AdamW([
        {"params": sparse_params, "lr": 0.02, "weight_decay": 1e-4},
        {"params": other, "lr": 2e-3, "weight_decay": 1e-5},
    ])
    if args.from_checkpoint:
        model.load_state_dict(torch.load(CACHE / f"model-{args.variant}.pt"))
        args.epochs = 0
    bs = 512
    steps_per_epoch = (len(train_ids) + bs - 1) // bs
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.02, 2e-3], total_steps=max(1, args.epochs * steps_per_epoch), pct_start=0.1)
    for ep in range(args.epochs):
        perm = rng.permutation(train_ids)
        tot = 0.0
        for i in range(0, len(perm), bs):
            ids = perm[i:i + bs]
            z = doc_logits(model, data, ids, H)
            it = torch.from_numpy(ids)
            yy, mm = y[it], mask[it]
            wt = w_doc[it][:, None] * torch.where(yy > 0, head_w[1], head_w[0]) * mm
            loss = (nn.functional.binary_cross_entropy_with_logits(z, yy, reduction="none") * wt).sum() / max(1.0, float(mm.sum()))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += float(loss.detach())
        zv = predict(model, data, val_ids, H)
        print(f"epoch {ep + 1}: loss {tot / steps_per_epoch:.4f} val {json.dumps(report(data, zv, val_ids, heads))} ({time.time() - t0:.0f}s)", flush=True)

    calibration = calibrate(model, data, calib_ids, heads, H)
    print("calibration", json.dumps(calibration))
    zv = predict(model, data, val_ids, H)
    final = report(data, zv, val_ids, heads)
    print("final val", json.dumps(final))
    print_sources(data, zv, val_ids, heads)
    (CACHE / f"result-{args.variant}.json").write_text(json.dumps({"variant": args.variant, "val": final}, indent=1))
    if not args.from_checkpoint:
        torch.save(model.state_dict(), CACHE / f"model-{args.variant}.pt")
    if args.export:
        export(model, data, heads, H, D, args, calibration)


def load_embedding_table():
    meta = json.loads((MODELS / "static-embeddings.json").read_text())
    V, dims = meta["vocab_size"], meta["dims"]
    raw = (MODELS / "static-embeddings.bin").read_bytes()
    scales = np.frombuffer(raw[: 4 * V], dtype="<f4")
    rows = np.frombuffer(raw[4 * V:], dtype=np.int8).reshape(V, dims)
    return rows.astype(np.float32) * scales[:, None]


def quantize_rows(m):
    scale = np.abs(m).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    return np.clip(np.rint(m / scale[:, None]), -127, 127).astype(np.int8), scale.astype(np.float32)


def export(model, data, heads, H, D, args, calibration):
    """Writes format 2: the embedding block of the first layer is folded into a projected token
    table (vocab x hidden, int8 rows), so serving adds one hidden-sized row per token."""
    E = load_embedding_table()
    dims = E.shape[1]
    with torch.no_grad():
        S = len(model.sparse_heads)
        ws = model.sparse.weight.numpy().copy() if S else np.zeros((1 << HASH_BITS, 0), np.float32)
        scale = (np.abs(ws).max(0) / 127.0) if S else np.zeros(0, np.float32)
        scale[scale == 0] = 1.0
        q = np.clip(np.rint(ws / scale), -127, 127).astype(np.int8) if S else np.zeros(0, np.int8)
        if model.use_dense:
            w1 = model.l1.weight.numpy() / model.std.numpy()[None, :]
            b1 = model.l1.bias.numpy() - w1 @ model.mean.numpy()
            w2 = model.l2.weight.numpy()
            b2 = model.l2.bias.numpy() + model.bias.numpy()
        else:
            w1 = np.zeros((args.hidden, D), np.float32)
            b1 = np.zeros(args.hidden, np.float32)
            w2 = np.zeros((H, args.hidden), np.float32)
            b2 = model.bias.numpy()
    proj_q, proj_scale = quantize_rows(E @ w1[:, :dims].T)
    w1rest = w1[:, dims:]
    parts = [("sparse", q.reshape(-1), "int8"), ("proj", proj_q.reshape(-1), "int8"),
             ("projScale", proj_scale, "float32"), ("w1rest", w1rest.astype(np.float32).reshape(-1), "float32"),
             ("b1", b1.astype(np.float32), "float32"), ("w2", w2.astype(np.float32).reshape(-1), "float32"),
             ("b2", b2.astype(np.float32), "float32"), ("charLm", data["char_lm"].astype(np.float32), "float32")]
    arrays, blob, off = {}, bytearray(), 0
    for name, arr, dt in parts:
        pad = (-off) % 4
        blob += b"\0" * pad
        off += pad
        raw = arr.astype("<f4" if dt == "float32" else np.int8).tobytes()
        arrays[name] = {"offset": off, "length": int(arr.size), "dtype": dt}
        blob += raw
        off += len(raw)
    manifest = {
        "format": 2,
        "variant": args.variant,
        "heads": heads,
        "hashBits": HASH_BITS,
        "denseDim": D,
        "hidden": args.hidden,
        "vocabSize": int(E.shape[0]),
        "sparseHeads": model.sparse_heads,
        "sparseScale": [float(s) for s in scale],
        "calibration": {"a": calibration["prompt"]["a"], "b": calibration["prompt"]["b"]},
        "thresholds": calibration["prompt"]["thresholds"],
        "calibrationByRole": calibration,
        "arrays": arrays,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "detectors.bin").write_bytes(bytes(blob))
    (args.out / "detectors.json").write_text(json.dumps(manifest, indent=1) + "\n")
    write_parity(model, data, heads, H, calibration, args.out)
    print(f"exported {len(blob)} bytes to {args.out}")


PARITY_SOURCES = ("hwu64", "synthetic:technical-noise", "synthetic:human-instructions", "synthetic:indirect-injection",
                  "synthetic:direct-injection", "synthetic:scenario-benign", "synthetic:roleplay-benign")


def write_parity(model, data, heads, H, calibration, out=MODELS):
    """Probabilities the TypeScript scorer must reproduce for a few non-offensive validation texts."""
    val_rows = [json.loads(l) for l in (CACHE / "val.jsonl").read_text(encoding="utf-8").split("\n") if l]
    val_ids = np.where(data["split"] == 2)[0]
    assert len(val_rows) == len(val_ids)
    chosen = []
    for src in PARITY_SOURCES:
        chosen += [i for i, r in enumerate(val_rows) if r["source"] == src][:4]
    z = predict(model, data, val_ids[chosen], H)
    roles = [val_rows[i]["role"] for i in chosen]
    a = np.array([calibration[r]["a"] for r in roles])
    b = np.array([calibration[r]["b"] for r in roles])
    p = 1 / (1 + np.exp(-(a * z + b)))
    cases = [{"text": val_rows[i]["text"], "role": val_rows[i]["role"],
              "probs": {h: round(float(p[k, j]), 5) for j, h in enumerate(heads)}} for k, i in enumerate(chosen)]
    (out / "parity.json").write_text(json.dumps({"note": "float32 reference from training; the scorer uses int8 weights",
                                                 "cases": cases}, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
