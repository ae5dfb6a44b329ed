/**
 * The point at which a model output is harmful on its own text, read by both models
 * (`answer_harm` in encoder.json), from the calibration split of the training build only: every
 * answer row with a harm target (DiaSafety's judged replies, GPTFuzz's human-labelled answers of
 * jailbroken models, SAP's judged answers, RTP-LX's completions), each sent after a neutral user
 * turn as the engine's output phase reads it (apply-answer.ts `readableAnswer`: the answer as a
 * response, its first 96 and last 30 tokens).
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-answer-harm.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * A logistic regression of "harmful" on the static detector's overall harm logit of the answer and
 * the encoder's harm-head logit (a reader whose weight comes out negative is dropped and the fit
 * redone on the other); its offset is shifted so that BUDGET (1%) of the benign answers
 * of sources in the budgets (not in scripts/train/not-budgeted.json: RTP-LX's benign completions
 * are contrast cases) reach 0.5, as the harm of a request is held to 1% of ordinary prompts.
 * `route_above`, the static score from which the cascade reads an answer: the lowest of
 * ROUTE_SHARES (shares of those benign answers, from the top of their static scores) at which the
 * cascade flags at least as many of the calibration split's harmful answers as reading every
 * answer does, less ROUTE_LOSS. A build with fewer than MIN_ROWS benign or harmful answers
 * writes none. Adds `answer_harm` (and its provenance) to DIR's encoder.json. About a minute on
 * one core (about 1,800 answers).
 */
import fs from 'node:fs';
import { logit, type EncoderManifest } from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { fitsOneRead } from '../../shared/scoring/src/engine/apply-encoder.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { analysisDeps, calibrationArgs, NOT_BUDGETED, TARGET_INDEX } from './calib-prompts.js';
import { answerReader, calibAnswers, readAnswers } from './answer-reads.js';
import { fitNonNegative } from './logistic.js';

const BUDGET = 0.01;
const ROUTE_SHARES = [0.05, 0.1, 0.2, 0.3, 0.5, 1];
/** Harmful calibration answers the cascade may miss against reading every answer, at most. */
const ROUTE_LOSS = 0.01;
const MIN_ROWS = 50;

const { textsFile, dir, staticDir, manifestPath } = calibrationArgs('calibrate-answer-harm.ts');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;
const HARM = manifest.heads.indexOf('harm');
if (HARM < 0) throw new Error(`${manifestPath}: the encoder has no harm head`);

const candidates = await calibAnswers(textsFile, TARGET_INDEX.harm);
const budgeted = (r: { y: number; source: string }) => r.y === 0 && !NOT_BUDGETED.has(r.source);
const benign = candidates.filter(budgeted).length;
const harmful = candidates.filter((r) => r.y === 1).length;
if (benign < MIN_ROWS || harmful < MIN_ROWS) {
  delete manifest.answer_harm;
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
  console.log(
    `answer_harm: not calibrated (${benign} benign answers in the budgets and ${harmful} harmful ones in the calibration split, ${MIN_ROWS} of each needed): answers' own harm stays with the static detector; wrote ${manifestPath}`,
  );
  process.exit(0);
}

const encoder = await createOnnxEncoder(dir);
const t0 = performance.now();
// An answer the engine would not read (a decoded payload in it) keeps the static harm.
const { rows, reads, skipped } = await readAnswers(
  candidates,
  await answerReader(analysisDeps(staticDir).detectors, encoder, 'harm'),
);
const statics = reads.map((got) => got.staticScore);
// Longer than one read: served, the blend can only raise the static score (apply-answer.ts).
const stage = { manifest, countTokens: wordPieceCounter() };
const partial = rows.map((r) => !fitsOneRead(r.text, stage));
const x = reads.map((got) => [logit(got.staticScore), logit(got.out.probs[HARM] ?? 0)]);
await encoder.close();
if (rows.length === 0) throw new Error(`${textsFile}: no answer of the calibration split was read`);

