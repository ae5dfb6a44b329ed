"""Recall at 1% of the held-out benign pool, per held-out source, for several score files.

Usage: python group-report.py ROWS.jsonl NAME=SCORES.jsonl [NAME=SCORES.jsonl ...]
Scores are aligned with ROWS line by line. The threshold of each head is the 99th percentile of
the pool rows scored in the same role as the source's positives (nothing is tuned on positives).
"""
import sys

from pool_metrics import auc, load, thr_at

rows = load(sys.argv[1])
models = [a.split('=', 1) for a in sys.argv[2:]]
scores = {n: load(p) for n, p in models}
pool_of = {role: [i for i, r in enumerate(rows) if r['pool'] and r['role'] == role] for role in {r['role'] for r in rows}}
thr = {}  # (model, role, head) -> the score that flags 1% of the pool


def threshold(n, role, head):
    if (n, role, head) not in thr:
        thr[n, role, head] = thr_at([scores[n][i][head] for i in pool_of[role]])
    return thr[n, role, head]


sources = []
for r in rows:
    if not r['pool'] and r['source'] not in sources:
        sources.append(r['source'])
print('| held-out source | head | n | ' + ' | '.join(f'{n} R@1% | {n} AUC' for n, _ in models) + ' |')
print('|---|---|---|' + '---|---|' * len(models))
summary = {n: [] for n, _ in models}
for src in sources:
    idx = [i for i, r in enumerate(rows) if r['source'] == src and not r['pool']]
    head, role = rows[idx[0]]['label'], rows[idx[0]]['role']
    cells = []
    for n, _ in models:
        s = scores[n]
        neg = [s[i][head] for i in pool_of[role]]
        pos = [s[i][head] for i in idx]
        t = threshold(n, role, head)
        rec = sum(v > t for v in pos) / len(pos)
        summary[n].append(rec)
        cells.append(f'{100 * rec:.1f}% | {auc(pos, neg):.3f}')
    print(f'| {src} | {head} ({role}) | {len(idx)} | ' + ' | '.join(cells) + ' |')
print('| mean over sources | | | ' + ' | '.join(f'{100 * sum(v) / len(v):.1f}% | ' for v in summary.values()) + ' |')

# Per language (held-out sources with language tags) and what each pool source loses, at the same
# thresholds.
print()
print('| rows | head | n | ' + ' | '.join(f'{n} flagged' for n, _ in models) + ' |')
print('|---|---|---|' + '---|' * len(models))
groups = {}
heads = sorted({r['label'] for r in rows if not r['pool']})
for i, r in enumerate(rows):
    if r['pool']:
        for head in heads:
            groups.setdefault((f"pool {r['source']}" + (f" {r['lang']}" if r['source'] == 'xsid' else ''), head, r['role']), []).append(i)
    elif r.get('lang'):
        groups.setdefault((f"{r['source']} {r['lang']}", r['label'], r['role']), []).append(i)
for (name, head, role), idx in sorted(groups.items()):
    if role != 'prompt' or len(idx) < 20:
        continue
    cells = []
    for n, _ in models:
        s = scores[n]
        t = threshold(n, role, head)
        cells.append(f'{100 * sum(s[i][head] > t for i in idx) / len(idx):.1f}%')
    print(f'| {name} | {head} | {len(idx)} | ' + ' | '.join(cells) + ' |')
