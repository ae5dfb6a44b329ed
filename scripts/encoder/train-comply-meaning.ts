/**
 * Compliance by meaning (`comply_meaning` in encoder.json): a logistic head on the encoder's
 * embedding of an answer, "goes along with the harmful request it answers" against "declines",
 * read from the same encoder read as the comply head, so it costs one dot product at serving. The comply
 * heads (static and encoder) were trained on answers that announce themselves ("Sure, here is",
 * "I'm sorry"), and a plain answer that just delivers ("1. ... 2. ...") reads to them as neither;
 * a head on the embedding reads what the answer is about and how it is laid out.
 *
 * Rows: the training split's answers with a `comply` target (GPTFuzz's and SAP's judged answers,
 * the going-along and declining templates of scripts/train/synthetic.ts), and answers written
 * for this head (answer-templates.ts: plain deliveries and declines without a stock apology, after
 * harmful requests of the training split), at most PER_GROUP per source and target, each read as
 * the engine's output phase reads an answer (answer-reads.ts). The head is fitted with the
 * regularisation of the multilingual reader's (fixed before any number was looked at); its
 * intercept is not a point: calibrate-answers.ts weighs its logit with the other two and sets the
 * point on the calibration split.
 *
 *   node --conditions=source --import tsx scripts/encoder/train-comply-meaning.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR] [--without SOURCE,...]
 *
 * --without leaves sources out (a leave-one-source-out fold). Writes `comply_meaning` (and its
 * provenance) into DIR/encoder.json. About 2 minutes on one core (5,000 answers).
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { linearLogit, type EncoderManifest } from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { seeded, shuffle } from '../../shared/testing/src/seeded.js';
import { answerReader } from './answer-reads.js';
import { writtenAnswers } from './answer-templates.js';
import { analysisDeps, NOT_BUDGETED, TARGET_INDEX, type CalibRow } from './calib-prompts.js';
import { fitEmbeddingHead } from './logistic.js';

const PER_GROUP = 1000;
/** Answers written for each of the two template kinds (deliveries, declines). */
const WRITTEN = 800;
const SEED = 20261129;

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { without: { type: 'string' } },
});
const [textsFile, dir, staticDir] = positionals;
if (!textsFile || !dir) {
  console.error(
    'usage: train-comply-meaning.ts TRAIN_TEXTS.jsonl MODEL_DIR [STATIC_DIR] [--without SOURCE,...]',
  );
  process.exit(2);
}
const without = new Set(opts.without?.split(',').filter(Boolean) ?? []);
const manifestPath = path.join(dir, 'encoder.json');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;

interface Row {
  text: string;
  y: number;
  source: string;
}
const groups = new Map<string, Row[]>();
const add = (r: Row) => {
  const k = `${r.source}|${r.y}`;
  (groups.get(k) ?? groups.set(k, []).get(k))?.push(r);
};
/** Harmful requests of the training split in English, for the written answers to answer. */
const requests: string[] = [];
for await (const line of readline.createInterface({ input: fs.createReadStream(textsFile) })) {
  if (!line.trim()) continue;
  const r = JSON.parse(line) as CalibRow;
  if (r.split !== 'train' || without.has(r.source)) continue;
  const comply = r.targets[TARGET_INDEX.comply] ?? -1;
  if (r.role === 'response' && comply >= 0) add({ text: r.text, y: comply, source: r.source });
  else if (
    r.role === 'prompt' &&
    r.label === 'harmful' &&
    r.targets[TARGET_INDEX.harm] === 1 &&
    !NOT_BUDGETED.has(r.source) &&
    !r.source.startsWith('synthetic:') &&
    r.text.length < 300 &&
    // eslint-disable-next-line no-control-regex
    /^[\x00-\x7f]*$/.test(r.text)
  )
    requests.push(r.text.trim());
}
if (requests.length === 0)
  throw new Error(`${textsFile}: no harmful requests in its training split`);
const rand = seeded(SEED);
for (const a of writtenAnswers(requests, 'train', WRITTEN, rand)) add(a);
const sample: Row[] = [];
/** Answers drawn per source and target. */
const counts: Record<string, number> = {};
for (const [k, rows] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
  const drawn = shuffle(rows, rand).slice(0, PER_GROUP);
  sample.push(...drawn);
  counts[k] = drawn.length;
}
console.log(`comply by meaning: ${sample.length} answers ${JSON.stringify(counts)}`);

const t0 = performance.now();
const encoder = await createOnnxEncoder(dir);
const read = await answerReader(analysisDeps(staticDir).detectors, encoder);
const X: Float32Array[] = [];
const ys: number[] = [];
let skipped = 0;
for (const [i, r] of sample.entries()) {
  const got = await read(r.text);
  // An answer the engine would not read (a decoded payload in it) is not learnt from.
  if (!got?.out) {
    skipped++;
    continue;
  }
  X.push(got.out.embedding);
  ys.push(r.y);
  if (i % 500 === 0) process.stdout.write(`\r${i}/${sample.length} read`);
}
process.stdout.write('\n');
await encoder.close();
const complied = ys.filter((y) => y === 1).length;
if (complied === 0 || complied === ys.length)
  throw new Error(
    `${textsFile}: ${complied} complied and ${ys.length - complied} declined answers read: a head needs both`,
  );
// fitEmbeddingHead's defaults: the multilingual reader's regularisation.
const head = fitEmbeddingHead(X, ys, { dims: manifest.dims });
const z = X.map((e) => linearLogit(head, e));
const fitted = z.filter((v, i) => (v >= 0 ? 1 : 0) === ys[i]).length / z.length;

manifest.comply_meaning = {
  w: head.w.map((v) => Number(v.toPrecision(6))),
  b: Number(head.b.toPrecision(6)),
};
manifest.provenance = {
  ...manifest.provenance,
  comply_meaning: {
    answers: X.length,
    skipped_not_read: skipped,
    groups: counts,
    ...(without.size > 0 ? { held_out_sources: [...without] } : {}),
    fitted_accuracy: Number(fitted.toFixed(4)),
    seconds: Math.round((performance.now() - t0) / 1000),
  },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(
  `comply by meaning: ${X.length} answers read, fitted accuracy ${(100 * fitted).toFixed(1)}% (on its own rows, not a quality number); wrote ${manifestPath}`,
);
