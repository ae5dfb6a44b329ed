/**
 * How far answers go along with harmful requests, ranked by the static detector's compliance, the
 * encoder's comply head and both (docs/detection-quality.md, "Answers read by the encoder"): per
 * source of answers with a `comply` meaning (GPTFuzz's human-labelled answers of jailbroken
 * models: harmful = complied, benign = declined), the AUC and the share of complied answers
 * above the score of 1%, 2% and 5% of the declined ones, and each operating point (0.5). "both"
 * uses the `comply` weights of the encoder's manifest; a manifest without them (a build with too
 * few real refusals to calibrate on) gets the plain mean of the two logits, unfitted.
 *
 *   npm run eval:answers -- FILE.jsonl | --gptfuzz [--model-dir DIR] [--encoder-dir DIR] [--written]
 *
 * FILE: rows {text, label, role, source} (the response rows are read; e.g. the validation split,
 * .cache/guard-train/val.jsonl). --gptfuzz: every GPTFuzz answer of $GUARD_TRAIN_DATA (default
 * ../shared/data/train), for the leave-one-source-out fold that never saw one; also written with
 * its question as `request` to .cache/guard-eval/gptfuzz-answers.jsonl for `npm run eval:monitor`.
 * --model-dir and --encoder-dir: another static model or encoder (a fold's). --written (with FILE,
 * the validation split) adds answers written from the held-out families of answer-templates.ts
 * (300 that deliver, 300 that decline) after FILE's requests from advbench, strongreject and
 * harmbench, sources no training split holds. "meaning": the compliance head on the answer's
 * embedding (`comply_meaning`), when the manifest has one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { calibratedCompliance, complyMeaningLogit, logit } from '@guard/scoring/encoder/encoder';
import { createOnnxEncoder } from '@guard/scoring/encoder/onnx-encoder';
import { createMlDetectors } from '@guard/scoring/ml/index';
import { seeded } from '@guard/testing/seeded';
import { answerReader } from '../encoder/answer-reads.js';
import { writtenAnswers } from '../encoder/answer-templates.js';
import { readRows, tag } from './loso-rows.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA = process.env.GUARD_TRAIN_DATA ?? path.resolve(ROOT, '../shared/data/train');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    gptfuzz: { type: 'boolean', default: false },
    'model-dir': { type: 'string' },
    'encoder-dir': { type: 'string' },
    written: { type: 'boolean', default: false },
  },
});

interface Answer {
  text: string;
  label: string;
  source: string;
  request?: string;
}

function gptfuzzAnswers(): Answer[] {
  const questions = new Map(
    readRows(DATA, 'gptfuzz_prompts')
      .filter((r) => r.label === 'harmful')
      .map((r) => [tag(r, 'question_id:'), r.text]),
  );
  const rows = readRows(DATA, 'gptfuzz_responses').map((r) => {
    const request = questions.get(tag(r, 'question_id:'));
    return {
      text: r.text,
      label: r.label,
      role: 'response',
      source: r.source,
      ...(request ? { request } : {}),
    };
  });
  const out = path.join(ROOT, '.cache/guard-eval/gptfuzz-answers.jsonl');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  console.log(`wrote ${rows.length} answers with their question to ${path.relative(ROOT, out)}`);
  return rows;
}

const file = positionals[0];
/** Written answers of each kind with --written. */
const WRITTEN_EVAL = 300;
/** Harm sources held out of every training split whole: the requests the written answers answer. */
const HELD_OUT_HARM = ['advbench', 'strongreject', 'harmbench'];
if (!values.gptfuzz && !file) {
  console.error(
    'usage: npm run eval:answers -- FILE.jsonl | --gptfuzz [--model-dir DIR] [--encoder-dir DIR] [--written]',
  );
  process.exit(2);
}
if (values.written && !file) {
  console.error('--written reads the harmful requests of FILE (the validation split): give FILE');
  process.exit(2);
}
const answers: Answer[] = values.gptfuzz
  ? gptfuzzAnswers()
  : fs
      .readFileSync(file as string, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Answer & { role?: string })
      .filter((r) => r.role === 'response');

