/**
 * The encoder's point for indirect prompt injection (`indirect` in encoder.json), from the
 * calibration split of the training build only: every document row of it (BIPIA e-mails, tables,
 * code and abstracts, with and without injected instructions; the synthetic injected documents,
 * document slices and e-mails with instructions for their human reader), each sent as a tool
 * result and read as the engine reads it (apply-documents.ts `documentReads`, mode all: windows).
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-documents.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * Platt scaling of the injection head's highest logit over a document's windows (injected = 1),
 * shifted so that BUDGET (1%) of the benign documents reach the ipi threshold 0.5, as the static
 * document head is held (train_detectors.py); the cascade's routing point is the static score that
 * ROUTE_KEEP (99%) of the injected documents reach. Then the point of long documents read whole
 * (`indirect_long`): the same slope, the offset at which 1% of the long benign texts read whole
 * reach 0.5: the calibration split's benign documents joined k at a time (calib-prompts.ts
 * `joinedDocuments`, fixed seed) and any of its own documents too long for MAX_WINDOWS windows.
 * Adds `indirect` and `indirect_long` (and their provenance) to DIR's encoder.json, which
 * calibrate.ts wrote. About 5 minutes on one core (700 documents, ~2,500 windows; then some 1,700
 * joined texts, ~25,000 windows).
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { documentReads } from '../../shared/scoring/src/engine/apply-documents.js';
import type { RequestAnalysis } from '../../shared/scoring/src/engine/evaluate-local.js';
import { logit, type EncoderManifest } from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { seeded } from '../../shared/testing/src/seeded.js';
import { fitLogistic } from './logistic.js';
import {
  analysisDeps,
  calibrationArgs,
  JOINED_DOCUMENTS,
  joinedDocuments,
  toolResultAnalysis,
} from './calib-prompts.js';

const BUDGET = 0.01;
const ROUTE_KEEP = 0.99;

const { textsFile, dir, staticDir, manifestPath } = calibrationArgs('calibrate-documents.ts');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;
const INJECTION = manifest.heads.indexOf('injection');
if (INJECTION < 0) throw new Error(`${manifestPath}: the encoder has no injection head`);

const rows: Array<{ text: string; y: number }> = [];
for await (const line of readline.createInterface({ input: fs.createReadStream(textsFile) })) {
  if (!line.trim()) continue;
  const r = JSON.parse(line) as { text: string; role: string; split: string; label: string };
  if (r.role === 'document' && r.split === 'calib')
    rows.push({ text: r.text, y: r.label === 'benign' ? 0 : 1 });
}
if (rows.filter((r) => r.y === 0).length < 100 || rows.filter((r) => r.y === 1).length < 100)
  throw new Error(`${textsFile}: too few calibration documents (${rows.length})`);

const encoder = await createOnnxEncoder(dir);
const deps = analysisDeps(staticDir);
// Reads every document whole, in windows: a point of 1 routes nothing away. The short point is
// set on what the engine reads without a long point (one from an earlier run is ignored here).
const stage = {
  manifest: { ...manifest, indirect: { a: 1, b: 0, route_above: 0 }, indirect_long: undefined },
  countTokens: wordPieceCounter(),
};

const z: number[] = [];
const statics: number[] = [];
/** Each calibration document's analysis, read again below for the long point. */
const analyses: RequestAnalysis[] = [];
let windows = 0;
const t0 = performance.now();
for (const [i, r] of rows.entries()) {
  const an = toolResultAnalysis(r.text, deps);
  analyses.push(an);
  statics.push(an.indirectSources[0]?.score ?? 0);
  const [read] = documentReads(an, stage, 'all').reads;
  const texts = read?.texts ?? [];
  windows += texts.length;
  const out = await encoder.encode(texts.map((text) => ({ role: 'document' as const, text })));
  z.push(Math.max(-20, ...out.map((o) => logit(o.probs[INJECTION] ?? 0))));
  if ((i + 1) % 200 === 0)
    console.log(`${i + 1}/${rows.length} ${((performance.now() - t0) / 1000).toFixed(0)}s`);
}
const seconds = Math.round((performance.now() - t0) / 1000);

