/**
 * Which weakly labelled rows to keep (`GUARD_TRAIN_WEAK_KEEP` of build-dataset.ts): every row of
 * the training data with a `weak_label:*` category (hh_rlhf_harmless_base's red-team openers, all
 * labelled harmful though many are innocuous on their own) is read by static detectors trained
 * without those rows (`GUARD_TRAIN_EXCLUDE=hh_rlhf_harmless_base`, then train_detectors.py --out
 * DIR), through the engine the server runs (encoder and multilingual reader off); a row is kept
 * when its overall harm reaches POINT (default 0.5, the default violation threshold, which the
 * static harm head is calibrated to reach on 1% of ordinary calibration prompts). Writes FILE:
 * the point, the model read, counts, and the kept rows' textHash (no text).
 *
 *   node --conditions=source --import tsx scripts/train/clean-weak-labels.ts MODEL_DIR FILE [--point P]
 *
 * Measured on 2026-12-08 and not shipped (docs/detection-quality.md, "Known weaknesses").
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDefaultEngine } from '@guard/scoring';
import { presetScoreFields } from '@guard/testing/score-request';
import { readRows } from '../multilingual/rows.js';
import { textHash, weaklyLabelled } from './text-hash.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { point: { type: 'string', default: '0.5' } },
});
const [modelDir, out] = positionals;
const point = Number(values.point);
if (!modelDir || !out || !(point > 0 && point < 1)) {
  console.error('usage: clean-weak-labels.ts MODEL_DIR FILE [--point P in (0, 1)]');
  process.exit(2);
}
// The training data build-dataset.ts reads, found the same way (beside the repository root).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const data = process.env.GUARD_TRAIN_DATA ?? path.resolve(ROOT, '../shared/data/train');
const engine = createDefaultEngine({
  modelDir,
  encoder: { mode: 'off', multilingual: false, cache: 0 },
});
const policy = await presetScoreFields('Basic Content Safety');
const kept: number[] = [];
let read = 0;
for (const f of fs.readdirSync(data).filter((x) => x.endsWith('.jsonl'))) {
  for (const row of readRows(path.join(data, f))) {
    if (!weaklyLabelled((row as { categories?: string[] }).categories)) continue;
    read++;
    const r = await engine.score({
      messages: [{ role: 'user', content: row.text }],
      ...policy,
      reasoning_mode: 'off',
    });
    const harm = (r.scanner_output as { harm?: { score?: number } }).harm?.score ?? 0;
    if (harm >= point) kept.push(textHash(row.text));
  }
}
fs.writeFileSync(
  out,
  JSON.stringify({ model: path.resolve(modelDir), point, read, count: kept.length, kept }),
);
console.log(`read ${read} weakly labelled rows, kept ${kept.length} at overall harm >= ${point}`);
