"""Leave-one-source-out (LOSO) for the shipped encoder recipe, beside the static detectors' LOSO.

For each fold (a held-out source, or `_reference`: only the benign pool held out, which measures
the sources every build holds out), the encoder is fine-tuned exactly as train-product.sh does it
(finetune.py's sample, joined prompts and fit; --split train --joined 3000; --pasted N adds
prompts holding a piece of a document, not in the shipped recipe) on the training build
made without the fold's source and without the benign pool, and scored on the held-out rows and
the pool (group-rows.py loso). The static detectors of the same fold come from `npm run eval:loso`
(.cache/guard-loso/folds/<fold>/model). Recall at the score that flags 1% of the pool, for the
static model, the encoder (torch and int8 as served) and the cascade (static routes 20% of the
pool to the encoder, as shipped; the product cascades the jailbreak head only, so "as shipped" is
the cascade for jailbreak rows and the static model for injection and harm). Harmful prompts are
also scored by both models together, as the product reads the harm of a request (`calibratedHarm`:
the static and the encoder's harm logits weighted as the shipped encoder.json's `harm` point
weighs them; --harm-manifest), with the share of them the cascade routes (top 20% of the pool by
static jailbreak score or top 10% by static harm score); "as shipped" is that score for them.
Recall is also given against the ordinary part of the pool alone (nq_open + gsm8k, no role-play, no look-unsafe
prompts). Nothing is fitted on held-out rows.

The steps are split so that the fine-tuning can run elsewhere (a GPU machine with torch, no
network, no Node): `pack` tokenises here and writes everything the fine-tuning needs into one
folder (token ids, targets, the random state after sampling, the base weights in float16 to halve
their size); `run` fine-tunes and scores the folds from that folder alone; `report` reads the
scores back. loso.sh drives them.

  python loso.py pack --builds DIR --rows ROWS.jsonl --base MINILM_DIR --out PACK [--folds a,b]
  python loso.py run --pack PACK --out DIR [--device cuda] [--jobs N] [--folds a,b]
  python loso.py report --rows ROWS.jsonl --scores DIR --static DIR [--json OUT.json]
"""
import argparse
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
from types import SimpleNamespace

import numpy as np

from pool_metrics import auc, cascade, load, recall_at, thr_at

# Held-out sources measured by each fold; _reference (pool excluded only) measures the sources
# that every training build holds out (VAL_SOURCES of scripts/train/sources.ts).
FOLDS = {
    '_reference': ['gptfuzz_prompts', 'deepset_prompt_injections', 'advbench', 'strongreject', 'harmbench'],
    **{s: [s] for s in ['jailbreak_llms', 'sap', 'trustllm_safety', 'deepinception_smoothllm_gcg', 'bipia',
                        'red_instruct', 'do_not_answer', 'gptfuzz_responses', 'diasafety']},
}
ORDINARY = {'nq_open', 'gsm8k'}  # the pool without its hard negatives
POOL_SOURCES = ['nq_open', 'gsm8k', 'gpteacher_roleplay', 'coconot']
# Harmful-prompt sources whose verdicts through a policy `loso.sh product` reports.
HARM_PROMPT_SOURCES = {'advbench', 'strongreject', 'harmbench', 'red_instruct', 'do_not_answer'}
ROUTE_SHARE = 0.20  # the shipped route_above: top 20% of benign calibration prompts
HEAD_NAMES = ['jailbreak', 'injection', 'harmful']
HARM_ROUTE_SHARE = 0.10  # the shipped harm route_above: top 10% of benign calibration prompts


def harm_both(manifest):
    """The harm of a request read by both models (encoder.ts `calibratedHarm`, before the sigmoid):
    the static and the encoder's harm logits, weighted and shifted as `manifest`'s harm point does."""
    w = manifest['harm']
    return lambda s, e: w['static'] * logit(s) + w['encoder'] * logit(e) + w['b']


def logit(p):
    """Log-odds, kept finite as encoder.ts `logit` keeps them."""
    p = min(max(p, 1e-7), 1 - 1e-7)
    return float(np.log(p / (1 - p)))


