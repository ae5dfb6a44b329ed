/**
 * Latency of scoring 1 KB of text, on one core: median and p99 over distinct texts.
 * To measure another piece (e.g. the whole engine), add an entry to `benchCases()`.
 *
 * Usage: npm run bench:scoring [-- --iterations 3000] [--ordinary | --texts FILE.jsonl [--label L]
 *                               [--role R] [--gated]] [--only SUBSTRING] [--encoder-dir DIR]
 *
 * The texts are 1 KB of generated word salad (English words with some non-ASCII ones); --ordinary
 * uses 1 KB made of whole ordinary requests instead (ordinary-requests.mjs, as bench:scorer
 * sends); --texts measures on the `text` of each row of a JSONL file (as they are, not cut),
 * keeping the rows with that `label` and `role` (absent role: prompt) when given, and with --gated
 * only those the multilingual reader's gate sends on (requests in other languages); --only runs the
 * cases whose name contains SUBSTRING;
 * --encoder-dir adds the cascade with the encoder (model.int8.onnx, encoder.json) of DIR (on user
 * text and on answers to a harmful request), to compare another calibration or model with the
 * shipped one in the same run.
 * The encoder cases run the encoder on this thread (one intra-op thread), as a scoring thread
 * does, without its cache (GUARD_ENCODER_CACHE: samples share windows and requests, which the
 * cache would answer; `npm run bench:conversations` measures it); "share to encoder" is how many samples the encoder stage decided (the jailbreak signal or
 * the harm of the request).
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createMlDetectors } from '@guard/scoring/ml/index';
import { englishGate } from '@guard/scoring/multilingual/gate';
import { loadMultilingualManifest } from '@guard/scoring/multilingual/reader';
import { createDefaultEngine, createLocalEngine, type ScoreRequest } from '@guard/scoring';
import {
  answerMessages,
  answerToHarmfulRequest,
  decidedByEncoder,
  presetScoreFields,
  toolResultMessages,
} from '@guard/testing/score-request';
import { ordinaryText, seeded } from './ordinary-requests.mjs';

export interface BenchCase {
  name: string;
  /** Scores one text; called once per sample. Returns whether the encoder read it, if it can. */
  run: (text: string) => void | Promise<boolean>;
}

/** `encoderDir`: also the cascade with the encoder of that folder (a reference in the same run). */
export async function benchCases(encoderDir?: string): Promise<BenchCase[]> {
  const det = createMlDetectors();
  // The whole local engine as POST /guard/monitor runs it with no policy given: the preset
  // "Basic Content Safety" (11 rules), normalisation, detectors, rule router, tokenizer.
  const engine = createLocalEngine({ detectors: det });
  const basic = await presetScoreFields('Basic Content Safety');
  const request = (messages: ScoreRequest['messages']): ScoreRequest => ({
    messages,
    ...basic,
    reasoning_mode: 'off',
  });
  // The same engine with the jailbreak encoder stage, in each mode (async path, as served).
  // `as`: the text as the user's text, as a tool result after a short request (what the encoder
  // reads in windows for indirect injection), as the answer to a harmful request (whose
  // compliance the encoder reads too, apply-answer.ts), or as an answer after a neutral request
  // (whose own harm the encoder reads when its static harm reaches `answer_harm.route_above`).
  const withEncoder = (
    mode: 'off' | 'cascade' | 'all',
    dir?: string,
    multilingual = true,
    as: 'user text' | 'tool result' | 'answer to a harmful request' | 'answer' = 'user text',
  ): BenchCase => {
    const e = createDefaultEngine({
      encoder: { mode, ...(dir ? { dir } : {}), multilingual, cache: 0 },
    });
    const messages = (t: string): ScoreRequest['messages'] =>
      as === 'tool result'
        ? toolResultMessages(t)
        : as === 'user text'
          ? [{ role: 'user', content: t }]
          : as === 'answer'
            ? answerMessages(t)
            : answerToHarmfulRequest(t);
    return {
      name: `engine + encoder ${mode}, Basic Content Safety (${as}${dir ? `; encoder of ${dir}` : ''}${multilingual ? '' : '; multilingual reader off'})`,
      run: async (t) => decidedByEncoder(await e.score(request(messages(t)))),
    };
  };
  // Three custom rules no detector answers: the cascade also reads every text for their meaning.
  const custom = createDefaultEngine({ encoder: { mode: 'cascade', cache: 0 } });
  const topicRules = [
    ['no alarms', 'Do not set, list or remove alarms.'],
    ['no cooking', 'No recipes or cooking instructions.'],
    ['no weather', 'Do not answer questions about the weather or forecasts.'],
  ].map(([name, description]) => ({
    name: name!,
    description: description!,
    mode: 'block' as const,
  }));
  return [
    withEncoder('off'),
    withEncoder('cascade'),
    // The reference for requests in other languages (--gated): the same cascade without the reader.
    withEncoder('cascade', undefined, false),
    withEncoder('all'),
    ...(encoderDir ? [withEncoder('cascade', encoderDir)] : []),
    withEncoder('off', undefined, true, 'tool result'),
    withEncoder('cascade', undefined, true, 'tool result'),
    withEncoder('all', undefined, true, 'tool result'),
    withEncoder('off', undefined, true, 'answer to a harmful request'),
    withEncoder('cascade', undefined, true, 'answer to a harmful request'),
    ...(encoderDir
      ? [withEncoder('cascade', encoderDir, true, 'answer to a harmful request')]
      : []),
    withEncoder('off', undefined, true, 'answer'),
    withEncoder('cascade', undefined, true, 'answer'),
    ...(encoderDir ? [withEncoder('cascade', encoderDir, true, 'answer')] : []),
    {
      name: 'engine + encoder cascade, Basic Content Safety + 3 custom rules by meaning',
      run: async (t) => {
        const r = await custom.score({
          ...request([{ role: 'user', content: t }]),
          rules: [...basic.rules, ...topicRules],
        });
        return decidedByEncoder(r);
      },
    },
    {
      name: 'full local engine, Basic Content Safety (user text)',
      run: (t) => {
        engine.scoreSync(request([{ role: 'user', content: t }]));
      },
    },
    {
      // The output phase also scores the request and the answer's compliance with it.
      name: 'full local engine, Basic Content Safety (answer after a 60-byte request)',
      run: (t) => {
        engine.scoreSync(
          request([
            { role: 'user', content: 'Could you write a short overview of this for my team?' },
            { role: 'assistant', content: t },
          ]),
        );
      },
    },
    {
      name: 'ml detectors: jailbreak + injection + harm (prompt)',
      run: (t) => {
        det.jailbreak(t);
        det.injection(t, 'prompt');
        det.harm(t, 'prompt');
      },
    },
    {
      name: 'ml detectors: injection + harm (document)',
      run: (t) => {
        det.injection(t, 'document');
        det.harm(t, 'document');
      },
    },
  ];
}

