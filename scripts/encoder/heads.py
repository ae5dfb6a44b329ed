"""Linear heads on cached encoder embeddings, and how they generalise to unseen sources.

Reads node_modules/.cache/guard-encoder/emb/<source>.{f32,idx.jsonl} (written by embed.mjs) and fits
L2-regularised, class-weighted logistic regressions (Newton's method, numpy only, deterministic):
jailbreak vs benign, injection vs benign, harmful vs benign.

Protocol
  * Benign threshold pool, excluded from every fit: nq_open, gsm8k, gpteacher_roleplay and the
    benign rows of coconot. Every threshold is the score that flags 1% of this pool.
  * Leave-one-source-out (LOSO): for each source with positives for a head, fit the head on all
    other sources (pool excluded; the held-out source's rows of every label dropped), set the
    threshold on the pool, report the held-out source's recall at it, its AUC against the pool and
    the share of its own benign rows flagged. Nothing is tuned on held-out rows (the
    regularisation strength is fixed up front).
  * In-distribution: a seeded random 80/20 split of the same sampled rows (pool excluded), fit on
    80%, same threshold rule, per-source recall on the 20%.
  * Per language (lang: tags): multilingual_hatecheck and rtp_lx (harmful head; recall and benign
    flag rate), xsid (benign only: flag rate of each head), under LOSO and in-distribution.

usage: node_modules/.cache/guard-encoder/venv/bin/python scripts/encoder/heads.py [--lam 1e-2] [--json out.json]
"""
import os

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')  # one core: set before numpy loads BLAS
os.environ.setdefault('OMP_NUM_THREADS', '1')
os.environ.setdefault('MKL_NUM_THREADS', '1')

import argparse  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
EMB = os.path.join(ROOT, 'node_modules', '.cache', 'guard-encoder', 'emb')
POOL_SOURCES = {'nq_open', 'gsm8k', 'gpteacher_roleplay'}  # + coconot benign rows
HEADS = ('jailbreak', 'injection', 'harmful')
LANG_SOURCES = ('multilingual_hatecheck', 'rtp_lx', 'xsid')
SEED = 1234
FPR = 0.01


def load():
    X, label, source, lang, role = [], [], [], [], []
    for f in sorted(os.listdir(EMB)):
        if not f.endswith('.idx.jsonl'):
            continue
        src = f[:-len('.idx.jsonl')]
        idx = [json.loads(line) for line in open(os.path.join(EMB, f), encoding='utf-8')]
        e = np.fromfile(os.path.join(EMB, src + '.f32'), '<f4').reshape(len(idx), -1)
        X.append(e)
        for r in idx:
            cats = r['categories']
            label.append(r['label'])
            source.append(src)
            lang.append(next((c[5:] for c in cats if c.startswith('lang:')), ''))
            role.append(next((c[5:] for c in cats if c.startswith('role:')), ''))
    return np.concatenate(X).astype(np.float64), np.array(label), np.array(source), np.array(lang), np.array(role)


def fit(X, y, lam, iters=50):
    """Class-balanced L2 logistic regression by Newton's method; returns a scoring function."""
    mu, sd = X.mean(0), X.std(0) + 1e-6
    Z = np.hstack([(X - mu) / sd, np.ones((len(X), 1))])
    sw = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1))  # each class weighs 1/2
    reg = np.full(Z.shape[1], lam)
    reg[-1] = 0.0  # bias not penalised
    w = np.zeros(Z.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(Z @ w)))
        g = Z.T @ (sw * (p - y)) + reg * w
        Hs = (Z * (sw * p * (1 - p))[:, None]).T @ Z + np.diag(reg)
        step = np.linalg.solve(Hs, g)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return lambda Xn: np.hstack([(Xn - mu) / sd, np.ones((len(Xn), 1))]) @ w  # logits


