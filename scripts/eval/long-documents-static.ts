/**
 * The reference a way of reading long documents is judged against: what the static document head
 * alone catches of a long-documents.ts file's injected rows when it flags as many of its clean
 * rows as the way does. Per size of the file, the static score of each row sent as a tool result
 * (the score the engine's analysis gives it, before the encoder), its threshold put at the clean
 * row that a share `--flagged` of them lie above, and the injected rows above it. Also the
 * static head at the ipi threshold 0.5, and how the shipped encoder reads each set's rows (in up to
 * 8 windows, whole in more at the long documents' point, or by their opening and end).
 * docs/detection-quality.md, "Long documents read whole".
 *
 *   node --conditions=source --import tsx scripts/eval/long-documents-static.ts FILE.jsonl --flagged 0.02
 */
import { parseArgs } from 'node:util';
import { documentReads } from '../../shared/scoring/src/engine/apply-documents.js';
import {
  defaultEncoderDir,
  loadEncoderManifest,
} from '../../shared/scoring/src/encoder/encoder.js';
import { wordPieceCounter } from '../../shared/scoring/src/ml/ml-model.js';
import { analysisDeps, toolResultAnalysis } from '../encoder/calib-prompts.js';
import { readRows } from '../multilingual/rows.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { flagged: { type: 'string' } },
});
const file = positionals[0];
const share = Number(values.flagged);
if (!file || !(share >= 0 && share < 1)) {
  console.error('usage: long-documents-static.ts FILE.jsonl --flagged SHARE (0 <= SHARE < 1)');
  process.exit(2);
}
const deps = analysisDeps(undefined);
const stage = {
  manifest: loadEncoderManifest(defaultEncoderDir()),
  countTokens: wordPieceCounter(),
};
// Each row as a tool result, analysed once: its static score and how the encoder reads it, in up
// to 8 windows ('short'), whole in more ('long') or by its opening and end ('cut').
const rows = readRows(file).map((r) => {
  const an = toolResultAnalysis(r.text, deps);
  const { reads, cut } = documentReads(an, stage, 'all');
  const way: 'short' | 'long' | 'cut' = cut > 0 ? 'cut' : reads[0]?.long ? 'long' : 'short';
  return { source: r.source, score: an.indirectSources[0]?.score ?? 0, way };
});
const pct = (k: number, n: number) => `${((100 * k) / n).toFixed(1)}%`;
const sizes = [...new Set(rows.map((r) => /^long:(?:clean|injected)-(.+)$/.exec(r.source)?.[1]))];
for (const size of sizes) {
  if (size === undefined) continue;
  const scores = (set: string) => rows.filter((r) => r.source === set).map((r) => r.score);
  const clean = scores(`long:clean-${size}`).sort((p, q) => q - p);
  const injected = scores(`long:injected-${size}`);
  const ways = (set: string) => {
    const n = { short: 0, long: 0, cut: 0 };
    for (const r of rows) if (r.source === set) n[r.way]++;
    return `${n.short} in up to 8 windows, ${n.long} whole in more, ${n.cut} by opening and end`;
  };
  console.log(
    `${size}: clean rows read ${ways(`long:clean-${size}`)}; injected ${ways(`long:injected-${size}`)}`,
  );
  if (clean.length === 0 || injected.length === 0) continue;
  const k = Math.round(share * clean.length);
  const at = clean[Math.min(clean.length - 1, k)] ?? 1;
  console.log(
    `${size}: the static head alone flagging ${k} of ${clean.length} clean rows (above ${at.toFixed(4)}) catches ${pct(injected.filter((s) => s > at).length, injected.length)} of ${injected.length} injected; at 0.5 it flags ${pct(clean.filter((s) => s >= 0.5).length, clean.length)} and catches ${pct(injected.filter((s) => s >= 0.5).length, injected.length)}`,
  );
}
