/**
 * Latency of scoring 1 KB of text, on one core: median and p99 over distinct texts.
 * To measure another piece (e.g. the whole engine), add an entry to `benchCases()`.
 *
 * Usage: npm run bench:scoring [-- --iterations 3000]
 */
import { performance } from 'node:perf_hooks';
import { createMlDetectors } from '@guard/scoring/ml/index';
import { createLocalEngine } from '@guard/scoring';
import { PRESET_POLICIES } from '@guard/domain';

export interface BenchCase {
  name: string;
  /** Scores one text; called once per sample. */
  run: (text: string) => void;
}

export function benchCases(): BenchCase[] {
  const det = createMlDetectors();
  // The whole local engine as POST /guard/monitor runs it with no policy given: the preset
  // "Basic Content Safety" (11 rules), normalisation, detectors, rule router, tokenizer.
  const engine = createLocalEngine({ detectors: det });
  const basic = PRESET_POLICIES[0]!;
  const rules = Object.entries(basic.rules).map(([name, description]) => ({
    name,
    description,
    mode: 'block' as const,
  }));
  return [
    {
      name: 'full local engine, Basic Content Safety (user text)',
      run: (t) => {
        engine.scoreSync({
          messages: [{ role: 'user', content: t }],
          rules,
          thresholds: basic,
          mode: basic.mode,
          scanners_config: basic.scanners_config,
          reasoning_mode: 'off',
        });
      },
    },
    {
      // The output phase also scores the request and the answer's compliance with it.
      name: 'full local engine, Basic Content Safety (answer after a 60-byte request)',
      run: (t) => {
        engine.scoreSync({
          messages: [
            { role: 'user', content: 'Could you write a short overview of this for my team?' },
            { role: 'assistant', content: t },
          ],
          rules,
          thresholds: basic,
          mode: basic.mode,
          scanners_config: basic.scanners_config,
          reasoning_mode: 'off',
        });
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
  let a = seed >>> 0;
  const rnd = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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

function main(): void {
  const args = process.argv.slice(2);
  const iterations = args.includes('--iterations')
    ? Number(args[args.indexOf('--iterations') + 1])
    : 2000;
  const texts = Array.from({ length: 500 }, (_, i) => makeText(i + 1));
  for (const bench of benchCases()) {
    for (let i = 0; i < 300; i++) bench.run(texts[i % texts.length] ?? '');
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      // Distinct text per sample (the detectors memoise the last few texts).
      const t = `${i} ${texts[i % texts.length] ?? ''}`.slice(0, 1024);
      const t0 = performance.now();
      bench.run(t);
      samples.push((performance.now() - t0) * 1000);
    }
    samples.sort((x, y) => x - y);
    console.log(
      `${bench.name.padEnd(55)} per 1 KB: median ${quantile(samples, 0.5).toFixed(0)} µs, p99 ${quantile(samples, 0.99).toFixed(0)} µs (${iterations} samples)`,
    );
  }
}

main();