// Long documents read whole: every window, at a point of their own.
const longStage = { ...stage, manifest: { ...stage.manifest, indirect_long: { b: 0 } } };
const longTexts: Array<{ text: string; injected: boolean; an?: RequestAnalysis }> = [
  ...rows.map((r, i) => ({ text: r.text, injected: r.y === 1, an: analyses[i] })),
  ...joinedDocuments(
    rows.filter((r) => r.y === 0).map((r) => r.text),
    rows.filter((r) => r.y === 1).map((r) => r.text),
    seeded(11),
  ),
];
const longZ: Array<{ z: number; injected: boolean }> = [];
let longWindows = 0;
let tooLong = 0;
for (const [i, d] of longTexts.entries()) {
  const an = d.an ?? toolResultAnalysis(d.text, deps);
  const { reads, cut } = documentReads(an, longStage, 'all');
  tooLong += cut;
  const [read] = reads;
  if (!read?.long) continue;
  longWindows += read.texts.length;
  const out = await encoder.encode(read.texts.map((text) => ({ role: 'document' as const, text })));
  longZ.push({
    z: Math.max(-20, ...out.map((o) => logit(o.probs[INJECTION] ?? 0))),
    injected: d.injected,
  });
  if ((i + 1) % 200 === 0)
    console.log(
      `long ${i + 1}/${longTexts.length} ${((performance.now() - t0) / 1000).toFixed(0)}s`,
    );
}
await encoder.close();

// Platt scaling of the logit (the slope; the offset is set by the point below).
const n = rows.length;
const pos = rows.filter((r) => r.y === 1).length;
const [a = 1] = fitLogistic(
  z.map((v) => [v]),
  rows.map((r) => r.y),
);
const benign = z.filter((_, i) => rows[i]?.y === 0).sort((p, q) => q - p);
const at = benign[Math.floor(BUDGET * benign.length)] as number;
const b = -a * at;
const injected = statics.filter((_, i) => rows[i]?.y === 1).sort((p, q) => q - p);
const routeAbove = injected[Math.floor(ROUTE_KEEP * (injected.length - 1))] as number;
const share = (xs: number[], ys: number, pick: (i: number) => boolean) =>
  xs.filter((_, i) => rows[i]?.y === ys && pick(i)).length / (ys === 1 ? pos : n - pos);
const flagged = (i: number) => a * (z[i] as number) + b > 0;
const routed = (i: number) => (statics[i] as number) >= routeAbove;

manifest.indirect = {
  a: Number(a.toPrecision(6)),
  b: Number(b.toPrecision(6)),
  route_above: Number(routeAbove.toPrecision(6)),
};
manifest.provenance = {
  ...manifest.provenance,
  indirect: {
    documents: n,
    injected: pos,
    windows,
    point_logit: Number(at.toFixed(4)),
    calib_injected_flagged: Number(share(z, 1, flagged).toFixed(4)),
    calib_benign_flagged: Number(share(z, 0, flagged).toFixed(4)),
    calib_benign_routed: Number(share(z, 0, routed).toFixed(4)),
    calib_injected_flagged_routed: Number(share(z, 1, (i) => routed(i) && flagged(i)).toFixed(4)),
    seconds,
  },
};
const longBenign = longZ
  .filter((r) => !r.injected)
  .map((r) => r.z)
  .sort((p, q) => q - p);
const longInjected = longZ.filter((r) => r.injected);
if (longBenign.length < 100)
  throw new Error(`${textsFile}: too few long benign calibration texts (${longBenign.length})`);
const longAt = longBenign[Math.floor(BUDGET * longBenign.length)] as number;
const longB = Number((-a * longAt).toPrecision(6));
manifest.indirect_long = { b: longB };
manifest.provenance = {
  ...manifest.provenance,
  indirect_long: {
    joined: `the calibration split's documents, ${JOINED_DOCUMENTS.join('/')} at a time, seed 11`,
    texts: longZ.length,
    // texts needing more windows than a request reads: left at their opening and end, not fitted
    past_budget: tooLong,
    injected: longInjected.length,
    windows: longWindows,
    point_logit: Number(longAt.toFixed(4)),
    calib_long_injected_flagged: Number(
      (longInjected.filter((r) => r.z > longAt).length / Math.max(1, longInjected.length)).toFixed(
        4,
      ),
    ),
    calib_long_benign_flagged_at_indirect: Number(
      (longBenign.filter((z) => z > at).length / longBenign.length).toFixed(4),
    ),
    seconds: Math.round((performance.now() - t0) / 1000) - seconds,
  },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(
  `indirect: a ${a.toFixed(3)}, b ${b.toFixed(3)} (1% of ${n - pos} benign documents at logit ${at.toFixed(3)}), route_above ${routeAbove.toPrecision(3)}; calibration: injected flagged ${(100 * share(z, 1, flagged)).toFixed(1)}%, benign routed ${(100 * share(z, 0, routed)).toFixed(1)}%; indirect_long: b ${longB} (1% of ${longBenign.length} long benign texts at logit ${longAt.toFixed(3)}); wrote ${manifestPath}`,
);
