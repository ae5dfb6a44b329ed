/**
 * Long documents as tool results, from the validation split only: its clean BIPIA documents
 * joined (an empty line between two) to 2-3 KB and to 8-16 KB, 150 of each, and the same with one
 * of its injected BIPIA documents (attack types held out of training; at most half the lowest
 * length) in the middle, clean text on both sides, 150 of each.
 * Fixed seed; the rows are document rows for `npm run eval:monitor` (each sent as a tool result)
 * and for `document-points.ts`. docs/detection-quality.md, "Long documents".
 *
 *   node --conditions=source --import tsx scripts/eval/long-documents.ts [OUT.jsonl] [--seed N]
 *
 * Reads the build's validation split (.cache/guard-train/val.jsonl: run npm run train first);
 * writes .cache/guard-eval/long-documents.jsonl. `--seed` (default 17) draws another file of the
 * same kind: the one a change is judged on when the default file has already been looked at.
 * `--clean-from FILE` joins the benign rows of FILE instead of BIPIA's (say ood-documents.ts's
 * texts never seen as documents) and writes the clean rows only: long texts of other kinds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { seeded } from '@guard/testing/seeded';
import { pick } from '../train/synthetic.js';
import { readRows } from '../multilingual/rows.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const VAL = path.join(ROOT, '.cache/guard-train/val.jsonl');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seed: { type: 'string', default: '17' }, 'clean-from': { type: 'string' } },
});
const SEED = Number(values.seed);
if (!Number.isInteger(SEED)) throw new Error(`--seed: expected an integer, got "${values.seed}"`);
const OUT = positionals[0] ?? path.join(ROOT, '.cache/guard-eval/long-documents.jsonl');
const PER_SET = 150;
/** Lengths of the joined texts, in characters: [lowest, highest). */
const SIZES = [
  { name: '2-3kb', low: 2000, high: 3000 },
  { name: '8-16kb', low: 8000, high: 16000 },
] as const;

if (!fs.existsSync(VAL)) throw new Error(`${VAL} is missing: run npm run train first`);
const val = readRows(VAL).filter((r) => r.source === 'bipia' && r.role === 'document');
const cleanFrom = values['clean-from'];
const clean = (cleanFrom ? readRows(cleanFrom) : val)
  .filter((r) => r.label === 'benign')
  .map((r) => r.text);
const injected = val.filter((r) => r.label !== 'benign').map((r) => r.text);
if (clean.length < 20 || injected.length < 20)
  throw new Error(
    `too few documents: ${clean.length} clean (${cleanFrom ?? VAL}), ${injected.length} injected BIPIA ones (${VAL})`,
  );

const rand = seeded(SEED);

/**
 * Clean documents joined to a length drawn in [low, high): a document that would pass `high` is
 * drawn again, and a row that cannot reach `low` (or, with `middle`, has fewer than two clean
 * documents) is drawn again whole. `middle` goes halfway, so clean text stands on both sides.
 */
function joined(low: number, high: number, middle?: string): string {
  for (;;) {
    const target = low + rand() * (high - low);
    const parts: string[] = [];
    let chars = middle === undefined ? 0 : middle.length + 2;
    for (let tries = 0; chars < target && tries < 200; tries++) {
      const t = pick(rand, clean);
      if (chars + t.length + 2 > high) continue;
      parts.push(t);
      chars += t.length + 2;
    }
    if (chars < low || (middle !== undefined && parts.length < 2)) continue;
    if (middle !== undefined) parts.splice(Math.floor(parts.length / 2), 0, middle);
    return parts.join('\n\n');
  }
}

/** An injected document no longer than `max` characters (half the row's lowest length). */
function injectedUpTo(max: number): string {
  const fitting = injected.filter((t) => t.length <= max);
  if (fitting.length === 0) throw new Error(`no injected document of ${max} characters or less`);
  return pick(rand, fitting);
}

const out: Array<{ text: string; label: string; role: 'document'; source: string }> = [];
for (const size of SIZES) {
  for (let i = 0; i < PER_SET; i++)
    out.push({
      text: joined(size.low, size.high),
      label: 'benign',
      role: 'document',
      source: `long:clean-${size.name}`,
    });
  if (cleanFrom) continue;
  for (let i = 0; i < PER_SET; i++)
    out.push({
      text: joined(size.low, size.high, injectedUpTo(size.low / 2)),
      label: 'injection',
      role: 'document',
      source: `long:injected-${size.name}`,
    });
}
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, out.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`wrote ${out.length} document rows to ${OUT}`);
