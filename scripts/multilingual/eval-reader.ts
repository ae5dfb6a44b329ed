/**
 * `npm run eval:multilingual -- DIR [DIR ...]`: the multilingual reader's harm head alone, each
 * manifest DIR's (the shipped one is shared/scoring/models/multilingual; others from
 * `npm run train:multilingual -- ... --out DIR`) at its own point (logit 0, with its per-script
 * offsets): the share of rows above it, per set, one column per head. The sets are the rows the
 * gate sends on of the validation split (.cache/guard-train/val.jsonl, `npm run train`) and of the
 * training split's red_instruct and xSID Chinese rows (.cache/guard-train-encoder/train-texts.jsonl,
 * `npm run train:encoder` or build-dataset.ts with GUARD_TRAIN_TEXTS=1), and the hand-written
 * question sets in scripts/eval/probes/, and questions-zh.ts's held-out part. Embeddings come
 * from the cache train-head.ts keeps (embedding-cache.ts); the others are read and added to it (a
 * few minutes the first time).
 */
import fs from 'node:fs';
import path from 'node:path';
import { englishGate } from '@guard/scoring/multilingual/gate';
import {
  defaultMultilingualDir,
  harmLogit,
  loadMultilingualManifest,
} from '@guard/scoring/multilingual/reader';
import { scriptGroup } from '@guard/scoring/multilingual/script-group';
import { cachedEmbedder } from './embedding-cache.js';
import { questionsZh } from './questions-zh.js';
import { readRows, type Row } from './rows.js';

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error('usage: npm run eval:multilingual -- DIR [DIR ...]');
  process.exit(2);
}
const dir = defaultMultilingualDir();
const manifest = loadMultilingualManifest(dir);
const gated = englishGate(manifest.gate);
const sets = new Map<string, Row[]>();
const add = (k: string, r: Row) => (sets.get(k) ?? sets.set(k, []).get(k))?.push(r);
for (const r of readRows('.cache/guard-train/val.jsonl')) {
  if (r.role !== 'prompt' || !gated(r.text)) continue;
  if (r.source === 'red_instruct')
    add(`validation red_instruct, ${scriptGroup(r.text)} (harmful)`, r);
  else if (r.source === 'xsid') add('validation xsid, held-out languages (benign)', r);
  else if (r.source === 'multilingual_hatecheck')
    add(`validation hatecheck hi/pt/pl (${r.label})`, r);
  else add(`validation, other sources (${r.label})`, r);
}
for (const r of readRows('.cache/guard-train-encoder/train-texts.jsonl')) {
  if (r.split !== 'train' || !gated(r.text)) continue;
  if (r.source === 'red_instruct') add(`train red_instruct, ${scriptGroup(r.text)} (harmful)`, r);
  if (r.source === 'xsid' && scriptGroup(r.text) === 'han') add('train xsid, han (benign)', r);
}
const probes = 'scripts/eval/probes';
for (const f of fs
  .readdirSync(probes)
  .filter((f) => f.startsWith('questions-'))
  .sort()) {
  const set = f.replace(/^questions-other-languages-|\.jsonl$/g, '');
  for (const r of readRows(path.join(probes, f)))
    add(`questions ${set}, ${scriptGroup(r.text) === 'han' ? 'han' : 'other scripts'}`, r);
}

// The template questions' held-out part (questions-zh.ts: templates and slots training never
// sees; the same author and generator as the training part, so flattered).
for (const text of questionsZh('val'))
  add('template questions zh, val part (benign)', {
    text,
    label: 'benign',
    role: 'prompt',
    source: 'synthetic:questions-zh',
  });

const cache = cachedEmbedder(dir, manifest);
const rows = [...sets.values()].flat();
const vectors = await cache.embed(rows, 'rows');
await cache.close();
const known = new Map(rows.map((r, i) => [r.text, vectors[i] as Float32Array]));
const heads = dirs.map((d) => ({ name: d, m: loadMultilingualManifest(d) }));
console.log(['set', 'rows', ...heads.map((h) => h.name)].join('\t'));
for (const [k, rows] of [...sets].sort(([a], [b]) => a.localeCompare(b))) {
  const cols = heads.map(({ m }) => {
    const above = rows.filter(
      (r) => (harmLogit(m, known.get(r.text) as Float32Array, r.text) ?? -1) > 0,
    ).length;
    return `${((100 * above) / rows.length).toFixed(1)}% (${above})`;
  });
  console.log([k, rows.length, ...cols].join('\t'));
}