def fold_rows(rows, fold):
    """Indices of the rows a fold scores: its held-out sources and the pool in their roles."""
    held = [i for i, r in enumerate(rows) if not r['pool'] and r['source'] in FOLDS[fold]]
    roles = {rows[i]['role'] for i in held}
    return held + [i for i, r in enumerate(rows) if r['pool'] and r['role'] in roles]


def folds_arg(a):
    return [f for f in (a.folds.split(',') if a.folds else FOLDS) if f]


def copy_base(src, dst, dtype):
    """The base model folder (config and weights) with its floating-point weights cast to dtype:
    float16 in the pack, to halve its size, and back to float32 for training."""
    from safetensors.torch import load_file, save_file

    os.makedirs(dst, exist_ok=True)
    sd = load_file(os.path.join(src, 'model.safetensors'))
    save_file({k: v.to(dtype) if v.is_floating_point() else v for k, v in sd.items()},
              os.path.join(dst, 'model.safetensors'))
    shutil.copy(os.path.join(src, 'config.json'), dst)


def pack(a):
    import torch

    from finetune import RECIPE, SEED, Tok, targets, training_rows

    tok = Tok('minilm', a.base)
    seqs, table = [], {}

    def sid(ids):
        key = tuple(ids)
        if key not in table:
            table[key] = len(seqs)
            seqs.append(ids)
        return table[key]

    os.makedirs(a.out, exist_ok=True)
    # Folds packed earlier index into this table: keep their ids, append the new sequences (a pack
    # of some folds once rewrote the table under the others, and their fine-tunes learnt noise).
    old = os.path.join(a.out, 'seqs.npz')
    if os.path.exists(old):
        with np.load(old) as s:
            flat, off = s['flat'], s['off']  # read once: each lookup of an npz member decompresses it
        for i in range(len(off) - 1):
            sid(flat[off[i]:off[i + 1]].astype(np.int64).tolist())
    rows = load(a.rows)
    evals = [sid(tok.encode(r['role'], r['text'])) for r in rows]
    for fold in folds_arg(a):
        t0 = time.time()
        ns = SimpleNamespace(texts=os.path.join(a.builds, fold, 'train-texts.jsonl'), split='train',
                             per_source=RECIPE['per_source'], joined=a.joined, pasted=a.pasted)
        rng = random.Random(SEED)
        trows, counts = training_rows(ns, rng)
        idx = np.array([sid(tok.encode(r['role'], r['text'])) for r in trows], dtype=np.int32)
        np.savez_compressed(os.path.join(a.out, f'fold-{fold}.npz'), idx=idx,
                            tgt=np.array(targets(trows), dtype=np.int8),
                            eval=np.array(fold_rows(rows, fold), dtype=np.int32))
        with open(os.path.join(a.out, f'fold-{fold}.json'), 'w') as f:
            json.dump({'rng': rng.getstate(), 'groups': counts, 'rows': len(trows), 'joined': a.joined,
                       'pasted': a.pasted,
                       'fingerprint': fingerprint([seqs[i] for i in idx])}, f)
        print(f'{fold}: {len(trows)} training rows ({time.time() - t0:.0f}s)', flush=True)
    flat = np.concatenate([np.array(s, dtype=np.uint16) for s in seqs])
    off = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)
    np.savez_compressed(os.path.join(a.out, 'seqs.npz'), flat=flat, off=off, evals=np.array(evals, dtype=np.int32))
    copy_base(a.base, os.path.join(a.out, 'base'), torch.float16)
    print(f'{len(seqs)} distinct token sequences; pack in {a.out}')


def fingerprint(seqs):
    """A digest of a fold's training sequences, checked before fine-tuning on them."""
    h = hashlib.sha256()
    for ids in seqs:
        h.update(np.array(ids, dtype=np.uint16).tobytes() + b'\xff\xff')
    return h.hexdigest()[:16]


def window(ids, hw):
    """Research variants (--window H,T): a shorter cut than the pack's 96 + 30 tokens, taken from
    it; the same as cutting the whole text, since H <= 96 and T <= 30."""
    if not hw:
        return ids
    h, t = hw
    body = ids[1:-1]
    return ids if len(body) <= h + t else [ids[0], *body[:h], *body[-t:], ids[-1]]


