/**
 * Product-level quality: what POST /guard/monitor decides, not what one detector scores. Runs the
 * full scoring engine (normaliser, learned detectors, scanners, rule router) with a preset policy
 * over a JSONL of {text, label, role?, source?} rows and prints, per label and per source, how
 * often the verdict is "violation" (for benign rows: the over-blocking rate).
 *
 *   npm run eval:monitor -- <file.jsonl> [--policy "Basic Content Safety"] [--limit N]
 *                           [--model-dir DIR] [--no-request] [--source NAME]
 *                           [--encoder off|cascade|all] [--encoder-dir DIR] [--wrap CHARS]
 *                           [--history N] [--without RULE] [--rules-only]
 *                           [--multilingual on|off] [--multilingual-dir DIR] [--gated]
 *
 * --model-dir scores with other weights (a leave-one-source-out fold's); --no-request sends every
 * response after the neutral user turn, to measure what judging an answer with its request adds;
 * --source keeps the rows of one source; --encoder sets the jailbreak encoder stage as
 * GUARD_ENCODER does (default cascade, as served); --encoder-dir reads the encoder (model.int8.onnx
 * and encoder.json) from DIR instead of the shipped one, to compare two. --wrap CHARS puts each user-text row between
 * two runs of about CHARS characters of ordinary requests (scripts/bench/ordinary-requests.mjs,
 * fixed seed): an attack buried in the middle of a long prompt, where the encoder's 96 + 30 token
 * window does not reach it; benign rows become long ordinary prompts. --history N sends each
 * user-text row as the latest message of a conversation: N earlier user turns of about 300
 * characters of ordinary requests (same generator and seed), each answered "Sure, here you go.".
 * --without RULE adds a column: the share flagged when the policy's rule RULE is left out (rules
 * are scored apart, so one run gives both; with a judge they would not be). --rules-only counts
 * a row flagged when a rule of the policy is violated, leaving out the built-in signals (jailbreak,
 * ipi): what the policy's rules decide, for instance its harm rules on their own.
 * --multilingual off leaves out the multilingual reader (as GUARD_MULTILINGUAL=off does); --multilingual-dir
 * reads its manifest (head) from DIR (`npm run train:multilingual -- --out DIR`); --gated
 * keeps only the user-text rows its gate sends on (requests the English models cannot read: the
 * only rows the reader can change).
 * Scoring runs on this thread, encoder included.
 *
 * Rows with role "response" are sent as an assistant turn (post thresholds) after the request
 * they answer when the row has one (`request`), else after a neutral user turn; "document" rows
 * as a tool result (ipi); the rest as user text.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { createDefaultEngine, type RuleScore, type ScoreMessage } from '@guard/scoring';
import { englishGate } from '@guard/scoring/multilingual/gate';
import { loadMultilingualManifest } from '@guard/scoring/multilingual/reader';
import {
  answerMessages,
  decidedByEncoder,
  presetScoreFields,
  toolResultMessages,
} from '@guard/testing/score-request';
import { ordinaryText, seeded } from '../bench/ordinary-requests.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    policy: { type: 'string', default: 'Basic Content Safety' },
    limit: { type: 'string' },
    'model-dir': { type: 'string' },
    'no-request': { type: 'boolean', default: false },
    source: { type: 'string' },
    encoder: { type: 'string', default: 'cascade' },
    'encoder-dir': { type: 'string' },
    wrap: { type: 'string' },
    history: { type: 'string' },
    without: { type: 'string' },
    'rules-only': { type: 'boolean', default: false },
    multilingual: { type: 'string', default: 'on' },
    'multilingual-dir': { type: 'string' },
    gated: { type: 'boolean', default: false },
  },
});
const file = positionals[0];
if (!file) {
  console.error(
    'usage: npm run eval:monitor -- <file.jsonl> [--policy NAME] [--limit N] [--model-dir DIR] [--no-request] [--source NAME] [--encoder off|cascade|all] [--encoder-dir DIR] [--wrap CHARS] [--history N] [--without RULE] [--rules-only] [--multilingual on|off] [--multilingual-dir DIR] [--gated]',
  );
  process.exit(2);
}
const policy = await presetScoreFields(values.policy);
const modelDir = values['model-dir'];
const mode = values.encoder;
if (mode !== 'off' && mode !== 'cascade' && mode !== 'all') {
  console.error(`--encoder: expected off, cascade or all, got "${mode}"`);
  process.exit(2);
}
const without = values.without;
if (without !== undefined && !policy.rules.some((r) => r.name === without)) {
  console.error(
    `--without: the policy has no rule "${without}" (${policy.rules.map((r) => r.name).join(', ')})`,
  );
  process.exit(2);
}
if (values.multilingual !== 'on' && values.multilingual !== 'off') {
  console.error(`--multilingual: expected on or off, got "${values.multilingual}"`);
  process.exit(2);
}
const encoderDir = values['encoder-dir'];
const engine = createDefaultEngine({
  ...(modelDir ? { modelDir } : {}),
  encoder: {
    mode,
    ...(encoderDir ? { dir: encoderDir } : {}),
    multilingual: values.multilingual === 'on',
    ...(values['multilingual-dir'] ? { multilingualDir: values['multilingual-dir'] } : {}),
    // Verdicts are the same with the encoder's cache; the time per row is that of a new text only
    // without it (datasets repeat texts, and answers repeat their request).
    cache: 0,
  },
});
const gated = englishGate(loadMultilingualManifest().gate);
const limit = values.limit ? Number(values.limit) : Infinity;
const wrap = values.wrap === undefined ? 0 : Number(values.wrap);
if (!Number.isInteger(wrap) || wrap < 0) {
  console.error(`--wrap: expected a number of characters, got "${values.wrap}"`);
  process.exit(2);
}
const history = values.history === undefined ? 0 : Number(values.history);
if (!Number.isInteger(history) || history < 0) {
  console.error(`--history: expected a number of earlier turns, got "${values.history}"`);
  process.exit(2);
}
const wrapRng = seeded(20251126);
const earlier = (): ScoreMessage[] =>
  Array.from({ length: history }, (): ScoreMessage[] => [
    { role: 'user', content: ordinaryText(wrapRng, 300) },
    { role: 'assistant', content: 'Sure, here you go.' },
  ]).flat();
const wrapped = (text: string): string =>
  wrap === 0 ? text : `${ordinaryText(wrapRng, wrap)} ${text} ${ordinaryText(wrapRng, wrap)}`;

interface Row {
  text: string;
  label: string;
  role?: string;
  source?: string;
  request?: string;
}
const messagesFor = (r: Row): ScoreMessage[] => {
  if (r.role === 'response')
    return !values['no-request'] && r.request
      ? answerMessages(r.text, r.request)
      : answerMessages(r.text);
  if (r.role === 'document') return toolResultMessages(r.text);
  return [...earlier(), { role: 'user', content: wrapped(r.text) }];
};

type Tally = { n: number; flagged: number; ms: number; encoder: number; rest: number };
const byLabel = new Map<string, Tally>();
const bySource = new Map<string, Tally>();
/** Responses sent after their request: flagged by a policy rule. */
const answers = new Map<string, Tally>();
const add = (
  m: Map<string, Tally>,
  k: string,
  flagged: boolean,
  ms: number,
  enc = false,
  rest = flagged,
) => {
  const t = m.get(k) ?? { n: 0, flagged: 0, ms: 0, encoder: 0, rest: 0 };
  t.n++;
  t.flagged += flagged ? 1 : 0;
  t.rest += rest ? 1 : 0;
  t.ms += ms;
  t.encoder += enc ? 1 : 0;
  m.set(k, t);
};

