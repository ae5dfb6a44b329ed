/**
 * The encoder's offset for the harm of long inputs read sentence by sentence (`harm_parts` in
 * encoder.json), from the calibration split of the training build only.
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-harm-parts.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * A long input (read in windows) gets its harm from its most harmful sentences too: each is read
 * by both models with the `harm` blend (calibrate.ts), at an offset of its own instead of the
 * blend's. The offset is set so that BUDGET (1%) of the long benign calibration prompts have a
 * sentence that reaches the default violation threshold 0.5, on each of two sets, the stricter
 * offset kept: LONG_TEXTS prompts joined from the ordinary benign calibration prompts (LONG_MIN to
 * LONG_MAX characters, fixed seed; as calibrate.ts holds the jailbreak parts) and the calibration
 * split's own benign prompts too long to read whole. Sentences are chosen as the engine chooses
 * them (evaluate-local.ts `sentencesOf`, apply-encoder.ts `harmSentenceReads`), through the
 * preset Basic Content Safety. Also reported (not fitted on; not a quality claim): harmful
 * calibration requests between two runs of ordinary prompts, and long calibration jailbreaks,
 * caught by their sentences and by the static detector. Adds `harm_parts` (and its provenance)
 * to DIR's encoder.json, which calibrate.ts wrote. A few minutes on one core.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createPolicyCompiler } from '../../shared/scoring/src/engine/compiled-policy.js';
import { encoderReads, harmSentenceReads } from '../../shared/scoring/src/engine/apply-encoder.js';
import { analyseRequest } from '../../shared/scoring/src/engine/evaluate-local.js';
import {
  loadEncoderManifest,
  logit,
  type EncoderManifest,
} from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { MAX_SEGMENT_CHARS } from '../../shared/scoring/src/ml/features.js';
import { createMlDetectors } from '../../shared/scoring/src/ml/index.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { presetScoreFields } from '../../shared/testing/src/score-request.js';
import { seeded } from '../../shared/testing/src/seeded.js';
import { calibPrompts, NOT_BUDGETED, promptJoiner, TARGET_INDEX } from './calib-prompts.js';

const BUDGET = 0.01;
const LONG_TEXTS = 1000;
const LONG_MIN = 500;
const LONG_MAX = 4000;

const [textsFile, dir, staticDir] = process.argv.slice(2);
if (!textsFile || !dir) {
  console.error('usage: calibrate-harm-parts.ts TRAIN_TEXTS.jsonl MODEL_DIR [STATIC_DIR]');
  process.exit(2);
}
const manifestPath = path.join(dir, 'encoder.json');
const manifest = loadEncoderManifest(dir);
const point = manifest.harm;
if (!point) throw new Error(`${manifestPath}: no harm point (run calibrate.ts first)`);
const HARM = manifest.heads.indexOf('harm');

const rows = await calibPrompts(textsFile, TARGET_INDEX.harm);
const benign = rows.filter((r) => r.label === 'benign' && !NOT_BUDGETED.has(r.source));
const harmful = rows.filter((r) => r.targets[TARGET_INDEX.harm] === 1);
if (benign.length < 1000 || harmful.length < 100)
  throw new Error(`${textsFile}: too few calibration prompts with a harm target (${rows.length})`);

const encoder = await createOnnxEncoder(dir);
const deps = {
  detectors: createMlDetectors(staticDir ? { modelDir: staticDir } : {}),
  compile: createPolicyCompiler(),
};
const policy = await presetScoreFields('Basic Content Safety');
// Sentences are chosen with an offset present (any: only its presence counts).
const stage = {
  manifest: { ...manifest, harm_parts: { b: 0 } } satisfies EncoderManifest,
  countTokens: wordPieceCounter(),
};

let reads = 0;
/**
 * The highest logit over a text's sentences of the harm blend without its offset (-Infinity when
 * no sentence is read), and whether the static detector flags the whole text.
 */
