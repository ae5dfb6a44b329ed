/**
 * `npm run train:multilingual [-- TEXTS]`: the multilingual reader's harm head. Reads the build's
 * prompts (TEXTS: build-dataset.ts's train-texts.jsonl, default .cache/guard-train-encoder/) with
 * the product's own reader (frozen multilingual-e5-small, `npm run fetch:multilingual` first),
 * fits a logistic regression of the harm target on the sentence embedding on a fixed-seed sample of
 * the _train_ split (up to 400 rows per source, label and language), and shifts its intercept so
 * that 1% of the _calibration_ split's ordinary benign prompts (label benign: attack carriers with
 * no harm target are not) the gate sends on (gate.ts: mostly
 * other languages; the abusive-language contrast sets left out, as in every other calibration:
 * scripts/train/not-budgeted.json) reach 0. Embeddings are kept in .cache/guard-multilingual/ for
 * the next run (per text, keyed by the weights). Writes `harm` (and `provenance`) into
 * models/multilingual/multilingual.json. Training reads requests only: the abusive-language sets
 * (comments and tweets, not requests) are left out of training as of the budget.
 * The regularisation (1e-2 on embeddings scaled by 8) was fixed before any number was looked at.
 *
 *   npm run train:multilingual -- [TEXTS] [--hold-out han|arabic|other] [--without SOURCE[:SCRIPT]]
 *                                 [--comments none|benign|all] [--centre all|requests]
 *                                 [--questions zh] [--chinese-point] [--out DIR]
 *
 * --hold-out leaves the training rows of one script out (han: Chinese; other: the Latin-script and
 * other texts the gate sends on), to measure the head on a language it never saw; --without leaves
 * a whole source out (comma-separated for several), or its rows of one script as --hold-out tells
 * them (`red_instruct:han`: any Chinese character; `en`: what the gate keeps); --centre fits the
 * head on embeddings less the mean of their script group's benign training rows (script-group.ts,
 * by most letters; what the gate keeps apart; `all`: every source's, the comment sets' too;
 * `requests`: the sources the head trains on) and writes each group's offset into the manifest
 * (measured on 2026-11-29 and not kept, like --without red_instruct:han: docs/detection-quality.md,
 * "Two more sets, and two heads measured and not kept"); --out writes the
 * manifest into DIR (with links to the model files) instead of the shipped one, for
 * `npm run eval:monitor -- ... --multilingual-dir DIR`. --questions zh adds 400 of questions-zh.ts's
 * ordinary Chinese questions as benign training rows; --chinese-point gives Chinese text a point of its
 * own, where 2% of those questions are above it (both measured and not kept: same section).
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { linearLogit } from '@guard/scoring/encoder/encoder';
import { englishGate } from '@guard/scoring/multilingual/gate';
import { scriptGroup } from '@guard/scoring/multilingual/script-group';
import {
  defaultMultilingualDir,
  loadMultilingualManifest,
} from '@guard/scoring/multilingual/reader';
import { seeded, shuffle } from '@guard/testing/seeded';
import { NOT_BUDGETED, TARGET_INDEX, type CalibRow } from '../encoder/calib-prompts.js';
import { fitEmbeddingHead } from '../encoder/logistic.js';
import { thresholdAt } from '../eval/roc.js';
import { cachedEmbedder } from './embedding-cache.js';
import { questionsZh } from './questions-zh.js';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'hold-out': { type: 'string' },
    without: { type: 'string' },
    out: { type: 'string' },
    comments: { type: 'string', default: 'none' },
    centre: { type: 'string' },
    questions: { type: 'string', default: 'none' },
    'chinese-point': { type: 'boolean', default: false },
  },
});
// --comments benign|all: also train on the abusive-language comment sets' benign rows (hard
// negatives), or all their rows; measured and not kept (docs/detection-quality.md).
const comments = opts.comments;
if (!['none', 'benign', 'all'].includes(comments)) {
  console.error(`--comments: expected none, benign or all, got "${comments}"`);
  process.exit(2);
}
// --centre all|requests: the reference rows of each script group's mean are every benign training
// row (the comment sets' too), or the requests the head trains on only.
const centre = opts.centre;
if (centre !== undefined && !['all', 'requests'].includes(centre)) {
  console.error(`--centre: expected all or requests, got "${centre}"`);
  process.exit(2);
}
// --questions zh: also train on ordinary Chinese questions built from templates (questions-zh.ts,
// its train part), benign, as one more group of the sample.
const questions = opts.questions;
if (!['none', 'zh'].includes(questions)) {
  console.error(`--questions: expected none or zh, got "${questions}"`);
  process.exit(2);
}
// --chinese-point: a point of its own for Chinese (the han group's offset), where 2% of
// questions-zh.ts's training questions are above it; not with --centre (which sets the offsets).
const chinesePoint = opts['chinese-point'];
if (chinesePoint && centre !== undefined) {
  console.error('--chinese-point: not with --centre');
  process.exit(2);
}
const CHINESE_BUDGET = 0.02;
const texts = positionals[0] ?? '.cache/guard-train-encoder/train-texts.jsonl';
const dir = defaultMultilingualDir();
const holdOut = opts['hold-out'];
const without = new Set(opts.without?.split(',').filter(Boolean) ?? []);
if (holdOut !== undefined && !['han', 'arabic', 'other'].includes(holdOut)) {
  console.error(`--hold-out: expected han, arabic or other, got "${holdOut}"`);
  process.exit(2);
}
for (const w of without) {
  const part = w.split(':')[1];
  if (part !== undefined && !['han', 'arabic', 'other', 'en'].includes(part)) {
    console.error(`--without ${w}: the script after ":" is han, arabic, other or en`);
    process.exit(2);
  }
}
const PER_GROUP = 400;
const SCALE = 8;
const LAMBDA = 1e-2;
const STEPS = 3000;
const SEED = 7;
const BENIGN_BUDGET = 0.01;
/** Benign reference rows a script group needs for a mean of its own (--centre). */
const MIN_REFERENCE = 50;

