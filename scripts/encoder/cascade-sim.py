"""Cascade simulation: the static detectors route, the fine-tuned encoder decides.

A text goes to the encoder when its static score for the head is at or above the static score
that `r` of the benign pool reaches (so r is the share of ordinary traffic the encoder sees);
texts below stay with the static verdict, which at these routing shares is always "pass". Among
routed texts, the encoder's threshold is set so that 1% of the whole pool is flagged. r = 0 is the
static model alone (threshold at 1% of the pool), r = 1 the encoder alone. Nothing is fitted on
the held-out positives.
Usage: python cascade-sim.py ROWS.jsonl STATIC.jsonl ENCODER.jsonl
"""
import sys

from pool_metrics import cascade, load

SHARES = [0.0, 0.02, 0.05, 0.10, 0.20, 0.50, 1.0]

rows, st, en = (load(p) for p in sys.argv[1:4])
sources = []
for r in rows:
    if not r['pool'] and r['source'] not in sources:
        sources.append(r['source'])
print('| held-out source | head | ' + ' | '.join(f'r = {int(100 * s)}%' for s in SHARES) + ' |')
print('|---|---|' + '---|' * len(SHARES))
means = {s: [] for s in SHARES}
routed_attacks = {s: [] for s in SHARES}
for src in sources:
    idx = [i for i, r in enumerate(rows) if r['source'] == src and not r['pool']]
    head, role = rows[idx[0]]['label'], rows[idx[0]]['role']
    pool = [i for i, r in enumerate(rows) if r['pool'] and r['role'] == role]
    cells = []
    for share in SHARES:
        rec, routed = cascade([st[i][head] for i in idx], [en[i][head] for i in idx],
                              [st[i][head] for i in pool], [en[i][head] for i in pool], share)
        means[share].append(rec)
        routed_attacks[share].append(routed)
        cells.append(f'{100 * rec:.1f}%')
    print(f'| {src} | {head} ({role}) | ' + ' | '.join(cells) + ' |')
print('| mean | | ' + ' | '.join(f'{100 * sum(v) / len(v):.1f}%' for v in means.values()) + ' |')
print('| attacks routed (mean) | | ' + ' | '.join(f'{100 * sum(v) / len(v):.0f}%' for v in routed_attacks.values()) + ' |')