// Neither reader may count against what it reads (a negative weight is dropped, the fit redone).
const [ws = 1, we = 1, b0 = 0] = fitNonNegative(
  x,
  rows.map((r) => r.y),
);
const z = x.map(([s = 0, e = 0]) => ws * s + we * e + b0);
const inBudget = rows.flatMap((r, i) => (budgeted(r) ? [i] : []));
const sortedDown = (idx: number[], v: (i: number) => number) => idx.map(v).sort((p, q) => q - p);
const alone = (i: number) => (statics[i] ?? 0) >= 0.5;
// The budget counts what is served: a long answer the static score flags stays flagged, so the
// point is set on the other benign answers, with the budget those leave.
const kept = inBudget.filter((i) => partial[i] && alone(i)).length;
const rest = inBudget.filter((i) => !(partial[i] && alone(i)));
const at =
  sortedDown(rest, (i) => z[i] as number)[
    Math.max(0, Math.floor(BUDGET * inBudget.length) - kept)
  ] ?? 0;
const b = b0 - at;
// At the point itself the score is 0.5, which the (inclusive) threshold flags.
const both = (i: number) => (z[i] as number) - at >= 0 || (partial[i] === true && alone(i));
const positives = rows.flatMap((r, i) => (r.y === 1 ? [i] : []));
const share = (idx: number[], flagged: (i: number) => boolean) =>
  idx.filter(flagged).length / Math.max(1, idx.length);
const everyAnswer = share(positives, both);
const benignStatic = sortedDown(inBudget, (i) => statics[i] ?? 0);
/** The cascade reading answers from `above`: not read, the static score stands at its point 0.5. */
const cascadeFrom = (above: number) => (i: number) =>
  (statics[i] ?? 0) >= above ? both(i) : alone(i);
let routeShare = 1;
let routeAbove = 0;
for (const s of ROUTE_SHARES) {
  const above = s >= 1 ? 0 : (benignStatic[Math.floor(s * benignStatic.length)] ?? 0);
  if (share(positives, cascadeFrom(above)) >= everyAnswer - ROUTE_LOSS) {
    routeShare = s;
    routeAbove = above;
    break;
  }
}
const cascadeFlag = cascadeFrom(routeAbove);

manifest.answer_harm = {
  static: Number(ws.toPrecision(6)),
  encoder: Number(we.toPrecision(6)),
  b: Number(b.toPrecision(6)),
  route_above: Number(routeAbove.toPrecision(6)),
};
const pct = (v: number) => Number(v.toFixed(4));
const bySource = (flag: (i: number) => boolean) =>
  Object.fromEntries(
    [...new Set(rows.map((r) => `${r.source}:${r.y}`))].sort().map((k) => [
      k,
      pct(
        share(
          rows.flatMap((r, i) => (`${r.source}:${r.y}` === k ? [i] : [])),
          flag,
        ),
      ),
    ]),
  );
manifest.provenance = {
  ...manifest.provenance,
  answer_harm: {
    answers: rows.length,
    skipped_not_read: skipped,
    harmful: positives.length,
    benign_budgeted: inBudget.length,
    route_share_benign: routeShare,
    calib_harmful_flagged_all: pct(everyAnswer),
    calib_harmful_flagged_cascade: pct(share(positives, cascadeFlag)),
    calib_harmful_flagged_static: pct(share(positives, alone)),
    calib_benign_flagged_cascade: pct(share(inBudget, cascadeFlag)),
    calib_benign_flagged_static: pct(share(inBudget, alone)),
    by_source_cascade: bySource(cascadeFlag),
    seconds: Math.round((performance.now() - t0) / 1000),
  },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(
  `answer_harm: static ${ws.toFixed(3)}, encoder ${we.toFixed(3)}, b ${b.toFixed(3)} (1% of ${inBudget.length} benign answers), route_above ${routeAbove.toFixed(4)} (top ${100 * routeShare}% of them); calibration: harmful answers ${(100 * share(positives, cascadeFlag)).toFixed(1)}% in the cascade (every answer read ${(100 * everyAnswer).toFixed(1)}%, static alone ${(100 * share(positives, alone)).toFixed(1)}%), benign ${(100 * share(inBudget, cascadeFlag)).toFixed(1)}% (static ${(100 * share(inBudget, alone)).toFixed(1)}%); wrote ${manifestPath}`,
);
