/**
 * Scoring whole conversations as traffic sends them, with the encoder's cache
 * (GUARD_ENCODER_CACHE) and without it, in the same run, on one core (the encoder on this thread,
 * as a scoring thread runs it; the preset Basic Content Safety, GUARD_ENCODER=cascade).
 *
 *   npm run bench:conversations [-- --conversations 24] [--steps 8] [--entries 4096]
 *
 * Three kinds of traffic (conversations.mjs): an agent's steps, each resending the tool results so
 * far; a chat's turns, each checked before and after the answer; and protected completions of
 * requests in Vietnamese (read by the multilingual reader, whose cache this measures too), each
 * checked before and with its answer.
 * Each conversation is scored by both engines in turn, each first every other time (so drift of a
 * shared machine, and what one warms for the other, hit both alike),
 * every step after the one before, as a conversation's calls come. Prints, per kind and engine,
 * milliseconds per call (mean, median, p99; and the mean at the first, middle and last step) and
 * the encoder's reads per call; then checks that both engines gave the same result for every call
 * (verdicts, scores and evidence: the cache only remembers what a read gives).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createDefaultEngine, type ScoreRequest, type ScoreResult } from '@guard/scoring';
import { presetScoreFields } from '@guard/testing/score-request';
import { agentCalls, chatCalls, completionCalls } from './conversations.mjs';

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '24' },
    steps: { type: 'string', default: '8' },
    entries: { type: 'string', default: '4096' },
  },
});
const CONVERSATIONS = Number(values.conversations);
const STEPS = Number(values.steps);
const ENTRIES = Number(values.entries);
if (!(CONVERSATIONS > 0 && STEPS > 0 && ENTRIES > 0))
  throw new Error('--conversations, --steps and --entries must be positive numbers');

type Messages = ScoreRequest['messages'];
const agent = (c: number) => agentCalls(c, STEPS) as Messages[];
const chat = (c: number) => chatCalls(c, STEPS) as Messages[];
const completions = (c: number) => completionCalls(c, STEPS) as Messages[];

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const basic = await presetScoreFields('Basic Content Safety');
const request = (messages: Messages): ScoreRequest => ({
  messages,
  ...basic,
  reasoning_mode: 'off',
});

const engines = {
  'cache off': createDefaultEngine({ encoder: { mode: 'cascade', cache: 0 } }),
  [`cache ${ENTRIES}`]: createDefaultEngine({ encoder: { mode: 'cascade', cache: ENTRIES } }),
};
const names = Object.keys(engines);
// Load both encoders and multilingual readers before timing (an English request loads only the
// encoder; the reader loads on the first request in another language).
for (const e of Object.values(engines))
  for (const content of ['hello', 'Xin chào, hôm nay thời tiết ở Hà Nội thế nào?'])
    await e.score(request([{ role: 'user', content }]));

let differing = 0;
let compared = 0;
console.log(
  `${CONVERSATIONS} conversations of each kind, ${STEPS} steps; preset Basic Content Safety, encoder cascade, one thread`,
);
for (const [kind, make] of [
  ['agent (tool results resent each step)', agent],
  ['chat (checked before and after each answer)', chat],
  ['completions in Vietnamese (each request checked before and with its answer)', completions],
] as const) {
  const ms: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const byStep: Record<string, number[][]> = Object.fromEntries(names.map((n) => [n, []]));
  const cached = engines[names[1] as string]!;
  const before = cached.encoderCacheStats() ?? { hits: 0, reads: 0, entries: 0 };
  let calls = 0;
  let bytes = 0;
  for (let c = 0; c < CONVERSATIONS; c++) {
    const conversation = make(c);
    const results: Record<string, ScoreResult[]> = {};
    // Each engine goes first every other conversation: the first warms what both share in the
    // process (the tokenizer's memo of word pieces) for the texts the second then reads.
    for (const name of c % 2 === 0 ? names : [...names].reverse()) {
      const engine = engines[name]!;
      results[name] = [];
      for (const [k, messages] of conversation.entries()) {
        const t0 = performance.now();
        results[name].push(await engine.score(request(messages)));
        const t = performance.now() - t0;
        ms[name]!.push(t);
        (byStep[name]![k] ??= []).push(t);
      }
    }
    calls += conversation.length;
    bytes += conversation.reduce((n, m) => n + JSON.stringify(m).length, 0);
    const [a, b] = names.map((n) => results[n]!);
    a!.forEach((r, i) => {
      compared++;
      if (JSON.stringify(r) !== JSON.stringify(b![i])) differing++;
    });
  }
  const after = cached.encoderCacheStats() ?? before;
  const asked = after.hits + after.reads - before.hits - before.reads;
  const reads = after.reads - before.reads;
  console.log(
    `\n${kind}: ${calls} calls per engine, mean ${(bytes / calls / 1024).toFixed(1)} KB of messages per call`,
  );
  for (const name of names) {
    const sorted = [...ms[name]!].sort((x, y) => x - y);
    const mean = sorted.reduce((x, y) => x + y, 0) / sorted.length;
    const stepMean = (k: number) => {
      const xs = byStep[name]![k] ?? [];
      return (xs.reduce((x, y) => x + y, 0) / xs.length).toFixed(1);
    };
    const last = byStep[name]!.length - 1;
    const encoderReads = name === 'cache off' ? asked : reads;
    console.log(
      `  ${name.padEnd(11)} ms per call: mean ${mean.toFixed(2)}, median ${quantile(sorted, 0.5).toFixed(2)}, p99 ${quantile(sorted, 0.99).toFixed(2)}; ` +
        `mean at call 1 / ${Math.floor(last / 2) + 1} / ${last + 1}: ${stepMean(0)} / ${stepMean(Math.floor(last / 2))} / ${stepMean(last)}; ` +
        `encoder reads per call ${(encoderReads / calls).toFixed(2)}`,
    );
  }
}
console.log(
  `\nresults compared call by call: ${compared - differing} of ${compared} identical${differing ? ` (${differing} DIFFER)` : ''}`,
);
for (const e of Object.values(engines)) await e.close();
process.exit(differing ? 1 : 0);