const manifest = loadMultilingualManifest(dir);
const gated = englishGate(manifest.gate);
/** A language tag good enough for grouping: the script of the text, or "latin". */
const script = (t: string) =>
  /[\u4e00-\u9fff]/u.test(t)
    ? 'han'
    : /[\u0600-\u06ff]/u.test(t)
      ? 'arabic'
      : gated(t)
        ? 'other'
        : 'en';

const train = new Map<string, CalibRow[]>();
const calibBenign: CalibRow[] = [];
/** --centre: benign training prompts of every source by script group, to take each group's mean. */
const reference = new Map<string, CalibRow[]>();
/** The group a text is centred in: its script when the gate sends it on, else English. */
const groupOf = (t: string) => (gated(t) ? scriptGroup(t) : 'en');
for await (const line of readline.createInterface({ input: fs.createReadStream(texts) })) {
  if (!line.trim()) continue;
  const r = JSON.parse(line) as CalibRow;
  const y = r.targets[TARGET_INDEX.harm] ?? -1;
  if (r.role !== 'prompt' || y < 0) continue;
  // Requests only: the abusive-language sets are comments and tweets, not requests (and their
  // contrast cases quote slurs to condemn them), as in every calibration of the build.
  const comment = NOT_BUDGETED.has(r.source);
  const leftOut =
    (holdOut !== undefined && script(r.text) === holdOut) ||
    without.has(r.source) ||
    without.has(`${r.source}:${script(r.text)}`);
  if (
    centre !== undefined &&
    r.split === 'train' &&
    r.label === 'benign' &&
    !leftOut &&
    (centre === 'all' || !comment)
  ) {
    const k = `${groupOf(r.text)}|${r.source}`;
    (reference.get(k) ?? reference.set(k, []).get(k))?.push(r);
  }
  if (
    r.split === 'train' &&
    (!comment || comments === 'all' || (comments === 'benign' && r.label === 'benign'))
  ) {
    if (leftOut) continue;
    const k = `${r.source}|${y}|${script(r.text)}`;
    (train.get(k) ?? train.set(k, []).get(k))?.push(r);
  } else if (
    r.split === 'calib' &&
    r.label === 'benign' &&
    !NOT_BUDGETED.has(r.source) &&
    gated(r.text)
  )
    calibBenign.push(r);
}
const rand = seeded(SEED);
const sample: Array<{ text: string; y: number }> = [];
for (const [k, rows] of [...train].sort(([a], [b]) => a.localeCompare(b))) {
  const y = Number(k.split('|')[1]);
  for (const r of shuffle(rows, rand).slice(0, PER_GROUP)) sample.push({ text: r.text, y });
}
// After the build's groups, with a stream of its own, so that the others' samples stay the same.
const questionsAdded = questions === 'zh' && holdOut !== 'han';
if (questions === 'zh' && !questionsAdded)
  console.error('--questions zh: left out, as every Chinese row is with --hold-out han');
if (questionsAdded)
  for (const text of shuffle(questionsZh('train'), seeded(SEED + 1)).slice(0, PER_GROUP))
    sample.push({ text, y: 0 });
if (chinesePoint && questionsAdded)
  console.error(
    '--chinese-point with --questions zh: the point is set on questions the head trained on',
  );
const pos = sample.filter((s) => s.y === 1).length;
console.log(
  `train sample: ${sample.length} prompts (${pos} harmful) from ${train.size + (questionsAdded ? 1 : 0)} groups; calibration: ${calibBenign.length} benign prompts the gate sends on`,
);