const WORDS =
  'the a to of and in is for on with that this you it be can how what my we please an as are at by from have your will not or do about which when use data file report meeting customer order invoice project team system code function error value python process server email question answer help thanks today week'.split(
    ' ',
  );
const EXTRA = [
  'Grüße',
  'café',
  'naïve',
  '東京',
  'привет',
  'señor',
  'straße',
  '例えば',
  'ÉTÉ',
  'über',
];

function makeText(seed: number, bytes = 1024): string {
  const rnd = seeded(seed);
  let out = '';
  let sentence = 0;
  while (Buffer.byteLength(out, 'utf8') < bytes) {
    const r = rnd();
    const w =
      r < 0.04
        ? (EXTRA[Math.floor(rnd() * EXTRA.length)] ?? 'x')
        : (WORDS[Math.floor(rnd() * WORDS.length)] ?? 'x');
    out += (sentence === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w) + ' ';
    sentence++;
    if (sentence > 8 && rnd() < 0.15) {
      out = out.trimEnd() + (rnd() < 0.2 ? '?\n' : '. ');
      sentence = 0;
    }
  }
  // Trim to exactly `bytes` UTF-8 bytes (on a character boundary).
  while (Buffer.byteLength(out, 'utf8') > bytes) out = out.slice(0, -1);
  return out;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const iterations = Number(arg('--iterations') ?? 2000);
  const file = arg('--texts');
  const ordinary = args.includes('--ordinary');
  const label = arg('--label');
  const role = arg('--role');
  const only = arg('--only');
  const gated = args.includes('--gated');
  const sends = englishGate(loadMultilingualManifest().gate);
  const texts = file
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as { text: string; label?: string; role?: string })
        .filter((r) => label === undefined || r.label === label)
        .filter((r) => role === undefined || (r.role ?? 'prompt') === role)
        .map((r) => r.text)
        .filter((t) => !gated || sends(t))
    : ordinary
      ? Array.from({ length: 500 }, (_, i) => ordinaryText(seeded(i + 1), 1024))
      : Array.from({ length: 500 }, (_, i) => makeText(i + 1));
  const kb = texts.reduce((n, t) => n + Buffer.byteLength(t), 0) / texts.length / 1024;
  console.log(
    file
      ? `${texts.length} texts from ${file}, mean ${(kb * 1024).toFixed(0)} bytes`
      : `500 generated 1 KB texts (${ordinary ? 'ordinary requests' : 'word salad'})`,
  );
  for (const bench of await benchCases(arg('--encoder-dir'))) {
    if (only !== undefined && !bench.name.includes(only)) continue;
    for (let i = 0; i < 300; i++) await bench.run(texts[i % texts.length] ?? '');
    // Models loaded on first use (the multilingual reader) load here, not in a timed sample.
    await bench.run('Xin chào, hôm nay thời tiết ở Hà Nội thế nào?');
    const samples: number[] = [];
    let routed = 0;
    for (let i = 0; i < iterations; i++) {
      // Distinct text per sample (the detectors memoise the last few texts).
      // A file's rows are spread over the samples (files are often grouped by source).
      const base =
        (file ? texts[Math.floor((i * texts.length) / iterations)] : texts[i % texts.length]) ?? '';
      const t = file ? `${i} ${base}` : `${i} ${base}`.slice(0, 1024);
      const t0 = performance.now();
      if ((await bench.run(t)) === true) routed++;
      samples.push((performance.now() - t0) * 1000);
    }
    samples.sort((x, y) => x - y);
    const per = file ? 'per text' : 'per 1 KB';
    const share = bench.name.includes('encoder')
      ? `, share to encoder ${((100 * routed) / iterations).toFixed(1)}%`
      : '';
    console.log(
      `${bench.name.padEnd(58)} ${per}: median ${quantile(samples, 0.5).toFixed(0)} µs, p99 ${quantile(samples, 0.99).toFixed(0)} µs, mean ${(samples.reduce((x, y) => x + y, 0) / iterations).toFixed(0)} µs (${iterations} samples${share})`,
    );
  }
  process.exit(0);
}

await main();