async function sentenceLogit(text: string): Promise<{ z: number; staticFlags: boolean } | null> {
  const an = analyseRequest(
    { messages: [{ role: 'user', content: text }], ...policy, reasoning_mode: 'off' },
    deps,
  );
  const r = encoderReads(an, stage);
  if (!r.inParts || !r.covered) return null; // not read in windows: no sentences read either
  const sentences = harmSentenceReads(an, stage.manifest, r);
  const out = await encoder.encode(
    sentences.map((s) => ({ role: 'prompt' as const, text: s.text })),
  );
  reads += out.length;
  const z = Math.max(
    -Infinity,
    ...sentences.map(
      (s, i) => point!.static * logit(s.harm) + point!.encoder * logit(out[i]?.probs[HARM] ?? 0),
    ),
  );
  return { z, staticFlags: (an.harm?.any.score ?? 0) >= 0.5 };
}
async function readAll(texts: string[]): Promise<{ z: number; staticFlags: boolean }[]> {
  const out: { z: number; staticFlags: boolean }[] = [];
  for (const t of texts) {
    const s = await sentenceLogit(t);
    if (s) out.push(s);
  }
  return out;
}

const t0 = performance.now();
const next = seeded(20261129);
const joined = promptJoiner(
  benign.map((r) => r.text.trim()).filter((t) => t.length >= 15 && t.length <= 400),
  next,
);
const sets = {
  joined: await readAll(
    Array.from({ length: LONG_TEXTS }, () => joined(LONG_MIN + next() * (LONG_MAX - LONG_MIN))),
  ),
  long_benign: await readAll(
    benign.filter((r) => r.text.length > MAX_SEGMENT_CHARS).map((r) => r.text),
  ),
  // Reported only: every fourth harmful request between two runs of ordinary prompts, and the
  // calibration split's jailbreaks long enough to be read in windows.
  wrapped_harmful: await readAll(
    harmful.filter((_, i) => i % 4 === 0).map((r) => joined(600, r.text)),
  ),
  long_jailbreak: await readAll(
    (await calibPrompts(textsFile, TARGET_INDEX.jailbreak))
      .filter((r) => r.targets[TARGET_INDEX.jailbreak] === 1 && r.text.length > MAX_SEGMENT_CHARS)
      .map((r) => r.text),
  ),
};
await encoder.close();

/**
 * The offset that leaves BUDGET of `xs`' texts with a sentence at 0.5 or above (Infinity when
 * fewer texts than that have a sentence read at all).
 */
function offsetFor(xs: { z: number }[]): number {
  const zs = xs.map((x) => x.z).sort((p, q) => q - p);
  return -(zs[Math.floor(BUDGET * zs.length)] ?? -Infinity);
}
const offsets = { joined: offsetFor(sets.joined), long_benign: offsetFor(sets.long_benign) };
// The strictest of the two and the prompts' own point (a lower offset flags fewer): a sentence is
// never read more leniently than a short request. A set too small to hold 1% is not used.
const b = Math.min(
  point.b,
  offsets.joined,
  ...(sets.long_benign.length >= 200 ? [offsets.long_benign] : []),
);
const share = (
  xs: { z: number; staticFlags: boolean }[],
  f: (x: { z: number; staticFlags: boolean }) => boolean,
) => Number((xs.filter(f).length / Math.max(1, xs.length)).toFixed(4));
const report = Object.fromEntries(
  Object.entries(sets).map(([k, xs]) => [
    k,
    {
      texts: xs.length,
      with_sentences_read: share(xs, (x) => Number.isFinite(x.z)),
      flagged_by_sentences: share(xs, (x) => x.z + b >= 0),
      flagged_static: share(xs, (x) => x.staticFlags),
      flagged_either: share(xs, (x) => x.staticFlags || x.z + b >= 0),
    },
  ]),
);

const out = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;
out.harm_parts = { b: Number(b.toPrecision(6)) };
const provenance = {
  offsets: Object.fromEntries(
    Object.entries({ ...offsets, prompt_point: point.b }).map(([k, v]) => [
      k,
      Number(v.toFixed(4)),
    ]),
  ),
  sentence_reads: reads,
  ...report,
  seconds: Math.round((performance.now() - t0) / 1000),
};
out.provenance = { ...out.provenance, harm_parts: provenance };
fs.writeFileSync(manifestPath, JSON.stringify(out, null, 1) + '\n');
console.log(JSON.stringify({ harm_parts: out.harm_parts, ...provenance }, null, 1));
