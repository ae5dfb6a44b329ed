#!/usr/bin/env node
// Latency of the encoder path on ONE thread: tokenise + ONNX forward, batch 1 (one request).
// Texts: distinct ~1 KB (UTF-8) texts built by joining benign rows of the training sets
// (by default 80% English sources, 20% non-English sources), plus short single prompts.
//   full     : the whole text; over 512 tokens it is cut into 510-token windows whose
//              embeddings are averaged (all windows are timed)
//   trunc128 : the first 128 tokens only (what embed.mjs does)
// Reports median and p99 per text (= per 1 KB for the 1 KB set) after warm-up.
// usage: node scripts/encoder/time.mjs [--n 300] [--data DIR]
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { CACHE, encodeIds, embedBatch, loadEncoder, rng, shuffle } from './lib.mjs';

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes('--' + k) ? args[args.indexOf('--' + k) + 1] : d);
const N = Number(opt('n', 300));
const DATA = opt(
  'data',
  process.env.GUARD_TRAIN_DATA ?? path.resolve(CACHE, '../../../../shared/data/train'),
);
const EN = ['gpteacher_codegen', 'gpteacher_roleplay', 'gsm8k', 'bipia', 'diasafety'];
const XX = ['xsid', 'told_br', 'korean_hate_speech', 'cold'];

function benign(src, filter = () => true) {
  return fs
    .readFileSync(path.join(DATA, src + '.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => r.label === 'benign' && filter(r))
    .map((r) => r.text);
}
const rand = rng('time:20240611');
const en = shuffle(
  EN.flatMap((s) => benign(s)),
  rand,
);
const xx = shuffle(
  XX.flatMap((s) => benign(s, (r) => !(r.categories ?? []).includes('lang:en'))),
  rand,
);
const bytes = (s) => Buffer.byteLength(s, 'utf8');
function kb(pool, start) {
  let t = '',
    k = start;
  while (bytes(t) < 1024) t += (t ? '\n' : '') + pool[k++ % pool.length];
  while (bytes(t) > 1024) t = t.slice(0, -1); // cut to exactly <= 1 KB
  return [t, k];
}
const texts = [];
for (let i = 0, ke = 0, kx = 0; i < N; i++) {
  let t;
  if (i % 5 === 4) [t, kx] = kb(xx, kx);
  else [t, ke] = kb(en, ke);
  texts.push(t);
}
const short = shuffle(benign('nq_open'), rand).slice(0, N);

const enc = await loadEncoder();
async function embedFull(text) {
  const ids = encodeIds(enc, text, 0).ids;
  if (ids.length <= 512) return { n: ids.length, e: await embedBatch(enc, [ids]) };
  const body = ids.slice(1, -1),
    win = [];
  for (let s = 0; s < body.length; s += 510)
    win.push([ids[0], ...body.slice(s, s + 510), ids[ids.length - 1]]);
  const sum = new Float32Array(enc.dim);
  for (const w of win)
    (await embedBatch(enc, [w])).forEach((v, j) => {
      sum[j] += v / win.length;
    });
  return { n: ids.length, e: sum };
}
const modes = {
  full: (t) => embedFull('query: ' + t),
  trunc128: async (t) => {
    const { ids } = encodeIds(enc, 'query: ' + t, 128);
    return { n: ids.length, e: await embedBatch(enc, [ids]) };
  },
};
const q = (a, p) => a[Math.min(a.length - 1, Math.floor(p * a.length))];
console.log(
  `node ${process.version}, ${os.cpus()[0].model}, load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
for (const [setName, set] of [
  ['1 KB texts', texts],
  ['short prompts (nq_open)', short],
]) {
  for (const [name, f] of Object.entries(modes)) {
    if (setName !== '1 KB texts' && name === 'full') continue; // short prompts are never truncated
    for (let i = 0; i < 10; i++) await f(set[i]);
    const ts = [],
      ntok = [];
    for (const t of set) {
      const a = performance.now();
      const r = await f(t);
      ts.push(performance.now() - a);
      ntok.push(r.n);
    }
    ts.sort((a, b) => a - b);
    ntok.sort((a, b) => a - b);
    const mb = set.reduce((s, t) => s + bytes(t), 0) / set.length;
    console.log(
      `${setName.padEnd(24)} ${name.padEnd(9)} n=${set.length} mean ${mb.toFixed(0)} B, tokens median ${q(ntok, 0.5)} (max ${ntok.at(-1)}): ` +
        `median ${q(ts, 0.5).toFixed(1)} ms, p90 ${q(ts, 0.9).toFixed(1)} ms, p99 ${q(ts, 0.99).toFixed(1)} ms`,
    );
  }
}
console.log(
  `rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB, load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