def run_fold(fold, a):
    import torch

    from finetune import RECIPE, SEED, Detector, export_model, fit, predict, predict_onnx

    torch.set_num_threads(a.threads)
    log = open(os.path.join(a.out, f'{fold}.log'), 'w')
    sys.stdout = log
    s = np.load(os.path.join(a.pack, 'seqs.npz'))
    flat, off = s['flat'], s['off']
    seq = lambda i: flat[off[i]:off[i + 1]].astype(np.int64).tolist()  # noqa: E731
    f = np.load(os.path.join(a.pack, f'fold-{fold}.npz'))
    with open(os.path.join(a.pack, f'fold-{fold}.json')) as fh:
        meta = json.load(fh)
    if 'fingerprint' not in meta:
        raise SystemExit(f'{fold}: packed without a fingerprint (before 2026-11-28): rerun loso.sh prepare '
                         f'with LOSO_FOLDS={fold}')
    if meta['fingerprint'] != fingerprint([seq(i) for i in f['idx']]):
        raise SystemExit(f'{fold}: the pack no longer matches this fold (its table was rewritten): '
                         f'rerun loso.sh prepare with LOSO_FOLDS={fold}')
    enc = [window(seq(i), a.window) for i in f['idx'][:a.limit]]
    torch.manual_seed(SEED)
    model = Detector('minilm', a.base32, a.layers)
    rng = random.Random()
    st = meta['rng']
    rng.setstate((st[0], tuple(st[1]), st[2]))
    seconds = fit(model, enc, f['tgt'][:a.limit].tolist(), SimpleNamespace(**RECIPE), rng, a.device)
    rows = f['eval'].tolist()[:a.limit]
    ev = [window(seq(s['evals'][i]), a.window) for i in rows]
    out = {'fold': fold, 'rows': rows, 'train_rows': len(enc), 'train_seconds': seconds, 'layers': a.layers,
           'window': a.window,
           'device': a.device, 'torch': [[round(x, 6) for x in p[:3]] for p in predict(model, ev, a.device)]}
    with open(os.path.join(a.out, f'{fold}.json'), 'w') as fh:
        json.dump(out, fh)  # the torch scores stand even if the export below fails
    try:
        with tempfile.TemporaryDirectory() as d:
            export_model(model, d)
            t0 = time.time()
            out['int8'] = [[round(float(x), 6) for x in p[:3]]
                           for p in predict_onnx(os.path.join(d, 'model.int8.onnx'), ev)]
            out['int8_seconds'] = round(time.time() - t0)
            if a.keep_models:  # the fold's encoder as served, for verdicts through a policy
                keep = os.path.join(a.out, 'models', fold)
                os.makedirs(keep, exist_ok=True)
                shutil.copyfile(os.path.join(d, 'model.int8.onnx'), os.path.join(keep, 'model.int8.onnx'))
    except Exception as e:  # noqa: BLE001  the report falls back to the torch scores, and says so
        out['int8_error'] = repr(e)
        print('int8 export or scoring failed:', repr(e), flush=True)
    with open(os.path.join(a.out, f'{fold}.json'), 'w') as fh:
        json.dump(out, fh)
    log.close()
    return fold, seconds


def run(a):
    """Fine-tunes and scores every fold, `jobs` at a time (each fold in its own process)."""
    import torch

    os.makedirs(a.out, exist_ok=True)
    a.base32 = tempfile.mkdtemp(prefix='minilm-')
    copy_base(os.path.join(a.pack, 'base'), a.base32, torch.float32)
    folds = folds_arg(a)
    t0 = time.time()
    with multiprocessing.get_context('spawn').Pool(a.jobs) as pool:
        for fold, seconds in pool.starmap(run_fold, [(f, a) for f in folds]):
            print(f'{fold}: fine-tuned in {seconds}s ({time.time() - t0:.0f}s elapsed)', flush=True)