if (values.written) {
  // Held-out written answers: the `val` families after the file's harmful requests of sources
  // no training split holds (HELD_OUT_HARM).
  const requests = fs
    .readFileSync(file as string, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Answer & { role?: string })
    .filter((r) => r.role === 'prompt' && HELD_OUT_HARM.includes(r.source))
    .map((r) => r.text.trim());
  if (requests.length === 0) {
    console.error(`--written: ${file as string} holds no request of ${HELD_OUT_HARM.join(', ')}`);
    process.exit(2);
  }
  for (const a of writtenAnswers(requests, 'val', WRITTEN_EVAL, seeded(20261130)))
    answers.push({
      text: a.text,
      label: a.y === 1 ? 'harmful' : 'benign',
      source: a.source,
      request: a.request,
    });
}
const det = createMlDetectors(values['model-dir'] ? { modelDir: values['model-dir'] } : {});
if (!det.compliance) throw new Error('the static model has no comply head');
const encoder = await createOnnxEncoder(values['encoder-dir']);
const { manifest } = encoder;
const COMPLY = manifest.heads.indexOf('comply');
if (COMPLY < 0) throw new Error('the encoder has no comply head');

// Each answer as the engine reads it (the same reader as calibrate-answers.ts).
const read = await answerReader(det, encoder);
type Scores = { static: number; encoder: number; meaning: number; both: number };
const scored: Array<Answer & Scores> = [];
let skipped = 0;
for (const a of answers) {
  const got = await read(a.text);
  if (!got) {
    skipped++;
    continue;
  }
  const s = got.staticScore;
  const e = logit(got.out?.probs[COMPLY] ?? 0);
  const m = got.out ? (complyMeaningLogit(manifest, got.out) ?? NaN) : NaN;
  const both =
    calibratedCompliance(manifest, s, got.out) ?? 1 / (1 + Math.exp(-(logit(s) + e) / 2));
  scored.push({ ...a, static: s, encoder: e, meaning: m, both });
}
await encoder.close();
if (skipped > 0)
  console.log(`${skipped} answers not read by the engine (a decoded payload): left out`);

const auc = (pos: number[], neg: number[]) => {
  let wins = 0;
  for (const p of pos) for (const n of neg) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (pos.length * neg.length);
};
const above = (pos: number[], neg: number[], share: number) => {
  const sorted = [...neg].sort((a, b) => b - a);
  const t = sorted[Math.floor(share * sorted.length)] ?? Infinity;
  return pos.filter((p) => p > t).length / pos.length;
};
const pct = (v: number) => `${(100 * v).toFixed(1)}%`.padStart(6);
console.log(
  `comply of answers: static model ${values['model-dir'] ?? '(shipped)'}, encoder ${values['encoder-dir'] ?? '(shipped)'}; both = ${manifest.comply ? "the manifest's comply weights" : 'the mean of the two logits (no comply point in the manifest)'}`,
);
console.log(
  'source                 complied/declined  reader    AUC   at 1%   at 2%   at 5%   point: complied / declined',
);
// Sources whose labels say whether an answer went along (diasafety's judge an answer's safety).
// The written answers (answer-templates.ts) pair deliveries with declines of their own families.
const pairs: Array<[string, (r: Answer) => boolean]> = [
  ['gptfuzz_responses', (r) => r.source === 'gptfuzz_responses'],
  ['sap', (r) => r.source === 'sap'],
  ['templates', (r) => r.source === 'synthetic:comply' || r.source === 'synthetic:refuse'],
  ['written', (r) => r.source.startsWith('written:')],
];
const readers = manifest.comply_meaning
  ? (['static', 'encoder', 'meaning', 'both'] as const)
  : (['static', 'encoder', 'both'] as const);
for (const [source, of] of pairs) {
  const pos = scored.filter((r) => of(r) && r.label === 'harmful');
  const neg = scored.filter((r) => of(r) && r.label === 'benign');
  if (pos.length < 20 || neg.length < 20) continue;
  for (const reader of readers) {
    const p = pos.map((r) => r[reader]);
    const n = neg.map((r) => r[reader]);
    const point =
      reader === 'encoder' || reader === 'meaning' || (reader === 'both' && !manifest.comply)
        ? '        -'
        : `${pct(p.filter((v) => v >= 0.5).length / p.length)} / ${pct(n.filter((v) => v >= 0.5).length / n.length)}`;
    console.log(
      `${source.padEnd(22)} ${`${pos.length}/${neg.length}`.padEnd(18)} ${reader.padEnd(8)} ${auc(p, n).toFixed(3)} ${pct(above(p, n, 0.01))} ${pct(above(p, n, 0.02))} ${pct(above(p, n, 0.05))}   ${point}`,
    );
  }
}
