/**
 * Harm categories by meaning (`harm_topics` in encoder.json). A category rule takes the overall
 * harm score when the text speaks of the category: by its words (router/harm-cues.ts) or, for a
 * request the encoder read for harm, by meaning: its embedding is nearest that category's
 * description among the twelve, at a cosine of at least `at`, the category is one of LENDS and
 * the text names no category by its words.
 * This script writes the descriptions (the preset Basic Content Safety's rule for each category
 * it has; privacy's written here) and sets `at` on the calibration split of the training build,
 * by the product's own engine and encoder. Run after calibrate.ts, which rewrites the manifest:
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-harm-topics.ts TRAIN_TEXTS.jsonl DIR [STATIC_DIR]
 *
 * Every calibration prompt with a harm target (benign or harmful) is scored through the preset as
 * the monitor endpoint scores it, without topics; a prompt would be flagged besides when its harm
 * was read by both models, reaches the violation threshold and its nearest category (a rule of the
 * preset) is at `at` or nearer. `at` is the lowest cosine, in steps of 0.005, at which that adds at
 * most ADDED_BUDGET (0.2%) of the benign prompts to those the preset flags already: hard negatives
 * included (abusive-language contrast cases, look-alikes), since those are where the overall harm
 * score is wrong and a topic would lend it.
 *
 * It also sets `harm_general.at`, where the preset's rule about harm in general (serious_harm,
 * scored by the overall harm alone: `generalHarmScore`) is violated: the lowest overall score, in
 * the same steps, at which that rule adds at most ADDED_BUDGET of the benign prompts to those the
 * category rules flag, by their words or by meaning, and to those the multilingual reader flags
 * (that rule takes the reader's own score, 0.5 at the reader's point, whatever `at` is).
 *
 * The engine is the one the server runs, multilingual reader included: without the reader the
 * requests in other languages are read by the English encoder, get categories by meaning and
 * spend the budget (`harm_topics.at` 0.325 instead of 0.255 on the shipped build), so the script
 * stops when the reader's weights are not installed (`npm run fetch:multilingual`).
 */
import fs from 'node:fs';
import { HARM_CATEGORIES, type HarmCategory } from '../../shared/scoring/src/detectors.js';
import { createDefaultEngine } from '../../shared/scoring/src/default-engine.js';
import {
  embedHarmTopics,
  nearestHarmTopic,
  type EncoderManifest,
} from '../../shared/scoring/src/encoder/encoder.js';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import { MULTILINGUAL_UNAVAILABLE } from '../../shared/scoring/src/engine/apply-multilingual.js';
import { analyseRequest } from '../../shared/scoring/src/engine/evaluate-local.js';
import { missingMultilingualFiles } from '../../shared/scoring/src/multilingual/reader.js';
import { harmCues } from '../../shared/scoring/src/router/harm-cues.js';
import { contentStemsOf } from '../../shared/scoring/src/router/score-rule.js';
import { presetScoreFields } from '../../shared/testing/src/score-request.js';
import { analysisDeps, calibPrompts, calibrationArgs, TARGET_INDEX } from './calib-prompts.js';

const ADDED_BUDGET = 0.002;
/**
 * The categories a request's meaning lends the overall score to: those of harmful acts. Not the
 * four whose training rows are mostly abusive language (sexual, sexual_minors, hate,
 * harassment), where the overall score is high on plain statements with identity words that lie
 * nearest those categories' descriptions: lent, "yes i am gay" or "Gays são lindos" became
 * violations of the sexual-content rules on the validation split. Those keep their words (and a
 * request nearest one of them lends to no other category).
 */
const LENDS: HarmCategory[] = [
  'violence',
  'weapons',
  'self_harm',
  'illegal_drugs',
  'cybercrime',
  'fraud',
  'extremism',
  'privacy',
];
const STEP = 0.005;
const PRESET = 'Basic Content Safety';
/** The one category the preset has no rule for. */
const PRIVACY = "No doxxing, stalking or exposing a person's private information.";

