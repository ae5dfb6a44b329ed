/**
 * Texts never seen as documents, as document rows for `npm run eval:monitor` (each is sent as a
 * tool result): clean texts of seven kinds from the training data, and the injections of
 * deepset_prompt_injections (a source no build trains on) alone and between two GPTeacher coding
 * requests, with deepset's benign prompts the same two ways. Fixed seed; docs/detection-quality.md,
 * "Documents read by the encoder". Also every BIPIA row as a document row (bipia-documents.jsonl
 * beside OUT), for the leave-one-source-out fold of BIPIA.
 *
 *   node --conditions=source --import tsx scripts/eval/ood-documents.ts [OUT.jsonl]
 *
 * Reads $GUARD_TRAIN_DATA (default ../shared/data/train) and the build's validation split
 * (.cache/guard-train/val.jsonl, for deepset's rows); writes .cache/guard-eval/ood-documents.jsonl
 * and .cache/guard-eval/bipia-documents.jsonl.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seeded, shuffle } from '@guard/testing/seeded';
import { readRows, type Row } from './loso-rows.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA = process.env.GUARD_TRAIN_DATA ?? path.resolve(ROOT, '../shared/data/train');
const VAL = path.join(ROOT, '.cache/guard-train/val.jsonl');
const OUT = process.argv[2] ?? path.join(ROOT, '.cache/guard-eval/ood-documents.jsonl');
const PER_KIND = 200;

const source = (name: string) => readRows(DATA, name);
const has = (r: Row, c: string) => r.categories?.includes(c) ?? false;

const rand = seeded(13);
const shuffled = <T>(xs: readonly T[]): T[] => shuffle(xs, rand);

const out: Array<{ text: string; label: string; role: 'document'; source: string }> = [];
const add = (texts: string[], kind: string, label = 'benign') => {
  for (const text of texts) out.push({ text, label, role: 'document', source: `ood:${kind}` });
};
const pick = (texts: string[]) => shuffled(texts).slice(0, PER_KIND);

add(pick(source('gsm8k').map((r) => r.text)), 'maths-problems');
add(
  pick(
    source('gpteacher_codegen')
      .filter((r) => has(r, 'has_input'))
      .map((r) => r.text),
  ),
  'coding-requests-with-code',
);
add(
  pick(
    source('xsid')
      .filter((r) => !has(r, 'lang:en'))
      .map((r) => r.text),
  ),
  'requests-in-other-languages',
);
add(
  pick(
    source('diasafety')
      .filter((r) => r.label === 'benign')
      .map((r) => r.text.split('\nAssistant: ').at(-1) ?? r.text),
  ),
  'chat-replies',
);
add(
  pick(
    source('gptfuzz_responses')
      .filter((r) => r.label === 'benign')
      .map((r) => r.text),
  ),
  'declined-answers-of-jailbroken-models',
);
add(
  pick(
    source('rtp_lx')
      .filter((r) => r.label === 'benign' && has(r, 'role:response'))
      .map((r) => r.text),
  ),
  'human-text-completions',
);
const queries = shuffled(source('nq_open').map((r) => r.text));
add(
  Array.from({ length: PER_KIND }, (_, k) =>
    queries
      .slice(5 * k, 5 * k + 5)
      .map((q, i) => `${i + 1}. ${q}`)
      .join('\n'),
  ),
  'search-query-lists',
);

if (!fs.existsSync(VAL)) throw new Error(`${VAL} is missing: run npm run train first`);
// The validation split, read as a source file of its folder (its rows have the same shape).
const deepset = readRows(path.dirname(VAL), path.basename(VAL, '.jsonl')).filter(
  (r) => r.source === 'deepset_prompt_injections',
);
const carriers = shuffled(source('gpteacher_codegen').map((r) => r.text));
let c = 0;
const carried = (t: string) => `${carriers[c++]}\n\n${t}\n\n${carriers[c++]}`;
for (const label of ['injection', 'benign']) {
  const texts = deepset.filter((r) => r.label === label).map((r) => r.text);
  add(texts, `deepset-${label}-alone`, label);
  add(texts.map(carried), `deepset-${label}-between-coding-requests`, label);
}

fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, out.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`wrote ${out.length} document rows to ${OUT}`);

// Every BIPIA row as a document row, by task (e-mail, table, code): what the leave-one-source-out
// fold of BIPIA is measured on through the preset.
const bipia = source('bipia').map((r) => ({
  text: r.text,
  label: r.label,
  role: 'document',
  source: `bipia ${r.categories?.find((c) => c.startsWith('task:'))?.slice(5) ?? '?'}`,
}));
const bipiaOut = path.join(path.dirname(OUT), 'bipia-documents.jsonl');
fs.writeFileSync(bipiaOut, bipia.map((r) => JSON.stringify(r)).join('\n') + '\n');
console.log(`wrote ${bipia.length} document rows to ${bipiaOut}`);
