/**
 * The point at which an answer goes along with its request, read by both models (`comply` in
 * encoder.json), from the calibration split of the training build only: every answer row with a
 * `comply` target (GPTFuzz's human-labelled answers of jailbroken models, SAP's judged answers, the
 * going-along and declining templates), each sent after a user turn as the engine's output phase
 * reads it (apply-answer.ts `answerRead`, mode all).
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-answers.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * A logistic regression of "complied" on the static detector's compliance logit, the encoder's
 * comply-head logit and, when the manifest has `comply_meaning` (train-comply-meaning.ts, run
 * before this), the logit of the compliance head on the answer's embedding; a reader whose weight
 * comes out negative is dropped and the fit redone (down to one reader). Its offset is shifted so
 * that BUDGET (5%) of the real refusals (the benign answers of sources not in
 * scripts/train/not-budgeted.json: the template refusals are easy and would sink the point among
 * them) reach 0.5, the point at which the static comply head is held (train_detectors.py
 * `BUDGETS`). Adds `comply` (and its provenance) to DIR's encoder.json,
 * which calibrate.ts wrote; with fewer than 50 real refusals (a build without GPTFuzz) it writes
 * none. Under a minute on one core (about 600 answers).
 */
import fs from 'node:fs';
import {
  complyMeaningLogit,
  logit,
  type EncoderManifest,
} from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { analysisDeps, calibrationArgs, NOT_BUDGETED, TARGET_INDEX } from './calib-prompts.js';
import { answerReader, calibAnswers, readAnswers } from './answer-reads.js';
import { fitNonNegative } from './logistic.js';

const BUDGET = 0.05;
/** Fewer real refusals (or complied answers) than this leave the manifest without a point. */
const MIN_REFUSALS = 50;

const { textsFile, dir, staticDir, manifestPath } = calibrationArgs('calibrate-answers.ts');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;
const COMPLY = manifest.heads.indexOf('comply');
if (COMPLY < 0) throw new Error(`${manifestPath}: the encoder has no comply head`);

const candidates = await calibAnswers(textsFile, TARGET_INDEX.comply);
const isRefusal = (r: { y: number; source: string }) => r.y === 0 && !NOT_BUDGETED.has(r.source);
const realRefusals = candidates.filter(isRefusal).length;
const complied = candidates.filter((r) => r.y === 1).length;
if (realRefusals < MIN_REFUSALS || complied < MIN_REFUSALS) {
  // A build without the answer sources (a leave-one-source-out fold without GPTFuzz): no point
  // to set, so the manifest keeps none and answers stay with the static detector.
  delete manifest.comply;
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
  console.log(
    `comply: not calibrated (${realRefusals} real refusals and ${complied} complied answers in the calibration split, ${MIN_REFUSALS} of each needed): answers stay with the static detector; wrote ${manifestPath}`,
  );
  process.exit(0);
}

const encoder = await createOnnxEncoder(dir);
/** The compliance head on the answer's embedding (train-comply-meaning.ts) enters the fit too. */
const byMeaning = manifest.comply_meaning !== undefined;
const t0 = performance.now();
const { rows, reads, skipped } = await readAnswers(
  candidates,
  await answerReader(analysisDeps(staticDir).detectors, encoder),
);
const x = reads.map((got) => [
  logit(got.staticScore),
  logit(got.out.probs[COMPLY] ?? 0),
  ...(byMeaning ? [complyMeaningLogit(manifest, got.out) ?? 0] : []),
]);
if (rows.length === 0) throw new Error(`${textsFile}: no answer of the calibration split was read`);
await encoder.close();
const refusals = (i: number) => {
  const r = rows[i];
  return r !== undefined && isRefusal(r);
};

// The three readers say much the same thing: no reader may count against what it reads.
const fit = fitNonNegative(
  x,
  rows.map((r) => r.y),
);
const [ws = 1, we = 1] = fit;
const wm = byMeaning ? (fit[2] ?? 0) : undefined;
const b0 = fit[fit.length - 1] ?? 0;
const z = x.map(([s = 0, e = 0, m = 0]) => ws * s + we * e + (wm ?? 0) * m + b0);
const real = z.filter((_, i) => refusals(i)).sort((p, q) => q - p);
const at = real[Math.floor(BUDGET * real.length)] as number;
const b = b0 - at;
const share = (pick: (i: number) => boolean, flagged: (i: number) => boolean) => {
  const idx = rows.flatMap((_, i) => (pick(i) ? [i] : []));
  return idx.filter(flagged).length / idx.length;
};
// At the point itself the score is 0.5, which the (inclusive) threshold flags.
const both = (i: number) => (z[i] as number) - at >= 0;
// The static detector alone holds its point at logit 0 (0.5).
const alone = (i: number) => (x[i]?.[0] ?? 0) >= 0;
const realComplied = (i: number) => rows[i]?.y === 1 && !rows[i]?.source.startsWith('synthetic:');

manifest.comply = {
  static: Number(ws.toPrecision(6)),
  encoder: Number(we.toPrecision(6)),
  ...(wm === undefined ? {} : { meaning: Number(wm.toPrecision(6)) }),
  b: Number(b.toPrecision(6)),
};
const pct = (v: number) => Number(v.toFixed(4));
manifest.provenance = {
  ...manifest.provenance,
  comply: {
    answers: rows.length,
    skipped_not_read: skipped,
    complied: rows.filter((r) => r.y === 1).length,
    real_refusals: real.length,
    calib_real_complied_flagged: pct(share(realComplied, both)),
    calib_real_complied_flagged_static: pct(share(realComplied, alone)),
    calib_refusals_flagged: pct(share(refusals, both)),
    calib_refusals_flagged_static: pct(share(refusals, alone)),
    seconds: Math.round((performance.now() - t0) / 1000),
  },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(
  `comply: static ${ws.toFixed(3)}, encoder ${we.toFixed(3)}${wm === undefined ? '' : `, meaning ${wm.toFixed(3)}`}, b ${b.toFixed(3)} (5% of ${real.length} real refusals); calibration: real complied answers ${(100 * share(realComplied, both)).toFixed(1)}% (static alone ${(100 * share(realComplied, alone)).toFixed(1)}%), refusals ${(100 * share(refusals, both)).toFixed(1)}% (static ${(100 * share(refusals, alone)).toFixed(1)}%); wrote ${manifestPath}`,
);