// STATIC_DIR: other static detectors than the committed ones (a leave-one-source-out fold's).
const { textsFile, dir, staticDir, manifestPath } = calibrationArgs('calibrate-harm-topics.ts');
const missing = missingMultilingualFiles();
if (missing.length > 0) {
  console.error(
    `the multilingual reader is not installed (${missing.join(', ')} missing): run npm run fetch:multilingual first, so that the points are fitted on the engine the server runs`,
  );
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;
if (!manifest.harm) {
  console.error(`${manifestPath} has no harm point: run calibrate.ts first`);
  process.exit(2);
}
// The engine reads the manifest: without topics, the verdicts they would add to.
delete manifest.harm_topics;
delete manifest.harm_general;
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');

const preset = await presetScoreFields(PRESET);
const isCategory = (n: string): n is HarmCategory =>
  (HARM_CATEGORIES as readonly string[]).includes(n);
// The category rules alone: the verdicts the rule about harm in general adds to.
const rules = preset.rules.filter((r) => isCategory(r.name));
const policy = { ...preset, rules };
const topics: Partial<Record<HarmCategory, string>> = { privacy: PRIVACY };
for (const r of rules) if (isCategory(r.name)) topics[r.name] = r.description;
const inPolicy = new Set(rules.map((r) => r.name));

const rows = await calibPrompts(textsFile, TARGET_INDEX.harm);

const t0 = performance.now();
const engine = createDefaultEngine({
  ...(staticDir ? { modelDir: staticDir } : {}),
  encoder: { mode: 'cascade', dir },
});
const encoder = await createOnnxEncoder(dir);
const deps = analysisDeps(staticDir);
const embedded = await embedHarmTopics(encoder, topics);

/**
 * Per prompt: flagged without topics, the cosine of its nearest category when it could add, its
 * overall harm score, and whether the multilingual reader's own score flags it.
 */
const scored: {
  benign: boolean;
  flagged: boolean;
  cosine: number | null;
  any: number;
  byReader: boolean;
}[] = [];
for (const [i, r] of rows.entries()) {
  const request = {
    messages: [{ role: 'user' as const, content: r.text }],
    ...policy,
    reasoning_mode: 'off' as const,
  };
  const res = await engine.score(request);
  const notes = (res.scanner_output.notes ?? []) as string[];
  const failed = notes.find((n) => n.startsWith(MULTILINGUAL_UNAVAILABLE));
  if (failed) throw new Error(`the engine ran without the multilingual reader: ${failed}`);
  const harm = res.scanner_output.harm as {
    score: number;
    detector?: string;
    multilingual_score?: number;
  };
  let cosine: number | null = null;
  if (res.violation === 0 && harm.detector === 'encoder' && harm.score >= 0.5) {
    // What the engine read for harm: the input as the analysis joins it (read whole); a text
    // that speaks of a category by its words takes no category by meaning (score-rule.ts).
    const an = analyseRequest(request, deps);
    const words = harmCues(an.checkedAn.views.flatMap((v) => contentStemsOf(v.tokens)));
    const [out] = await encoder.encode([{ role: 'prompt', text: an.jailbreakInput }]);
    const topic = out && nearestHarmTopic(out.embedding, embedded, -Infinity);
    if (topic && words.size === 0 && LENDS.includes(topic.category) && inPolicy.has(topic.category))
      cosine = topic.cosine;
  }
  scored.push({
    benign: r.label === 'benign',
    flagged: res.violation > 0,
    cosine,
    any: harm.score,
    byReader: (harm.multilingual_score ?? 0) >= 0.5,
  });
  if ((i + 1) % 2000 === 0)
    console.log(`${i + 1}/${rows.length} ${((performance.now() - t0) / 1000).toFixed(0)}s`);
}
await engine.close();
await encoder.close();

const benign = scored.filter((s) => s.benign);
const harmful = scored.filter((s) => !s.benign);
const share = (xs: typeof scored, f: (s: (typeof scored)[number]) => boolean) =>
  Math.round((1e4 * xs.filter(f).length) / Math.max(1, xs.length)) / 1e4;
const added = (xs: typeof scored, at: number) =>
  share(xs, (s) => s.cosine !== null && s.cosine >= at);
let at = 1;
for (let k = Math.round(1 / STEP); k >= 0; k--) {
  const c = Math.round(k * STEP * 1e4) / 1e4;
  if (added(benign, c) > ADDED_BUDGET) break;
  at = c;
}

// Harm in general: what neither the category rules, the topics nor the reader's score flag.
const byTopic = (x: (typeof scored)[number]) => x.cosine !== null && x.cosine >= at;
const addedGeneral = (xs: typeof scored, g: number) =>
  share(xs, (x) => !x.flagged && !byTopic(x) && !x.byReader && x.any >= g);
let generalAt = 1 - STEP;
for (let k = Math.round(1 / STEP) - 1; k >= 1; k--) {
  const g = Math.round(k * STEP * 1e4) / 1e4;
  if (addedGeneral(benign, g) > ADDED_BUDGET) break;
  generalAt = g;
}

manifest.harm_topics = { at, topics, lends: LENDS };
manifest.harm_general = { at: generalAt };
manifest.provenance = {
  ...manifest.provenance,
  harm_topics: {
    calibration: `calib split prompts with a harm target, through the preset ${PRESET}`,
    prompts: scored.length,
    benign: benign.length,
    harmful: harmful.length,
    // On the calibration prompts themselves (fitted; not a quality claim).
    calib_benign_flagged_without: share(benign, (s) => s.flagged),
    calib_benign_added: added(benign, at),
    calib_harmful_flagged_without: share(harmful, (s) => s.flagged),
    calib_harmful_added: added(harmful, at),
    seconds: Math.round((performance.now() - t0) / 1000),
  },
  harm_general: {
    calibration: `the same prompts; what the rule serious_harm of ${PRESET} adds`,
    calib_benign_by_reader: share(benign, (s) => s.byReader),
    calib_harmful_by_reader: share(harmful, (s) => s.byReader),
    calib_benign_added: addedGeneral(benign, generalAt),
    calib_harmful_added: addedGeneral(harmful, generalAt),
  },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(
  JSON.stringify(
    {
      harm_topics: { at, ...(manifest.provenance.harm_topics as object) },
      harm_general: { at: generalAt, ...(manifest.provenance.harm_general as object) },
    },
    null,
    1,
  ),
);
