/**
 * Worst-case input: scoring time per KB through the whole local engine (preset Basic Content
 * Safety, one user message), for adversarial shapes at 1, 10, 100 and 200 KB, on one core.
 * A KB here is 1,000 characters (UTF-16 units), so 200 KB is the request limit of 200,000.
 *
 * Flatness is the per-KB time at the largest size over the per-KB time at 10 KB: about 1 when
 * the cost is linear (below 1 where fixed costs, such as the encoder's reads of a long text's
 * opening and end, spread over more text), about 20 at 200 KB when it is quadratic. `--check` exits 1 when a shape's flatness exceeds 3.
 *
 * Usage: npm run bench:worst-case [-- --check] [-- --sizes 1,10,100,200] [-- --encoder MODE]
 *                                 [-- --encoder-dir DIR] [-- --no-multilingual]
 *                                 [-- --tool-result | --answer | --answer-alone]
 *
 * Without --encoder: the static detectors alone (the synchronous path). With --encoder off,
 * cascade or all: the default engine's asynchronous path with the jailbreak encoder stage in that
 * mode, run on this thread (--encoder-dir: the encoder and its encoder.json from DIR instead of the
 * shipped one, to compare two manifests); with it, requests in other languages up to 400
 * characters are also read by the multilingual reader (when installed) unless --no-multilingual
 * (sizes under 0.4 reach it).
 * --tool-result sends the text as a tool result after a short request instead of as the user's
 * message: what the encoder stage reads in windows for indirect injection (apply-documents.ts).
 * --answer sends it as the model's answer to a harmful request (the output phase: the answer is
 * judged in context, its compliance read by the encoder too, apply-answer.ts); --answer-alone as
 * the answer after a neutral request (judged on its own text, whose harm the encoder reads too).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createMlDetectors } from '@guard/scoring/ml/index';
import {
  createDefaultEngine,
  createLocalEngine,
  type ScoreRequest,
  type ScoreResult,
} from '@guard/scoring';
import {
  answerMessages,
  answerToHarmfulRequest,
  presetScoreFields,
  toolResultMessages,
} from '@guard/testing/score-request';
import { seeded } from '@guard/testing/seeded';

const KB = 1000;
const FLATNESS_LIMIT = 3;

/** `unit` repeated to exactly n UTF-16 units (never ending inside a surrogate pair). */
function fill(unit: string, n: number): string {
  let s = unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  if (/[\ud800-\udbff]$/.test(s)) s = s.slice(0, -1);
  return s;
}

function randomLetters(n: number, rnd: () => number): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let s = '';
  for (let i = 0; i < n; i++) s += letters[Math.floor(rnd() * 26)] ?? 'a';
  return s;
}

const SENTENCES = [
  'Could you help me write a short email to the team about moving the Thursday meeting to next week?',
  'The quarterly report shows that revenue grew by eight percent, mostly from new customers in Europe.',
  'I am planning a trip to Lisbon in May and would like a three-day itinerary with good local food.',
  'Please explain the difference between a process and a thread, with a small example in Python.',
  'Our invoice system sometimes sends the same reminder twice; where should I start looking for the bug?',
  'Summarise the main arguments of the article below in five bullet points for a busy reader.',
  'What are the pros and cons of renting versus buying a flat in a city where prices keep rising?',
  'My tomato plants have yellow leaves at the bottom, and I water them every morning before work.',
  'Translate the following paragraph into plain English so that a new employee can understand it.',
  'The customer asked whether the order can be delivered on Saturday, and whether the box is recyclable.',
  'Write a friendly reminder that the office will be closed on Monday for the public holiday.',
  'I need a recipe for a vegetarian lasagne that can be prepared the evening before and baked later.',
];

interface Shape {
  name: string;
  /** A text of n UTF-16 units; `rnd` varies it between samples where the shape allows. */
  make(n: number, rnd: () => number): string;
}

const SHAPES: Shape[] = [
  { name: "one character repeated ('a')", make: (n) => fill('a', n) },
  { name: "two characters alternating ('ab')", make: (n) => fill('ab', n) },
  {
    // At 200 KB: two such words with a space between them.
    name: 'one 100 KB word (random letters)',
    make: (n, rnd) => {
      const words: string[] = [];
      for (let left = n; left > 0; left -= 100 * KB + 1)
        words.push(randomLetters(Math.min(left, 100 * KB), rnd));
      return words.join(' ').slice(0, n);
    },
  },
  { name: "one-letter words ('a a a ...')", make: (n) => fill('a ', n) },
  // Lines of a character that makes no WordPiece token: at any size one encoder window holds
  // them, so the input is read in windows and its lines are sentences (harm_parts).
  { name: 'control characters, one per line', make: (n) => fill('\u0001\n', n) },
  { name: "combining marks ('e' + U+0301)", make: (n) => fill('e\u0301', n) },
  {
    name: 'zalgo (3-6 stacked marks per letter)',
    make: (n) =>
      fill(
        'h\u0315\u0327\u0350e\u0301\u0316\u0300\u0352l\u0334\u0330\u0353\u0347\u0348\u0349l\u0303\u0324\u035co\u0308\u0331\u035d\u0338\u0346 ',
        n,
      ),
  },
  {
    name: 'mixed scripts, interleaved per character',
    make: (n) => fill('aЖ中ع😀bД字م👍cЯ語ل🎉', n),
  },
  {
    name: 'realistic English (reference)',
    make: (n, rnd) => {
      let s = '';
      while (s.length < n)
        s += (SENTENCES[Math.floor(rnd() * SENTENCES.length)] ?? '') + (rnd() < 0.2 ? '\n\n' : ' ');
      return s.slice(0, n);
    },
  },
];

