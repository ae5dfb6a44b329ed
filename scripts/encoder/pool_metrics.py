"""Metrics against a held-out benign pool, shared by group-report.py, cascade-sim.py and loso.py.

Every threshold is the score that flags `fpr` (1%) of the pool; nothing is fitted on positives.
"""
import json


def load(p):
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]


def thr_at(neg, fpr=0.01):
    """The score that `fpr` of `neg` exceeds (a row is flagged when its score is above it)."""
    s = sorted(neg, reverse=True)
    k = int(len(s) * fpr)
    return s[k] if k < len(s) else s[-1]


def recall_at(pos, neg, fpr=0.01):
    t = thr_at(neg, fpr)
    return sum(v > t for v in pos) / len(pos)


def auc(pos, neg):
    """Area under the ROC curve (rank sum, average ranks for ties)."""
    allv = sorted([(v, 1) for v in pos] + [(v, 0) for v in neg])
    i = 0
    r = [0.0] * len(allv)
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        for k in range(i, j + 1):
            r[k] = (i + j) / 2 + 1
        i = j + 1
    rp = sum(r[k] for k in range(len(allv)) if allv[k][1] == 1)
    return (rp - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def cascade(st_pos, en_pos, st_pool, en_pool, share, fpr=0.01):
    """The static score routes, the encoder decides: a text goes to the encoder when its static
    score reaches the one that `share` of the pool reaches; among routed texts the encoder's
    threshold flags `fpr` of the whole pool. share 0 is the static model alone, 1 the encoder
    alone. Returns (recall, share of positives routed)."""
    k = int(fpr * len(st_pool))
    if share == 0.0:
        t = sorted(st_pool, reverse=True)[k]
        return sum(v > t for v in st_pos) / len(st_pos), 0.0
    ps = sorted(st_pool, reverse=True)
    q = ps[min(len(ps) - 1, int(share * len(ps)))] if share < 1 else float('-inf')
    pe = sorted((e for s, e in zip(st_pool, en_pool) if s >= q), reverse=True)
    te = pe[k] if k < len(pe) else float('-inf')
    routed = [s >= q for s in st_pos]
    flagged = [r and e > te for r, e in zip(routed, en_pos)]
    return sum(flagged) / len(st_pos), sum(routed) / len(st_pos)