def report(a):
    rows = load(a.rows)
    with open(a.harm_manifest) as f:
        manifest = json.load(f)
    both = harm_both(manifest)
    # The product's rule about harm in general: violated where the harm read by both reaches this.
    general_at = manifest.get('harm_general', {}).get('at')
    general = []
    lines = ['| held-out source (fold) | head (role) | n | static | encoder int8 | encoder torch | cascade (20% routed) '
             '| both (harm) | as shipped | AUC static / int8 | static / int8 vs nq_open+gsm8k only |',
             '|---|---|---|---|---|---|---|---|---|---|---|']
    out = []
    for fold in FOLDS:
        p = os.path.join(a.scores, f'{fold}.json')
        if not os.path.exists(p):
            lines.append(f'| {fold}: not run | | | | | | | | | |')
            continue
        with open(p) as f:
            res = json.load(f)
        static = load(os.path.join(a.static, f'{fold}.jsonl'))
        at = {i: k for k, i in enumerate(res['rows'])}
        for src in FOLDS[fold]:
            idx = [i for i in res['rows'] if rows[i]['source'] == src and not rows[i]['pool']]
            if not idx:
                continue
            head, role = rows[idx[0]]['label'], rows[idx[0]]['role']
            h = HEAD_NAMES.index(head)
            pool = [i for i in res['rows'] if rows[i]['pool'] and rows[i]['role'] == role]
            ordinary = [i for i in pool if rows[i]['source'] in ORDINARY]
            enc = 'int8' if 'int8' in res else 'torch'  # int8 missing: the export failed (see the fold's log)
            get = {
                'static': lambda ix: [static[at[i]][head] for i in ix],
                'int8': lambda ix: [res[enc][at[i]][h] for i in ix],
                'torch': lambda ix: [res['torch'][at[i]][h] for i in ix],
            }
            if head == 'harmful' and role == 'prompt':
                get['both'] = lambda ix: [both(static[at[i]][head], res[enc][at[i]][h]) for i in ix]
            r = {k: recall_at(g(idx), g(pool)) for k, g in get.items()}
            r['cascade'], r['routed'] = cascade(get['static'](idx), get['int8'](idx), get['static'](pool),
                                                get['int8'](pool), ROUTE_SHARE)
            r['auc_static'], r['auc_int8'] = auc(get['static'](idx), get['static'](pool)), auc(get['int8'](idx), get['int8'](pool))
            r['static_ordinary'] = recall_at(get['static'](idx), get['static'](ordinary))
            r['int8_ordinary'] = recall_at(get['int8'](idx), get['int8'](ordinary))
            if 'both' in r:
                # What the cascade routes to the encoder, by the pool's own route points.
                jb_at = thr_at([static[at[i]]['jailbreak'] for i in pool], ROUTE_SHARE)
                harm_at = thr_at(get['static'](pool), HARM_ROUTE_SHARE)
                r['harm_routed'] = sum(static[at[i]]['jailbreak'] > jb_at or static[at[i]][head] > harm_at
                                       for i in idx) / len(idx)
                r['auc_both'] = auc(get['both'](idx), get['both'](pool))
                r['both_ordinary'] = recall_at(get['both'](idx), get['both'](ordinary))
                if general_at is not None:
                    # A fixed point, not one set on the pool: the fold's static detectors are
                    # calibrated on their own build, so this approximates the product's point.
                    reach = lambda ix: sum(x >= logit(general_at) for x in get['both'](ix)) / len(ix)  # noqa: E731
                    r['general'], r['general_pool'] = reach(idx), reach(pool)
                    r['general_by_pool'] = {ps: reach([i for i in pool if rows[i]['source'] == ps])
                                            for ps in POOL_SOURCES}
                    general.append(f"| {src} | {len(idx)} | {100 * r['general']:.1f}% | {100 * r['general_pool']:.2f}% | "
                                   + ' | '.join(f"{100 * v:.2f}%" for v in r['general_by_pool'].values()) + ' |')
            # The product cascades the jailbreak head and reads the harm of requests with both
            # models; injection and the harm of answers stay static.
            r['shipped'] = r['cascade'] if head == 'jailbreak' else r.get('both', r['static'])
            langs = sorted({rows[i].get('lang') for i in idx} - {None})
            if len(langs) > 1:  # per language, at the same pool thresholds
                r['by_lang'] = {lg: {k: recall_at(g([i for i in idx if rows[i].get('lang') == lg]), g(pool))
                                     for k, g in get.items()} | {'n': sum(rows[i].get('lang') == lg for i in idx)}
                                for lg in langs}
            out.append({'fold': fold, 'source': src, 'head': head, 'role': role, 'n': len(idx), 'pool': len(pool),
                        'encoder_scores': enc, **r})
            pct = lambda x: f'{100 * x:.1f}%'  # noqa: E731
            both_cell = (f"{pct(r['both'])} (AUC {r['auc_both']:.3f}; {pct(r['both_ordinary'])} vs nq_open+gsm8k; "
                         f"{pct(r['harm_routed'])} routed)" if 'both' in r else '')
            lines.append(f"| {src}{'' if fold == src else f' ({fold})'} | {head} ({role}) | {len(idx)} | {pct(r['static'])} | "
                         f"{pct(r['int8'])} | {pct(r['torch'])} | {pct(r['cascade'])} | {both_cell} | **{pct(r['shipped'])}** | "
                         f"{r['auc_static']:.3f} / {r['auc_int8']:.3f} | {pct(r['static_ordinary'])} / {pct(r['int8_ordinary'])} |")
    for head in HEAD_NAMES:
        g = [x for x in out if x['head'] == head]
        if g:
            m = lambda k: 100 * sum(x[k] for x in g) / len(g)  # noqa: E731
            lines.append(f"| mean of {len(g)} sources | {head} | | {m('static'):.1f}% | {m('int8'):.1f}% | "
                         f"{m('torch'):.1f}% | {m('cascade'):.1f}% | | **{m('shipped'):.1f}%** | | "
                         f"{m('static_ordinary'):.1f}% / {m('int8_ordinary'):.1f}% |")
    for x in out:
        if 'by_lang' in x:
            cols = [k for k in ('static', 'int8', 'torch', 'both') if k in next(iter(x['by_lang'].values()))]
            lines += ['', f"Per language, {x['source']} ({' / '.join(cols)}, at the same pool thresholds): "
                      + ', '.join(f"{lg} (n={v['n']}) " + ' / '.join(f"{100 * v[k]:.1f}%" for k in cols)
                                  for lg, v in x['by_lang'].items())]
    if general:
        lines += ['', f'Harm read by both at the point of the rule about harm in general ({general_at}), '
                  'share reaching it:', '',
                  '| held-out source | n | harmful | held-out pool | ' + ' | '.join(POOL_SOURCES) + ' |',
                  '|---|---|---|---|' + '---|' * len(POOL_SOURCES), *general]
    print('\n'.join(lines))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(out, f, indent=1)


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('cmd', choices=['pack', 'run', 'report'])
    ap.add_argument('--folds', help='comma-separated; default every fold')
    ap.add_argument('--builds')
    ap.add_argument('--rows')
    ap.add_argument('--base')
    ap.add_argument('--joined', type=int, default=3000)
    ap.add_argument('--pasted', type=int, default=0)
    ap.add_argument('--pack')
    ap.add_argument('--out')
    ap.add_argument('--device', default=os.environ.get('FT_DEVICE', 'cpu'))
    ap.add_argument('--jobs', type=int, default=1)
    ap.add_argument('--threads', type=int, default=int(os.environ.get('FT_THREADS', '2')),
                    help='torch threads per fold process')
    ap.add_argument('--layers', type=int, help='research: a shallower student (every other layer of the base)')
    ap.add_argument('--window', type=lambda v: tuple(int(x) for x in v.split(',')),
                    help='research: read only the first H and last T tokens (H <= 96, T <= 30)')
    ap.add_argument('--limit', type=int, help='smoke test: the first N training and evaluation rows of each fold')
    ap.add_argument('--keep-models', action='store_true',
                    help="keep each fold's int8 model in OUT/models/FOLD/ (loso-product.sh reads it)")
    ap.add_argument('--scores')
    ap.add_argument('--static')
    ap.add_argument('--json')
    ap.add_argument('--harm-manifest', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../shared/scoring/models/encoder/encoder.json'),
                    help='report: the encoder.json whose harm point weighs the two models (default: the shipped one)')
    a = ap.parse_args()
    {'pack': pack, 'run': run, 'report': report}[a.cmd](a)