function parseSizes(args: string[]): number[] {
  const i = args.indexOf('--sizes');
  const raw = i >= 0 ? (args[i + 1] ?? '') : '1,10,100,200';
  const sizes = raw.split(',').map(Number);
  if (sizes.length === 0 || sizes.some((s) => !Number.isFinite(s) || s <= 0))
    throw new Error(`bad --sizes "${raw}"`);
  return sizes;
}

/** Samples per size: more for small sizes, whose times are short and noisy. */
function samplesFor(sizeKb: number): number {
  if (sizeKb <= 1) return 15;
  if (sizeKb <= 10) return 7;
  return 3;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const encoderArg = args.includes('--encoder') ? args[args.indexOf('--encoder') + 1] : undefined;
  if (encoderArg !== undefined && !['off', 'cascade', 'all'].includes(encoderArg))
    throw new Error(`bad --encoder "${encoderArg}" (off, cascade or all)`);
  const encoderDir = args.includes('--encoder-dir')
    ? args[args.indexOf('--encoder-dir') + 1]
    : undefined;
  if (encoderDir !== undefined && encoderArg === undefined)
    throw new Error('--encoder-dir needs --encoder MODE');
  const check = args.includes('--check');
  const sizes = parseSizes(args);
  const preset = 'Basic Content Safety';
  const basic = await presetScoreFields(preset);
  const toolResult = args.includes('--tool-result');
  const answer = args.includes('--answer');
  const alone = args.includes('--answer-alone');
  if ([toolResult, answer, alone].filter(Boolean).length > 1)
    throw new Error('--tool-result, --answer and --answer-alone: one of them');
  const request = (text: string): ScoreRequest => ({
    messages: toolResult
      ? toolResultMessages(text)
      : answer
        ? answerToHarmfulRequest(text)
        : alone
          ? answerMessages(text)
          : [{ role: 'user', content: text }],
    ...basic,
    reasoning_mode: 'off',
  });
  const encoderMode = encoderArg as 'off' | 'cascade' | 'all' | undefined;
  const engine = encoderMode
    ? createDefaultEngine({
        // Without the encoder's cache: a text of repeated windows would be read once, and the
        // bound to measure is that of distinct windows, which an attacker can always send.
        encoder: {
          mode: encoderMode,
          ...(encoderDir ? { dir: encoderDir } : {}),
          multilingual: !args.includes('--no-multilingual'),
          cache: 0,
        },
      })
    : createLocalEngine({ detectors: createMlDetectors() });
  const score = (r: ScoreRequest): Promise<ScoreResult> | ScoreResult =>
    encoderMode ? engine.score(r) : engine.scoreSync(r);

  console.log(
    `Worst-case scoring time per KB: whole local engine${encoderMode ? `, encoder ${encoderMode}` : ''}, preset "${preset}", ${toolResult ? 'a tool result after a short request' : answer ? 'the answer to a harmful request' : alone ? 'an answer after a neutral request' : 'user message'}.`,
  );
  console.log(
    `node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${new Date().toISOString().slice(0, 10)}; 1 KB = ${KB} characters; median of ${sizes.map(samplesFor).join('/')} samples.\n`,
  );

  const ref = sizes.includes(10) ? 10 : (sizes[0] ?? 1);
  const last = sizes[sizes.length - 1] ?? ref;
  const header = `| shape | ${sizes.map((s) => `${s} KB: ms (ms/KB)`).join(' | ')} | flatness ${last}/${ref} KB |`;
  console.log(header);
  console.log(`|---|${sizes.map(() => '---|').join('')}---|`);

  const notFlat: string[] = [];
  let seed = 1;
  for (const shape of SHAPES) {
    // Warm-up: JIT and the tokenizer's piece cache, as on a server that has been running.
    await score(request(shape.make(KB, seeded(seed++))));
    const perKb = new Map<number, number>();
    const cells: string[] = [];
    for (const size of sizes) {
      const times: number[] = [];
      for (let k = 0; k < samplesFor(size); k++) {
        // A distinct text per sample (the detectors memoise the last few): its number, then the shape.
        const sample = `${seed} `;
        const text = sample + shape.make(size * KB - sample.length, seeded(seed++));
        const t0 = performance.now();
        const result = await score(request(text));
        times.push(performance.now() - t0);
        if (result.error)
          throw new Error(`${shape.name} at ${size} KB: ${result.error_message ?? 'error'}`);
      }
      const ms = median(times);
      perKb.set(size, ms / size);
      cells.push(`${ms.toFixed(ms < 10 ? 2 : 0)} (${(ms / size).toFixed(2)})`);
    }
    const flatness = (perKb.get(last) ?? NaN) / (perKb.get(ref) ?? NaN);
    const flag = flatness > FLATNESS_LIMIT ? ' NOT FLAT' : '';
    if (flag) notFlat.push(shape.name);
    console.log(`| ${shape.name} | ${cells.join(' | ')} | ${flatness.toFixed(2)}${flag} |`);
  }
  if (notFlat.length > 0) {
    console.log(
      `\nNOT FLAT (per-KB time grows more than ${FLATNESS_LIMIT}x from ${ref} to ${last} KB): ${notFlat.join('; ')}`,
    );
    if (check) process.exitCode = 1;
  }
}

await main();
