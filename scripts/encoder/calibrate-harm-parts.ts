/**
 * The encoder's offset for the harm of long inputs read sentence by sentence (`harm_parts` in
 * encoder.json), from the calibration split of the training build only.
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-harm-parts.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * A long input (read in windows) gets its harm from its most harmful sentences too: each is read
 * by both models with the `harm` blend (calibrate.ts), at an offset of its own instead of the
 * blend's. The offset holds each sentence read of LONG_TEXTS long benign prompts to the budget of
 * one prompt (BUDGET, 1%, reach the default violation threshold 0.5), as calibrate.ts holds each
 * window of such prompts for jailbreaks (`jailbreak_parts`). The prompts are joined from the
 * ordinary benign calibration prompts (LONG_MIN to LONG_MAX characters, fixed seed); the offset is
 * never more lenient than the blend's own, nor than one that holds the split's own long benign
 * prompts (whole) to 1% when it has 200 of them. Also reported: the offset holding each joined
 * prompt (its highest sentence) to 1%. Sentences are chosen as the engine chooses them
 * (evaluate-local.ts `sentencesOf`, apply-encoder.ts `harmSentenceReads`), through the
 * preset Basic Content Safety. Also reported (not fitted on; not a quality claim): harmful
 * calibration requests between two runs of ordinary prompts, and long calibration jailbreaks,
 * caught by their sentences and by the static detector. Adds `harm_parts` (and its provenance)
 * to DIR's encoder.json, which calibrate.ts wrote. A few minutes on one core.
 */
import fs from 'node:fs';
import {
  encoderReads,
  harmSentenceReads,
  readsSentences,
} from '../../shared/scoring/src/engine/apply-encoder.js';
import { analyseRequest } from '../../shared/scoring/src/engine/evaluate-local.js';
import {
  loadEncoderManifest,
  sentenceHarmLogit,
  type EncoderManifest,
} from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { MAX_SEGMENT_CHARS } from '../../shared/scoring/src/ml/features.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { presetScoreFields } from '../../shared/testing/src/score-request.js';
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

const BUDGET = 0.01;
const LONG_TEXTS = 1000;

const { textsFile, dir, staticDir, manifestPath } = calibrationArgs('calibrate-harm-parts.ts');
const manifest = loadEncoderManifest(dir);
const point = manifest.harm;
if (!point) throw new Error(`${manifestPath}: no harm point (run calibrate.ts first)`);

const rows = await calibPrompts(textsFile, TARGET_INDEX.harm);
const benign = rows.filter((r) => r.label === 'benign' && !NOT_BUDGETED.has(r.source));
const harmful = rows.filter((r) => r.targets[TARGET_INDEX.harm] === 1);
if (benign.length < 1000 || harmful.length < 100)
  throw new Error(`${textsFile}: too few calibration prompts with a harm target (${rows.length})`);

const encoder = await createOnnxEncoder(dir);
const deps = analysisDeps(staticDir);
const policy = await presetScoreFields('Basic Content Safety');
// Sentences are chosen with an offset present (any: only its presence counts).
const stage = {
  manifest: { ...manifest, harm_parts: { b: 0 } } satisfies EncoderManifest,
  countTokens: wordPieceCounter(),
};

/** What a long text's sentences read: see `Read`. */
interface Read {
  /** The logit of the harm blend without its offset, per sentence read. */
  zs: number[];
  /** The highest of `zs` (-Infinity when no sentence is read). */
  z: number;
  /** The static detector's overall harm of the whole text reaches 0.5. */
  staticFlags: boolean;
}
/** What the engine reads of `text`'s sentences; null when it does not read it in windows. */
async function sentenceLogit(text: string): Promise<Read | null> {
  const an = analyseRequest(
    { messages: [{ role: 'user', content: text }], ...policy, reasoning_mode: 'off' },
    deps,
  );
  const r = encoderReads(an, stage);
  // Sentences the engine would not read (not read in windows, disguised): not counted.
  if (!readsSentences(an, stage.manifest, r)) return null;
  const sentences = harmSentenceReads(an, stage.manifest, r);
  const out = await encoder.encode(
    sentences.map((s) => ({ role: 'prompt' as const, text: s.text })),
  );
  const zs = sentences.flatMap((s, i) => {
    const o = out[i];
    const z = o ? sentenceHarmLogit(manifest, s.harm, o) : null;
    return z === null ? [] : [z];
  });
  return { zs, z: Math.max(-Infinity, ...zs), staticFlags: (an.harm?.any.score ?? 0) >= 0.5 };
}
async function readAll(texts: string[]): Promise<Read[]> {
  const out: Read[] = [];
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

/** The offset at which BUDGET of `zs` reach 0 (Infinity when fewer than that are finite). */
function offsetFor(zs: number[]): number {
  return -([...zs].sort((p, q) => q - p)[Math.floor(BUDGET * zs.length)] ?? -Infinity);
}
const offsets = {
  // Each sentence read of the joined prompts held to the budget of one prompt, as each window of a
  // long input is for jailbreaks (calibrate.ts, `jailbreak_parts`): the point.
  joined_sentences: offsetFor(sets.joined.flatMap((x) => x.zs)),
  // Reported: each whole joined prompt held to it instead (its highest sentence).
  joined_texts: offsetFor(sets.joined.map((x) => x.z)),
  // The split's own long benign prompts, each held to it, when there are enough of them.
  long_benign: offsetFor(sets.long_benign.map((x) => x.z)),
};
// Never more lenient than a short request's own point, nor than the split's own long prompts allow.
const b = Math.min(
  point.b,
  offsets.joined_sentences,
  ...(sets.long_benign.length >= 200 ? [offsets.long_benign] : []),
);
const share = (xs: Read[], f: (x: Read) => boolean) =>
  Number((xs.filter(f).length / Math.max(1, xs.length)).toFixed(4));
const report = Object.fromEntries(
  Object.entries(sets).map(([k, xs]) => [
    k,
    {
      texts: xs.length,
      sentences_read: xs.reduce((n, x) => n + x.zs.length, 0),
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
  ...report,
  seconds: Math.round((performance.now() - t0) / 1000),
};
out.provenance = { ...out.provenance, harm_parts: provenance };
fs.writeFileSync(manifestPath, JSON.stringify(out, null, 1) + '\n');
console.log(JSON.stringify({ harm_parts: out.harm_parts, ...provenance }, null, 1));