const t0 = performance.now();
const { embed, close } = cachedEmbedder(dir, manifest);
let X = await embed(sample, 'train');
let C = await embed(calibBenign, 'calibration');
/** --centre: each group's mean embedding over its benign reference rows (`any`: the gated ones). */
const centres = new Map<string, Float32Array>();
if (centre !== undefined) {
  const ref: Array<{ text: string; group: string }> = [];
  for (const [k, rows] of [...reference].sort(([a], [b]) => a.localeCompare(b)))
    for (const r of shuffle(rows, rand).slice(0, PER_GROUP))
      ref.push({ text: r.text, group: k.split('|')[0] as string });
  const R = await embed(ref, 'reference');
  const sums = new Map<string, { v: Float32Array; n: number }>();
  R.forEach((e, i) => {
    const g = ref[i]?.group as string;
    for (const key of g === 'en' ? [g] : [g, 'any']) {
      const acc = sums.get(key) ?? sums.set(key, { v: new Float32Array(384), n: 0 }).get(key);
      if (!acc) continue;
      e.forEach((x, j) => (acc.v[j] = (acc.v[j] ?? 0) + x));
      acc.n++;
    }
  });
  for (const [g, { v, n }] of sums)
    if (n >= MIN_REFERENCE || g === 'any')
      centres.set(
        g,
        v.map((x) => x / n),
      );
  console.log(
    `centres: ${[...sums].map(([g, { n }]) => `${g} ${n}${centres.has(g) ? '' : ' (too few: any)'}`).join(', ')}`,
  );
  const centred = (e: Float32Array, t: string) => {
    const c = centres.get(groupOf(t)) ?? centres.get('any');
    return c ? e.map((x, j) => x - (c[j] ?? 0)) : e;
  };
  X = X.map((e, i) => centred(e, sample[i]?.text as string));
  C = C.map((e, i) => centred(e, calibBenign[i]?.text as string));
}
const Q = chinesePoint
  ? await embed(
      questionsZh('train').map((text) => ({ text })),
      'questions',
    )
  : [];
await close();

const { w: head, b } = fitEmbeddingHead(
  X,
  sample.map((r) => r.y),
  { dims: 384, scale: SCALE, lambda: LAMBDA, steps: STEPS },
);
const logit = (e: Float32Array) => linearLogit({ w: head, b }, e);
const cz = C.map(logit).sort((p, q) => q - p);
const at = cz[Math.floor(BENIGN_BUDGET * cz.length)] ?? 0;
const trainFlag = X.map(logit).map((z, i) => ({ z, y: sample[i]?.y as number }));
const recall = trainFlag.filter((r) => r.y === 1 && r.z > at).length / pos;
console.log(
  `operating point: logit ${at.toFixed(3)} (1% of ${cz.length} calibration prompts); train harmful above it ${(100 * recall).toFixed(1)}% (fitted, not a quality number)`,
);

let file = path.join(dir, 'multilingual.json');
if (opts.out) {
  fs.mkdirSync(opts.out, { recursive: true });
  for (const f of [manifest.model, manifest.layout, 'weights.bin', manifest.tokenizer]) {
    const link = path.join(opts.out, f);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(path.resolve(dir, f), link);
  }
  fs.copyFileSync(file, path.join(opts.out, 'multilingual.json'));
  file = path.join(opts.out, 'multilingual.json');
}
const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
const w6 = head.map((v) => Number(v.toPrecision(6)));
// Centred: the head reads `e - centre`, so a text of group g gets `-w . centre_g` on its logit.
const offsets = Object.fromEntries(
  [...centres]
    .filter(([g]) => g !== 'en')
    .map(([g, c]) => [g, Number((-linearLogit({ w: w6, b: 0 }, c)).toPrecision(6))]),
);
if (chinesePoint) {
  const qz = Q.map((e) => linearLogit({ w: w6, b: b - at }, e));
  // Only ever lowers Chinese scores: a head that already flags under 2% of them keeps its point.
  offsets.han = Math.min(0, Number((-thresholdAt(qz, CHINESE_BUDGET)).toPrecision(6)));
  console.log(
    `Chinese point: offset ${offsets.han} (2% of ${qz.length} template questions above it; ${qz.filter((z) => z > 0).length} above the common point)`,
  );
}
json.harm = {
  w: w6,
  b: Number((b - at).toPrecision(6)),
  ...(Object.keys(offsets).length > 0 ? { offsets } : {}),
};
json.provenance = {
  ...(holdOut ? { held_out_script: holdOut } : {}),
  ...(without.size > 0 ? { held_out_sources: [...without] } : {}),
  ...(comments !== 'none' ? { comments } : {}),
  ...(centre !== undefined ? { centred: centre } : {}),
  ...(questionsAdded ? { questions } : {}),
  ...(chinesePoint ? { chinese_point: CHINESE_BUDGET } : {}),
  train_prompts: sample.length,
  train_harmful: pos,
  calibration_prompts_gated: cz.length,
  calibration_point_logit: Number(at.toFixed(4)),
  per_group: PER_GROUP,
  lambda: LAMBDA,
  steps: STEPS,
  seconds: Math.round((performance.now() - t0) / 1000),
};
fs.writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
console.log(`wrote ${file}`);