let seen = 0;
for await (const line of readline.createInterface({ input: fs.createReadStream(file) })) {
  if (!line.trim() || seen >= limit) continue;
  const row = JSON.parse(line) as Row;
  if (values.source !== undefined && row.source !== values.source) continue;
  if (values.gated && (row.role === 'response' || row.role === 'document' || !gated(row.text)))
    continue;
  seen++;
  const t0 = performance.now();
  const r = await engine.score({
    messages: messagesFor(row),
    ...policy,
    reasoning_mode: 'off',
  });
  const ms = performance.now() - t0;
  const violated = (r.scanner_output.rules as RuleScore[] | undefined)?.filter((x) => x.violated);
  const flagged = values['rules-only'] ? (violated?.length ?? 0) > 0 : r.violation > 0 || r.ipi;
  const enc = decidedByEncoder(r);
  // Flagged by something besides the rule left out (`--without`).
  const rest =
    flagged &&
    (values['rules-only']
      ? (violated ?? []).some((x) => x.name !== without)
      : r.ipi || r.violated_rule_descriptions.some((d) => d.name !== without));
  add(byLabel, row.label, flagged, ms, enc, rest);
  add(bySource, `${row.label.padEnd(9)} ${row.source ?? '?'}`, flagged, ms, enc, rest);
  if (row.role === 'response' && row.request && !values['no-request']) {
    // The output phase also re-checks the request with the jailbreak signal; this counts the
    // answer's own verdict: a policy rule violated.
    add(answers, `${row.label.padEnd(9)} ${row.source ?? '?'}`, (violated?.length ?? 0) > 0, ms);
  }
}

const pct = (t: Tally) => `${((100 * t.flagged) / t.n).toFixed(1)}%`.padStart(6);
const encPct = (t: Tally) => `${((100 * t.encoder) / t.n).toFixed(1)}%`.padStart(6);
const restPct = (t: Tally) =>
  without === undefined ? '' : `  without ${without} ${((100 * t.rest) / t.n).toFixed(1)}%`;
console.log(
  `policy: ${values.policy}${values['rules-only'] ? ' (its rules only)' : ''}; encoder ${mode}${wrap ? `; user text wrapped in 2 x ${wrap} characters of ordinary requests` : ''}${history ? `; after ${history} earlier user turn(s) of ordinary requests` : ''}; multilingual reader ${values.multilingual}${values.gated ? ' (only rows its gate sends on)' : ''}; ${seen} rows; "flagged" = violation > 0 or ipi; "encoder" = jailbreak or harm decided with the encoder`,
);
console.log('\nby label (benign: over-blocking; others: recall)');
for (const [k, t] of [...byLabel].sort())
  console.log(
    `  ${k.padEnd(10)} ${String(t.n).padStart(6)} rows  flagged ${pct(t)}  encoder ${encPct(t)}  mean ${(t.ms / t.n).toFixed(3)} ms${restPct(t)}`,
  );
console.log('\nby source');
for (const [k, t] of [...bySource].sort())
  console.log(
    `  ${k.padEnd(44)} ${String(t.n).padStart(6)} rows  flagged ${pct(t)}  encoder ${encPct(t)}${restPct(t)}`,
  );
if (answers.size > 0) {
  console.log(
    '\nresponses sent after their request: flagged by a policy rule (the answer, not the request)',
  );
  for (const [k, t] of [...answers].sort())
    console.log(`  ${k.padEnd(44)} ${String(t.n).padStart(6)} rows  flagged ${pct(t)}`);
}
await engine.close();