def auc(pos, neg):
    if len(pos) == 0 or len(neg) == 0:
        return float('nan')
    s = np.concatenate([pos, neg])
    r = np.empty(len(s))
    order = s.argsort(kind='mergesort')
    r[order] = np.arange(1, len(s) + 1)
    # average ranks of ties
    _, inv, cnt = np.unique(s, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, r)
    r = (sums / cnt)[inv]
    return float((r[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def threshold(pool_scores, fpr=FPR):
    """Score above which at most `fpr` of the pool lies."""
    return float(np.quantile(pool_scores, 1 - fpr, method='higher'))


def pct(a):
    return f'{100 * a:.1f}%' if a == a else '–'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--lam', type=float, default=1e-2, help='L2 strength on standardised features (fixed, not tuned)')
    ap.add_argument('--json', default=os.path.join(EMB, '..', 'heads-results.json'))
    args = ap.parse_args()

    X, label, source, lang, role = load()
    pool = np.isin(source, list(POOL_SOURCES)) | ((source == 'coconot') & (label == 'benign'))
    Xpool = X[pool]
    fit_ok = ~pool
    benign = label == 'benign'
    out = {'lam': args.lam, 'fpr': FPR, 'pool_rows': int(pool.sum()), 'rows': int(len(X)),
           'sample': {}, 'loso': {}, 'indist': {}, 'lang': {}}
    for s in np.unique(source):
        m = source == s
        out['sample'][s] = {lb: int((m & (label == lb)).sum()) for lb in np.unique(label[m])}
    print(f'rows {len(X)}, threshold pool {pool.sum()} benign rows (excluded from fitting), lam={args.lam}')

    def run(head, train_mask):
        m = train_mask & fit_ok & ((label == head) | benign)
        score = fit(X[m], (label[m] == head).astype(np.float64), args.lam)
        return score, threshold(score(Xpool)), int((m & (label == head)).sum()), int((m & benign).sum())

    # ---- in-distribution: seeded 80/20 split ----
    rs = np.random.default_rng(SEED)
    test = rs.random(len(X)) < 0.2
    indist_scores = {}
    for head in HEADS:
        score, thr, npos, nneg = run(head, ~test)
        sc = score(X)
        thr5 = threshold(sc[pool], 0.05)
        indist_scores[head] = (sc, thr)
        res = {'train_pos': npos, 'train_neg': nneg, 'sources': {}}
        for s in np.unique(source[label == head]):
            pm = test & (source == s) & (label == head)
            res['sources'][s] = {'n': int(pm.sum()), 'recall': float((sc[pm] > thr).mean()) if pm.any() else float('nan'),
                                 'recall5': float((sc[pm] > thr5).mean()) if pm.any() else float('nan'),
                                 'auc': auc(sc[pm], sc[pool])}
        pm = test & (label == head) & fit_ok
        res['pooled'] = {'n': int(pm.sum()), 'recall': float((sc[pm] > thr).mean()), 'recall5': float((sc[pm] > thr5).mean()),
                         'auc': auc(sc[pm], sc[pool]),
                         'benign_test_flagged': float((sc[test & benign & fit_ok] > thr).mean())}
        out['indist'][head] = res

    # ---- leave-one-source-out ----
    loso_scores = {}
    for head in HEADS:
        out['loso'][head] = {}
        for s in sorted(np.unique(source[(label == head) & fit_ok])):
            score, thr, npos, nneg = run(head, source != s)
            m = source == s
            sc = score(X[m])
            sp = score(Xpool)
            thr5 = threshold(sp, 0.05)
            pos, ben = sc[label[m] == head], sc[(label[m] == 'benign') & ~pool[m]]
            if npos == 0:  # no other source has this label: nothing to learn from
                print(f'loso {head:9s} {s:28s} skipped: no positives left to fit on')
                continue
            loso_scores[(head, s)] = (sc, thr)
            out['loso'][head][s] = {'n': int(len(pos)), 'train_pos': npos, 'train_neg': nneg,
                                    'recall': float((pos > thr).mean()), 'recall5': float((pos > thr5).mean()),
                                    'auc': auc(pos, sp),
                                    'own_benign_n': int(len(ben)),
                                    'own_benign_flagged': float((ben > thr).mean()) if len(ben) else float('nan')}
            print(f'loso {head:9s} {s:28s} n={len(pos):5d} recall={pct(out["loso"][head][s]["recall"])}', flush=True)

    # xsid is benign only: fit each head without it to see over-blocking on an unseen multilingual source
    for head in HEADS:
        score, thr, _, _ = run(head, source != 'xsid')
        loso_scores[(head, 'xsid')] = (score(X[source == 'xsid']), thr)

    # ---- per language ----
    for s in LANG_SOURCES:
        m = source == s
        if not m.any():
            continue
        langs = sorted(set(lang[m]))
        res = {}
        heads = ('harmful',) if s != 'xsid' else HEADS
        for head in heads:
            if (head, s) not in loso_scores:
                continue
            sc_l, thr_l = loso_scores[(head, s)]
            sc_i, thr_i = indist_scores[head]
            for lg in langs:
                ml = lang[m] == lg
                r = res.setdefault(lg, {})
                for lb in ('harmful', 'benign'):
                    sel = ml & (label[m] == lb)
                    if not sel.any():
                        continue
                    seli = m & (lang == lg) & (label == lb) & test
                    key = f'{head}:{lb}'
                    r[key] = {'n': int(sel.sum()), 'loso_flagged': float((sc_l[sel] > thr_l).mean()),
                              'indist_n': int(seli.sum()),
                              'indist_flagged': float((sc_i[seli] > thr_i).mean()) if seli.any() else float('nan')}
            if head == 'harmful':
                for lg in langs:
                    ml = lang[m] == lg
                    hp_, bn_ = ml & (label[m] == 'harmful'), ml & (label[m] == 'benign')
                    if hp_.any() and bn_.any():
                        res[lg]['auc_vs_own_benign'] = {'loso': auc(sc_l[hp_], sc_l[bn_]),
                                                        'indist': auc(sc_i[m][hp_], sc_i[m][bn_])}
        out['lang'][s] = res

    json.dump(out, open(args.json, 'w'), indent=1)
    print('wrote', os.path.relpath(args.json))
    report(out)


def report(out):
    print('\n### Leave-one-source-out (threshold: 1% FPR on the benign pool)\n')
    print('| head | held-out source | positives | fit on (pos / benign) | LOSO recall @1% / @5% FPR | LOSO AUC vs pool | own benign flagged | in-dist. recall @1% / @5% (n) | in-dist. AUC |')
    print('|---|---|---|---|---|---|---|---|---|')
    for head, d in out['loso'].items():
        for s, r in d.items():
            ind = out['indist'][head]['sources'].get(s, {})
            own = f"{pct(r['own_benign_flagged'])} of {r['own_benign_n']}" if r['own_benign_n'] else '–'
            print(f"| {head} | {s} | {r['n']} | {r['train_pos']} / {r['train_neg']} | {pct(r['recall'])} / {pct(r['recall5'])} | {r['auc']:.3f} | {own} | "
                  f"{pct(ind.get('recall', float('nan')))} / {pct(ind.get('recall5', float('nan')))} ({ind.get('n', 0)}) | {ind.get('auc', float('nan')):.3f} |")
    print('\n### Macro means over held-out sources (sources with >= 20 in-distribution test positives)\n')
    print('| head | sources | LOSO recall @1% | in-dist. recall @1% | LOSO AUC | in-dist. AUC |')
    print('|---|---|---|---|---|---|')
    for head, d in out['loso'].items():
        ss = [s for s in d if out['indist'][head]['sources'].get(s, {}).get('n', 0) >= 20]
        if not ss:
            continue
        ind = out['indist'][head]['sources']
        mean = lambda xs: float(np.mean(xs))  # noqa: E731
        print(f"| {head} | {len(ss)} | {pct(mean([d[s]['recall'] for s in ss]))} | {pct(mean([ind[s]['recall'] for s in ss]))} | "
              f"{mean([d[s]['auc'] for s in ss]):.3f} | {mean([ind[s]['auc'] for s in ss]):.3f} |")
    print('\n### In-distribution (random 80/20, pooled test positives)\n')
    print('| head | test positives | recall @1% / @5% pool FPR | AUC vs pool | benign test rows flagged (@1%) |')
    print('|---|---|---|---|---|')
    for head, d in out['indist'].items():
        p = d['pooled']
        print(f"| {head} | {p['n']} | {pct(p['recall'])} / {pct(p['recall5'])} | {p['auc']:.3f} | {pct(p['benign_test_flagged'])} |")
    for s, res in out['lang'].items():
        keys = sorted({k for r in res.values() for k in r if k != 'auc_vs_own_benign'})
        has_auc = any('auc_vs_own_benign' in r for r in res.values())
        print(f'\n### {s} per language (LOSO flagged / in-distribution flagged; n)\n')
        print('| lang | ' + ' | '.join(keys) + (' | harmful AUC vs own benign (LOSO / in-dist.) |' if has_auc else ' |'))
        print('|---|' + '---|' * (len(keys) + has_auc))
        for lg, r in res.items():
            cells = [f"{pct(r[k]['loso_flagged'])} ({r[k]['n']}) / {pct(r[k]['indist_flagged'])} ({r[k]['indist_n']})" if k in r else '–'
                     for k in keys]
            if has_auc:
                a = r.get('auc_vs_own_benign')
                cells.append(f"{a['loso']:.3f} / {a['indist']:.3f}" if a else '–')
            print(f'| {lg or "?"} | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main()
