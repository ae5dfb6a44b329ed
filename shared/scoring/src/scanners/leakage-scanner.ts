/**
 * System-prompt leakage: how much of a protected prompt an output reproduces, by word n-gram
 * overlap (order-preserving, robust to re-wrapping, case and punctuation). Indexes are cached per
 * prompt text, so a policy's prompt is tokenised once.
 */
import { wordsOf } from '../text/words.js';

export interface LeakageIndex {
  ngramSize: number;
  grams: ReadonlySet<string>;
  promptWords: number;
}

export interface LeakageResult {
  /** In [0, 1]: 0.5 means "a substantial part" (~40% of the prompt, or ~30 words verbatim). */
  score: number;
  /** Share of the prompt's distinct n-grams found in the output. */
  coverage: number;
  /** Output words covered by matching n-grams. */
  matchedWords: number;
}

const MAX_INDEXES = 256;
const indexCache = new Map<string, LeakageIndex>();

export function leakageIndex(prompt: string, ngramSize = 5): LeakageIndex {
  const key = `${ngramSize}\u0000${prompt}`;
  const hit = indexCache.get(key);
  if (hit) return hit;
  const words = wordsOf(prompt);
  // Very short prompts: use the whole prompt as one n-gram rather than nothing.
  const n = Math.max(3, Math.min(ngramSize, words.length));
  const grams = new Set<string>();
  for (let i = 0; i + n <= words.length; i++) grams.add(words.slice(i, i + n).join(' '));
  const index: LeakageIndex = { ngramSize: n, grams, promptWords: words.length };
  if (indexCache.size >= MAX_INDEXES) {
    const first = indexCache.keys().next();
    if (!first.done) indexCache.delete(first.value);
  }
  indexCache.set(key, index);
  return index;
}

export function scanLeakage(output: string, index: LeakageIndex): LeakageResult {
  const none: LeakageResult = { score: 0, coverage: 0, matchedWords: 0 };
  if (index.grams.size === 0) return none;
  const words = wordsOf(output);
  const n = index.ngramSize;
  if (words.length < n) return none;
  const matched = new Set<string>();
  let covered = 0;
  let coveredUntil = -1;
  for (let i = 0; i + n <= words.length; i++) {
    const gram = words.slice(i, i + n).join(' ');
    if (!index.grams.has(gram)) continue;
    matched.add(gram);
    const from = Math.max(i, coveredUntil + 1);
    covered += i + n - from;
    coveredUntil = i + n - 1;
  }
  if (matched.size === 0) return none;
  const coverage = matched.size / index.grams.size;
  let score = Math.min(1, Math.max(coverage * 1.25, covered / 60));
  // A handful of shared words ("you are a helpful assistant") is not a leak of anything.
  if (covered < 8) score = Math.min(score, 0.3);
  return { score: round(score), coverage: round(coverage), matchedWords: covered };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
