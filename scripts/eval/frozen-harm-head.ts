/**
 * An exploratory look (docs/detection-quality.md, Known weaknesses, "Topic is not intent"): can a
 * harm head refitted on the encoder's frozen embedding, with the hard negatives weighted up, tell
 * a safety question from a harmful request better than the shipped harm head? Logistic heads on
 * the embedding of the build's train-split prompts with a harm target (up to PER per source and
 * label; 400 per group of the calib split for the operating point), each read at the score that
 * flags 1% (and 5%) of the calibration split's ordinary benign prompts, against the shipped
 * encoder harm head at its own such score, on the validation split's prompts (up to 600 per
 * source) and the probe files given. Encoder heads only, not the product.
 *
 *   node --conditions=source --import tsx scripts/eval/frozen-harm-head.ts TRAIN_TEXTS.jsonl VAL.jsonl [PROBE.jsonl ...]
 *
 * About 2 minutes of encoding and 5 of fitting on one core.
 */
import fs from 'node:fs';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { logit } from '../../shared/scoring/src/encoder/encoder.js';
import { seeded, shuffle } from '../../shared/testing/src/seeded.js';
import { TARGET_INDEX } from '../encoder/calib-prompts.js';

const PER = 800;
const [textsFile, valFile, ...probes] = process.argv.slice(2);
if (!textsFile || !valFile) {
  console.error('usage: frozen-harm-head.ts TRAIN_TEXTS.jsonl VAL.jsonl [PROBE.jsonl ...]');
  process.exit(2);
}
interface Row {
  text: string;
  y: number;
  source: string;
  set: string;
  p?: number;
  e?: Float32Array;
}
const lines = (f: string) =>
  fs
    .readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown> & { text: string; source: string });
const groups = new Map<string, Row[]>();
for (const r of lines(textsFile)) {
  const h = (r.targets as number[])[TARGET_INDEX.harm];
  if (r.role !== 'prompt' || (h !== 0 && h !== 1) || r.label === 'jailbreak') continue;
  if (r.label === 'injection') continue;
  const k = `${String(r.split)}|${r.source}|${h}`;
  const g = groups.get(k) ?? [];
  g.push({ text: r.text, y: h, source: r.source, set: String(r.split) });
  groups.set(k, g);
}
const rng = seeded(7);
const rows: Row[] = [];
for (const [k, g] of groups)
  rows.push(...shuffle(g, rng).slice(0, k.startsWith('calib') ? 400 : PER));
const perVal = new Map<string, number>();
for (const r of lines(valFile)) {
  if (r.role !== 'prompt' || r.label === 'jailbreak' || r.label === 'injection') continue;
  const n = perVal.get(r.source) ?? 0;
  if (n >= 600) continue;
  perVal.set(r.source, n + 1);
  rows.push({ text: r.text, y: r.label === 'harmful' ? 1 : 0, source: r.source, set: 'val' });
}
for (const f of probes)
  for (const r of lines(f))
    rows.push({ text: r.text, y: r.label === 'benign' ? 0 : 1, source: r.source, set: 'probe' });

const encoder = await createOnnxEncoder();
const HARM = encoder.manifest.heads.indexOf('harm');
for (let i = 0; i < rows.length; i += 32) {
  const batch = rows.slice(i, i + 32);
  const out = await encoder.encode(batch.map((r) => ({ role: 'prompt' as const, text: r.text })));
  batch.forEach((r, j) => {
    r.p = out[j]?.probs[HARM] ?? 0;
    r.e = out[j]?.embedding;
  });
}
await encoder.close();

