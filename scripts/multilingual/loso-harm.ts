/**
 * `npm run eval:multilingual-loso -- FOLD=DIR ...`: the multilingual reader's harm head, read
 * alone, leave-one-source-out on the English harmful-request folds of the encoder's own
 * leave-one-source-out (`npm run eval:loso-encoder`, scripts/encoder/loso.py): recall on a fold's
 * held-out rows at the logit that flags 1% of the benign pool's prompts (nq_open, gsm8k,
 * gpteacher_roleplay, coconot), the same rows and pool as that table. Each DIR is a head trained
 * without the fold's source and the pool (`npm run train:multilingual -- --without
 * red_instruct,nq_open,gsm8k,gpteacher_roleplay,coconot --out DIR`; `_reference`: the pool only,
 * which measures advbench, strongreject and harmbench, in no build). The rows file
 * (.cache/guard-ft/loso/rows.jsonl, or --rows) comes from `bash scripts/encoder/loso.sh prepare`,
 * or alone: `python3 scripts/encoder/group-rows.py loso DATA .cache/guard-ft/loso/rows.jsonl`.
 * Embeddings come from the reader's cache (embedding-cache.ts; a few minutes the first time).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import {
  defaultMultilingualDir,
  harmLogit,
  loadMultilingualManifest,
} from '@guard/scoring/multilingual/reader';
import { thresholdAt } from '../eval/roc.js';
import { cachedEmbedder } from './embedding-cache.js';
import { readRows } from './rows.js';

/** The sources each fold holds out (loso.py FOLDS: the English harmful-request ones). */
const FOLDS: Record<string, readonly string[]> = {
  _reference: ['advbench', 'strongreject', 'harmbench'],
  red_instruct: ['red_instruct'],
  do_not_answer: ['do_not_answer'],
};
const POOL_BUDGET = 0.01;

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { rows: { type: 'string', default: '.cache/guard-ft/loso/rows.jsonl' } },
});
const heads = positionals.map((p) => {
  const [fold, dir] = p.split('=');
  if (!fold || !dir || !FOLDS[fold]) {
    console.error(
      `expected FOLD=DIR with FOLD one of ${Object.keys(FOLDS).join(', ')}; got "${p}"`,
    );
    process.exit(2);
  }
  return { fold, sources: FOLDS[fold] ?? [], manifest: loadMultilingualManifest(dir) };
});
if (heads.length === 0) {
  console.error('usage: npm run eval:multilingual-loso -- FOLD=DIR [FOLD=DIR ...]');
  process.exit(2);
}
if (!fs.existsSync(opts.rows)) {
  console.error(`${opts.rows} not found: run bash scripts/encoder/loso.sh prepare first`);
  process.exit(2);
}
const wanted = new Set(heads.flatMap((h) => h.sources));
const rows = readRows(opts.rows).filter(
  (r) => r.role === 'prompt' && (r.pool === true || wanted.has(r.source)),
);
const dir = defaultMultilingualDir();
const cache = cachedEmbedder(dir, loadMultilingualManifest(dir));
const vectors = await cache.embed(rows, 'rows');
await cache.close();

const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)}%`;
console.log(
  ['fold', 'held-out source', 'rows', 'recall at 1% of the pool', 'by language'].join('\t'),
);
for (const { fold, sources, manifest } of heads) {
  const z = vectors.map((e, i) => harmLogit(manifest, e, rows[i]?.text ?? '') ?? -Infinity);
  const pool = rows.flatMap((r, i) => (r.pool ? [z[i] as number] : []));
  const at = thresholdAt(pool, POOL_BUDGET);
  const above = (idx: number[]) => idx.filter((i) => (z[i] as number) > at).length;
  for (const source of sources) {
    const idx = rows.flatMap((r, i) => (!r.pool && r.source === source ? [i] : []));
    const langs = [...new Set(idx.map((i) => rows[i]?.lang ?? '-'))].sort();
    const byLang =
      langs.length > 1
        ? langs
            .map((l) => {
              const part = idx.filter((i) => (rows[i]?.lang ?? '-') === l);
              return `${l} ${pct(above(part), part.length)} (${part.length})`;
            })
            .join(', ')
        : '';
    console.log([fold, source, idx.length, pct(above(idx), idx.length), byLang].join('\t'));
  }
  const bySource = [...new Set(rows.filter((r) => r.pool).map((r) => r.source))].sort().map((s) => {
    const part = rows.flatMap((r, i) => (r.pool && r.source === s ? [i] : []));
    return `${s} ${pct(above(part), part.length)}`;
  });
  console.log([fold, 'pool flagged', pool.length, bySource.join(', ')].join('\t'));
}
