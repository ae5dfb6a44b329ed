/**
 * The operating point of custom rules by meaning (`rule_meaning` in encoder.json): on clinc150's
 * validation split, every request against every topic rule of topic-rules.json, the cosine of
 * their embeddings (the encoder's `embedding` output); `at` is the cosine at which 1% of the requests
 * reach a rule of another topic (the budget of every other signal: 1% of ordinary requests
 * flagged; scored 0.5, where a rule is violated by default), `low` the one 5% reach (scored 0.3). Run after calibrate.ts, which rewrites the manifest:
 *
 *   node --conditions=source --import tsx scripts/encoder/calibrate-rules.ts DIR
 *
 * hwu64, which no training run sees, is what scripts/eval/rule-meaning-eval.ts reports on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createOnnxEncoder } from '../../shared/scoring/src/encoder/onnx-encoder.js';
import type { EncoderManifest } from '../../shared/scoring/src/encoder/encoder.js';
import { thresholdAt } from '../eval/roc.js';
import { defaultDataDir, topicCosines, topicRows, topicRules } from './topic-rules.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: calibrate-rules.ts <encoder dir holding encoder.json>');
  process.exit(2);
}
const t0 = performance.now();
const encoder = await createOnnxEncoder(dir);
const rules = topicRules('clinc150');
const rows = topicRows('clinc150', defaultDataDir());
const { own, other, worstOther } = await topicCosines(encoder, rules, rows);
await encoder.close();

// The budget of every other signal: 1% of ordinary requests flagged, here by any of the 10 rules
// they do not belong to (so about 0.1% per rule).
const at = thresholdAt(worstOther, 0.01);
const low = thresholdAt(worstOther, 0.05);
const share = (xs: number[], th: number) =>
  Math.round((1e4 * xs.filter((x) => x >= th).length) / xs.length) / 1e4;
const manifestPath = path.join(dir, 'encoder.json');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as EncoderManifest;
const mapFile = path.join(dir, 'meaning.json');
manifest.rule_meaning = { at: Math.round(at * 1e4) / 1e4, low: Math.round(low * 1e4) / 1e4 };
manifest.provenance = {
  ...manifest.provenance,
  rule_meaning: {
    map: fs.existsSync(mapFile) ? JSON.parse(fs.readFileSync(mapFile, 'utf8')) : null,
    calibration: 'clinc150 validation split x topic-rules.json (clinc150)',
    requests: rows.length,
    rules: rules.length,
    // On the calibration pairs themselves (fitted; not a quality claim).
    calib_own_topic_at: share(own, at),
    calib_other_topic_pairs_at: share(other, at),
    calib_requests_wrongly_at: share(worstOther, at),
    seconds: Math.round((performance.now() - t0) / 1000),
  },
};
fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 1) + '\n');
console.log(
  JSON.stringify({
    rule_meaning: manifest.rule_meaning,
    ...(manifest.provenance.rule_meaning as object),
  }),
);
