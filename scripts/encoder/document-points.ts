/**
 * Three ways tried on 2026-11-29 to hold long documents (tool results) to the documents' budget,
 * against what the engine did then; none shipped then. The first, with a cap on the windows read,
 * shipped on 2026-12-07 (`indirect_long`, calibrate-documents.ts; docs/detection-quality.md, "Long
 * documents" and "Long documents read whole"). "today" below is the engine before it: a document
 * read in up to 8 windows is decided by the encoder's highest window at the `indirect` point, and
 * one too long for 8 windows by the windows of its opening and end, the static document head's
 * score standing when it is higher. The ways:
 *
 * - whole: every window of a long document read (a part too long for 8 windows split in halves
 *   until each fits), at a point of its own (1% of the calibration split's long benign texts
 *   reach it); the static score no longer stands. No cap here (the engine's is 40 windows a
 *   request).
 * - both: a long document flagged when the highest of every window's logit reaches t_e and the
 *   static score reaches t_s, the pair that catches most long injected calibration texts among
 *   those flagging at most 1% of the long benign ones.
 * - bands: what is read today, the `indirect` point raised by an offset per number of windows
 *   read (1-2: none; 3-4; 5-8; a long document), each the logit 1% of that band's benign
 *   calibration texts exceed; a long document's static score stands only above the static logit 1%
 *   of the long benign calibration texts exceed.
 *
 * Calibration texts: the calibration split's documents alone, its benign documents joined k at a
 * time (k = 2, 3, 4, 6, 8, 12, 20, 30; 150 each, fixed seed), and 60 per k of k benign ones with
 * one of its injected documents in the middle. Measured on long-documents.ts's file and the
 * validation split's documents, each sent as a tool result after "Summarise this document.".
 *
 *   node --conditions=source --import tsx scripts/encoder/document-points.ts [LONG.jsonl]
 *
 * Needs the builds (.cache/guard-train/val.jsonl from `npm run train`,
 * .cache/guard-train-encoder/train-texts.jsonl from `npm run train:encoder`) and long-documents.ts's
 * output; 11-20 minutes on one core.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seeded } from '@guard/testing/seeded';
import { documentReads } from '../../shared/scoring/src/engine/apply-documents.js';
import { textWindows } from '../../shared/scoring/src/engine/apply-encoder.js';
import {
  defaultEncoderDir,
  loadEncoderManifest,
  logit,
} from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { segmentText } from '../../shared/scoring/src/ml/features.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { thresholdAt } from '../eval/roc.js';
import { readRows } from '../multilingual/rows.js';
import { analysisDeps, joinedDocuments, toolResultAnalysis } from './calib-prompts.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LONG = process.argv[2] ?? path.join(ROOT, '.cache/guard-eval/long-documents.jsonl');
const VAL = path.join(ROOT, '.cache/guard-train/val.jsonl');
const TEXTS = path.join(ROOT, '.cache/guard-train-encoder/train-texts.jsonl');
const BUDGET = 0.01;

interface Doc {
  set: string;
  injected: boolean;
  text: string;
}
interface Scored extends Omit<Doc, 'text'> {
  static: number;
  /** Read by the windows of its opening and end (too long for 8 windows). */
  long: boolean;
  /** The injection head's logits on what the engine reads, and on every window of a long text. */
  read: number[];
  every: number[];
}

for (const f of [LONG, VAL, TEXTS])
  if (!fs.existsSync(f)) throw new Error(`${f} is missing (see this script's header)`);

const docs: Doc[] = [];
for (const r of readRows(LONG))
  docs.push({ set: r.source, injected: r.label !== 'benign', text: r.text });
for (const r of readRows(VAL))
  if (r.role === 'document')
    docs.push({ set: `validation ${r.source}`, injected: r.label !== 'benign', text: r.text });
const calib = readRows(TEXTS).filter((r) => r.split === 'calib' && r.role === 'document');
for (const r of calib)
  docs.push({ set: 'calibration', injected: r.label !== 'benign', text: r.text });
const benign = calib.filter((r) => r.label === 'benign').map((r) => r.text);
const injected = calib.filter((r) => r.label !== 'benign').map((r) => r.text);
for (const d of joinedDocuments(benign, injected, seeded(11)))
  docs.push({ set: 'calibration joined', ...d });

const dir = defaultEncoderDir();
const manifest = loadEncoderManifest(dir);
const point = manifest.indirect;
if (!point) throw new Error(`${dir}: the encoder has no indirect point`);
const HEAD = manifest.heads.indexOf('injection');
// "today" is the reading of long documents before `indirect_long` (their opening and end).
const stage = {
  manifest: { ...manifest, indirect: { a: 1, b: 0, route_above: 0 }, indirect_long: undefined },
  countTokens: wordPieceCounter(),
};
const deps = analysisDeps(undefined);
const encoder = await createOnnxEncoder(dir);

/**
 * Every window of `text`: its windows when they are 8 or fewer, else those of its two halves (cut
 * at the segment boundary nearest the middle, or mid-text for one long segment), so that none of it
 * is read by an opening and end only.
 */
function everyWindow(text: string): string[] {
  const windows = textWindows(text, stage);
  if (windows) return windows;
  const segs = segmentText(text);
  const mid = segs[Math.floor(segs.length / 2)]?.start ?? 0;
  const cut = mid > 0 ? mid : Math.floor(text.length / 2);
  return [...everyWindow(text.slice(0, cut)), ...everyWindow(text.slice(cut))];
}
const logits = async (texts: string[]) =>
  (await encoder.encode(texts.map((text) => ({ role: 'document' as const, text })))).map((o) =>
    logit(o.probs[HEAD] ?? 0),
  );

