/**
 * Exploratory, not served: would an answer's own harm be read better with more readers than the
 * static detector and the encoder's harm head on the answer as a response (`answer_harm`)? Adds
 * the encoder's harm head on the same text read as a user prompt (the reading the harm of a
 * request uses, trained on many more harmful rows) and the static detector's harm of it as a
 * prompt. Each blend is fitted on the calibration split's answers only (fitNonNegative), its
 * offset set so that 1% of their budgeted benign answers reach 0.5 (as calibrate-answer-harm.ts
 * does; an answer longer than one read keeps its static score when that is higher), then applied
 * unchanged to FILES (rows with `text`, `label`, `source`, judged alone as answers).
 *
 *   node --conditions=source --import tsx scripts/eval/answer-harm-readings.ts TRAIN_TEXTS.jsonl ENCODER_DIR FILE...
 */
import fs from 'node:fs';
import path from 'node:path';
import { fitsOneRead } from '../../shared/scoring/src/engine/apply-encoder.js';
import { logit, type EncoderManifest } from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { analysisDeps, NOT_BUDGETED, TARGET_INDEX } from '../encoder/calib-prompts.js';
import { answerAnalyser, calibAnswers } from '../encoder/answer-reads.js';
import { fitNonNegative } from '../encoder/logistic.js';

const [textsFile, dir, ...files] = process.argv.slice(2);
if (!textsFile || !dir) {
  console.error('usage: answer-harm-readings.ts TRAIN_TEXTS.jsonl ENCODER_DIR FILE...');
  process.exit(2);
}
const manifest = JSON.parse(
  fs.readFileSync(path.join(dir, 'encoder.json'), 'utf8'),
) as EncoderManifest;
const HARM = manifest.heads.indexOf('harm');
const COMPLY = manifest.heads.indexOf('comply');
const deps = analysisDeps(undefined);
const analyse = await answerAnalyser(deps.detectors, 'harm');
const encoder = await createOnnxEncoder(dir);
const stage = { manifest, countTokens: wordPieceCounter() };

interface Row {
  source: string;
  y: number;
  budgeted: boolean;
  partial: boolean;
  /**
   * Logits: static (response), encoder (response), encoder (prompt), static (prompt), then the
   * lower of the encoder's harm as a prompt and its compliance (a topic that reads as harmful
   * AND an answer that goes along: harm in context, with the answer's own words for the request).
   */
  f: number[];
}

async function read(text: string): Promise<Omit<Row, 'source' | 'y' | 'budgeted'> | null> {
  const got = analyse(text);
  if (!got) return null;
  const { item, staticScore: s } = got;
  const [asAnswer, asPrompt] = await encoder.encode([item, { role: 'prompt', text: item.text }]);
  if (!asAnswer || !asPrompt) return null;
  const sp = deps.detectors.harm(item.text, 'prompt').any.score;
  return {
    partial: !fitsOneRead(item.text, stage),
    f: [
      logit(s),
      logit(asAnswer.probs[HARM] ?? 0),
      logit(asPrompt.probs[HARM] ?? 0),
      logit(sp),
      Math.min(logit(asPrompt.probs[HARM] ?? 0), logit(asAnswer.probs[COMPLY] ?? 0)),
    ],
  };
}

const t0 = performance.now();
const calib: Row[] = [];
for (const r of await calibAnswers(textsFile, TARGET_INDEX.harm)) {
  const got = await read(r.text);
  if (got)
    calib.push({
      ...got,
      source: r.source,
      y: r.y,
      budgeted: r.y === 0 && !NOT_BUDGETED.has(r.source),
    });
}
console.log(
  `calibration: ${calib.length} answers read in ${Math.round((performance.now() - t0) / 1000)} s`,
);

const VARIANTS: Record<string, number[]> = {
  'static + encoder (as shipped)': [0, 1],
  '+ encoder as prompt': [0, 1, 2],
  '+ encoder as prompt + static as prompt': [0, 1, 2, 3],
  'static + encoder as prompt': [0, 2],
  '+ min(harm as prompt, comply)': [0, 1, 4],
};

interface Blend {
  cols: number[];
  w: number[];
  b: number;
}
function fitBlend(cols: number[]): Blend {
  const fit = fitNonNegative(
    calib.map((r) => cols.map((c) => r.f[c] ?? 0)),
    calib.map((r) => r.y),
  );
  const w = fit.slice(0, cols.length);
  const b0 = fit[cols.length] ?? 0;
  const z = (r: Row) => cols.reduce((a, c, k) => a + (w[k] ?? 0) * (r.f[c] ?? 0), b0);
  const inBudget = calib.filter((r) => r.budgeted);
  const alone = (r: Row) => (r.f[0] ?? 0) >= 0;
  const kept = inBudget.filter((r) => r.partial && alone(r)).length;
  const rest = inBudget
    .filter((r) => !(r.partial && alone(r)))
    .map(z)
    .sort((p, q) => q - p);
  const at = rest[Math.max(0, Math.floor(0.01 * inBudget.length) - kept)] ?? 0;
  return { cols, w, b: b0 - at };
}
const flagged = (bl: Blend, r: Pick<Row, 'f' | 'partial'>) =>
  bl.cols.reduce((a, c, k) => a + (bl.w[k] ?? 0) * (r.f[c] ?? 0), bl.b) >= 0 ||
  (r.partial && (r.f[0] ?? 0) >= 0);

const blends = Object.fromEntries(
  Object.entries(VARIANTS).map(([name, cols]) => [name, fitBlend(cols)]),
);
for (const [name, bl] of Object.entries(blends))
  console.log(`${name}: weights ${bl.w.map((v) => v.toFixed(3)).join(', ')}, b ${bl.b.toFixed(3)}`);

function table(
  title: string,
  rows: Array<Pick<Row, 'f' | 'partial' | 'source'> & { label: string }>,
) {
  const groups = [...new Set(rows.map((r) => `${r.source}:${r.label}`))].sort();
  console.log(`\n${title}`);
  console.log(['group', 'n', 'static alone', ...Object.keys(blends)].join(' | '));
  for (const g of groups) {
    const in_ = rows.filter((r) => `${r.source}:${r.label}` === g);
    const pct = (f: (r: (typeof in_)[number]) => boolean) =>
      `${((100 * in_.filter(f).length) / in_.length).toFixed(1)}%`;
    console.log(
      [
        g,
        in_.length,
        pct((r) => (r.f[0] ?? 0) >= 0),
        ...Object.values(blends).map((bl) => pct((r) => flagged(bl, r))),
      ].join(' | '),
    );
  }
}
table(
  'calibration split (what the points were set on)',
  calib.map((r) => ({ ...r, label: r.y === 1 ? 'harmful' : 'benign' })),
);
for (const file of files) {
  const rows: Array<Pick<Row, 'f' | 'partial' | 'source'> & { label: string }> = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { text: string; label: string; source?: string; role?: string };
    if (r.role && r.role !== 'response') continue;
    const got = await read(r.text);
    if (got) rows.push({ ...got, source: r.source ?? path.basename(file), label: r.label });
  }
  table(file, rows);
}
await encoder.close();
process.exit(0);