const DIMS = encoder.manifest.dims;
/** A logistic head on the embedding, classes balanced, row weights `wt`, by Adam (L2 1e-3). */
function fitHead(train: Row[], wt: (r: Row) => number): (r: Row) => number {
  const n = train.length;
  const sum = (y: number) => train.filter((r) => r.y === y).reduce((s, r) => s + wt(r), 0);
  const [neg, pos] = [sum(0), sum(1)];
  const W = train.map((r) => wt(r) * (r.y === 1 ? n / (2 * pos) : n / (2 * neg)));
  const w = new Float64Array(DIMS + 1);
  const m = new Float64Array(DIMS + 1);
  const v = new Float64Array(DIMS + 1);
  const z = (e: Float32Array) => e.reduce((s, x, k) => s + 8 * x * (w[k] ?? 0), w[DIMS] ?? 0);
  for (let step = 1; step <= 1500; step++) {
    const g = new Float64Array(DIMS + 1);
    train.forEach((r, i) => {
      const e = r.e as Float32Array;
      const d = (1 / (1 + Math.exp(-z(e))) - r.y) * (W[i] ?? 0);
      for (let k = 0; k < DIMS; k++) g[k] = (g[k] ?? 0) + 8 * d * (e[k] ?? 0);
      g[DIMS] = (g[DIMS] ?? 0) + d;
    });
    for (let k = 0; k <= DIMS; k++) {
      const gk = (g[k] ?? 0) / n + (k < DIMS ? 1e-3 * (w[k] ?? 0) : 0);
      m[k] = 0.9 * (m[k] ?? 0) + 0.1 * gk;
      v[k] = 0.999 * (v[k] ?? 0) + 0.001 * gk * gk;
      const mh = (m[k] ?? 0) / (1 - 0.9 ** step);
      const vh = (v[k] ?? 0) / (1 - 0.999 ** step);
      w[k] = (w[k] ?? 0) - (0.05 * mh) / (Math.sqrt(vh) + 1e-8);
    }
  }
  return (r) => z(r.e as Float32Array);
}

const ORDINARY =
  /^(banking77|clinc150|gsm8k|xsid|gpteacher_codegen|gpteacher_roleplay|coconot|synthetic:.*)$/u;
const HARD = new Set([
  'coconot',
  'synthetic:harm-lookalike',
  'synthetic:scenario-benign',
  'synthetic:roleplay-benign',
  'gpteacher_roleplay',
  'synthetic:identity',
]);
const train = rows.filter((r) => r.set === 'train');
const heads: Record<string, (r: Row) => number> = { 'shipped harm head': (r) => logit(r.p ?? 0) };
for (const k of [1, 5, 20])
  heads[`head on the embedding, hard negatives x${k}`] = fitHead(train, (r) =>
    r.y === 0 && HARD.has(r.source) ? k : 1,
  );
const calib = rows.filter((r) => r.set === 'calib' && r.y === 0 && ORDINARY.test(r.source));
const rate = (g: Row[], f: (r: Row) => number, t: number) =>
  g.length ? `${((100 * g.filter((r) => f(r) > t).length) / g.length).toFixed(1)}%` : '-';
const HARMFUL = ['advbench', 'strongreject', 'harmbench', 'red_instruct', 'gptfuzz_prompts'];
const BENIGN = ['hwu64', 'nq_open', 'gpteacher_roleplay', 'synthetic:harm-lookalike'];
for (const [name, f] of Object.entries(heads)) {
  const cs = calib.map(f).sort((a, b) => a - b);
  for (const q of [0.99, 0.95]) {
    const t = cs[Math.floor(q * cs.length)] ?? 0;
    const val = (src: string, y: number) =>
      rate(
        rows.filter((r) => r.set === 'val' && r.source === src && r.y === y),
        f,
        t,
      );
    console.log(
      `${name}, at ${Math.round(100 * (1 - q))}% of ordinary calibration prompts: caught ${HARMFUL.map((s) => `${s} ${val(s, 1)}`).join(', ')}; flagged ${BENIGN.map((s) => `${s} ${val(s, 0)}`).join(', ')}, probes ${rate(
        rows.filter((r) => r.set === 'probe' && r.y === 0),
        f,
        t,
      )}`,
    );
  }
}