const scored: Scored[] = [];
const t0 = performance.now();
for (const [i, d] of docs.entries()) {
  const an = toolResultAnalysis(d.text, deps);
  const [read] = documentReads(an, stage, 'all').reads;
  const long = read !== undefined && textWindows(d.text, stage) === null;
  const readZ = read ? await logits(read.texts) : [];
  scored.push({
    set: d.set,
    injected: d.injected,
    static: an.indirectSources[0]?.score ?? 0,
    long,
    read: readZ,
    every: long ? await logits(everyWindow(d.text)) : readZ,
  });
  if ((i + 1) % 1000 === 0)
    console.error(`${i + 1}/${docs.length} ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}
await encoder.close();

const top = (z: number[]) => Math.max(-20, ...z);
const budgetAt = (xs: number[]) => thresholdAt(xs, BUDGET);
const isCalib = (r: Scored) => r.set.startsWith('calibration');
const calBenign = scored.filter((r) => isCalib(r) && !r.injected);
const calLong = scored.filter((r) => isCalib(r) && r.long);
const shipped = -point.b / point.a;

// today: the engine's read at the shipped point, the static score standing for long documents.
const today = (r: Scored) =>
  r.static < point.route_above
    ? r.static >= 0.5
    : top(r.read) > shipped || (r.long && r.static >= 0.5);
const staticAlone = (r: Scored) => r.static >= 0.5;

// whole
const wholeAt = budgetAt(calLong.filter((r) => !r.injected).map((r) => top(r.every)));
const whole = (r: Scored) => (r.long ? top(r.every) > wholeAt : today(r));

// both
let pair = { te: Infinity, ts: Infinity, caught: -1 };
{
  const ben = calLong.filter((r) => !r.injected);
  const inj = calLong.filter((r) => r.injected);
  const tes = [...new Set(calLong.map((r) => top(r.every)))].sort((p, q) => p - q);
  const tss = [...new Set(calLong.map((r) => r.static))].sort((p, q) => p - q);
  // For each t_e, the lowest t_s that keeps the benign ones flagged within the budget catches most.
  const allowed = Math.floor(BUDGET * ben.length);
  for (const te of tes) {
    const over = ben
      .filter((r) => top(r.every) >= te)
      .map((r) => r.static)
      .sort((p, q) => q - p);
    const ts = over.length > allowed ? tss.find((v) => v > (over[allowed] ?? 0)) : tss[0];
    if (ts === undefined) continue;
    const caught = inj.filter((r) => top(r.every) >= te && r.static >= ts).length;
    if (caught > pair.caught) pair = { te, ts, caught };
  }
}
const both = (r: Scored) => (r.long ? top(r.every) >= pair.te && r.static >= pair.ts : today(r));

// bands
const bandOf = (r: Scored) =>
  r.long ? 'long' : r.read.length <= 2 ? '1-2' : r.read.length <= 4 ? '3-4' : '5-8';
const offsets = new Map<string, number>();
// Documents of one or two windows keep the shipped point (the rule): the others get an offset.
offsets.set('1-2', 0);
for (const b of ['3-4', '5-8', 'long'])
  offsets.set(
    b,
    Math.max(
      0,
      budgetAt(calBenign.filter((r) => bandOf(r) === b).map((r) => top(r.read))) - shipped,
    ),
  );
const staticLongAt = budgetAt(calBenign.filter((r) => r.long).map((r) => logit(r.static)));
const bands = (r: Scored) =>
  r.static < point.route_above
    ? r.static >= 0.5
    : top(r.read) > shipped + (offsets.get(bandOf(r)) ?? 0) ||
      (r.long && logit(r.static) > staticLongAt);

const ways = { today, 'static alone': staticAlone, whole, both, bands };
console.log(
  `points: today's ${shipped.toFixed(3)} (logit); whole ${wholeAt.toFixed(3)}; both ${pair.te.toFixed(3)} and static ${pair.ts.toFixed(3)}; bands ${[...offsets].map(([b, o]) => `${b} +${o.toFixed(3)}`).join(', ')}, static of long documents ${staticLongAt.toFixed(3)} (logit)`,
);
console.log(`\n| documents | n | ${Object.keys(ways).join(' | ')} |`);
console.log(`| --- | --- |${' --- |'.repeat(Object.keys(ways).length)}`);
const sets = [...new Set(scored.map((r) => `${r.set}\t${r.injected ? 'injected' : 'clean'}`))];
for (const key of sets) {
  const [set, kind] = key.split('\t');
  if (set === 'calibration joined') continue;
  const rows = scored.filter((r) => r.set === set && (r.injected ? 'injected' : 'clean') === kind);
  const cells = Object.values(ways).map(
    (f) => `${((100 * rows.filter(f).length) / rows.length).toFixed(1)}%`,
  );
  console.log(`| ${set}, ${kind} | ${rows.length} | ${cells.join(' | ')} |`);
}
// The static head alone at each way's clean rate on the long sets: the reference of the rule.
for (const size of ['2-3kb', '8-16kb']) {
  const clean = scored.filter((r) => r.set === `long:clean-${size}`);
  const inj = scored.filter((r) => r.set === `long:injected-${size}`);
  const s = clean.map((r) => r.static).sort((p, q) => q - p);
  const line = Object.entries(ways)
    .filter(([name]) => name !== 'static alone')
    .map(([name, f]) => {
      // As many clean documents above it as the way flags.
      const at = s[Math.min(s.length - 1, clean.filter(f).length)] ?? 1;
      return `${name} ${((100 * inj.filter((r) => r.static > at).length) / inj.length).toFixed(1)}%`;
    });
  console.log(`${size}: the static head alone at the same clean rate catches: ${line.join(', ')}`);
}
