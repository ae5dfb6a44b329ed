/**
 * Keyword and phrase matching, exact or fuzzy, over word tokens. Used by the `keywords` scanner
 * and by the rule router for quoted phrases and listed terms. Phrases with meaningful punctuation
 * ("rm -rf /", "C++") are matched as literal substrings instead of word sequences.
 */
import { boundedLevenshtein, fuzzyBudget, tokenizeWords, type WordToken } from '../text/words.js';

export interface KeywordHit {
  /** Index of the keyword in the list it was compiled from. */
  keyword: number;
  start: number;
  end: number;
  fuzzy: boolean;
}

export interface KeywordMatcher {
  readonly size: number;
  find(view: TextView, limit?: number): KeywordHit[];
}

export interface KeywordOptions {
  fuzzy?: boolean;
  caseSensitive?: boolean;
}

/** A text with its tokenisations, computed on first use and shared by every matcher. */
export class TextView {
  private lowerTokens?: WordToken[];
  private caseTokens?: WordToken[];
  private lowerText?: string;
  constructor(readonly text: string) {}

  get tokens(): WordToken[] {
    this.lowerTokens ??= tokenizeWords(this.text);
    return this.lowerTokens;
  }

  get casedTokens(): WordToken[] {
    if (!this.caseTokens) {
      this.caseTokens = this.tokens.map((t) => ({
        word: this.text.slice(t.start, t.end),
        start: t.start,
        end: t.end,
      }));
    }
    return this.caseTokens;
  }

  get lower(): string {
    this.lowerText ??= this.text.toLowerCase();
    return this.lowerText;
  }
}

interface WordKeyword {
  index: number;
  words: string[];
  budgets: number[];
}

interface LiteralKeyword {
  index: number;
  literal: string;
  wordStart: boolean;
  wordEnd: boolean;
}

const WORDISH_RE = /^[\p{L}\p{N}\s'’-]+$/u;
const WORD_CHAR_RE = /[\p{L}\p{N}_]/u;

export function compileKeywords(
  keywords: readonly string[],
  options: KeywordOptions = {},
): KeywordMatcher {
  const cs = options.caseSensitive ?? false;
  const byFirst = new Map<string, WordKeyword[]>();
  // A first word without a budget never matches fuzzily (an exact first word is handled through
  // `byFirst`), so only first words with a budget are indexed.
  const fuzzy = new FuzzyIndex();
  const literals: LiteralKeyword[] = [];
  keywords.forEach((raw, index) => {
    const k = raw.trim().replace(/\s+/g, ' ');
    if (k.length === 0) return;
    if (WORDISH_RE.test(k)) {
      const words = tokenizeWords(k).map((t) => (cs ? k.slice(t.start, t.end) : t.word));
      if (words.length === 0) return;
      const entry: WordKeyword = {
        index,
        words,
        budgets: words.map((w) => (options.fuzzy ? fuzzyBudget(w.length) : 0)),
      };
      const first = words[0] ?? '';
      const list = byFirst.get(first) ?? [];
      list.push(entry);
      byFirst.set(first, list);
      const firstBudget = entry.budgets[0] ?? 0;
      if (firstBudget > 0) fuzzy.add(entry, first, firstBudget);
    } else {
      const literal = cs ? k : k.toLowerCase();
      literals.push({
        index,
        literal,
        wordStart: WORD_CHAR_RE.test(literal[0] ?? ''),
        wordEnd: WORD_CHAR_RE.test(literal[literal.length - 1] ?? ''),
      });
    }
  });
  const size = keywords.length;

  return {
    size,
    find(view: TextView, limit = 50): KeywordHit[] {
      const hits: KeywordHit[] = [];
      if (byFirst.size > 0) {
        const tokens = cs ? view.casedTokens : view.tokens;
        for (let i = 0; i < tokens.length && hits.length < limit; i++) {
          const t = tokens[i];
          if (!t) continue;
          const exact = byFirst.get(t.word);
          if (exact) {
            for (const k of exact) {
              const m = matchSequence(tokens, i, k, true);
              if (m) hits.push({ keyword: k.index, start: t.start, end: m.end, fuzzy: m.fuzzy });
            }
          }
          for (const k of fuzzy.candidates(t.word)) {
            if (exact?.includes(k)) continue;
            const first = k.words[0] ?? '';
            if (Math.abs(first.length - t.word.length) > (k.budgets[0] ?? 0)) continue;
            const m = matchSequence(tokens, i, k, true);
            if (m) hits.push({ keyword: k.index, start: t.start, end: m.end, fuzzy: true });
          }
        }
      }
      if (literals.length > 0) {
        const hay = cs ? view.text : view.lower;
        for (const k of literals) {
          let from = 0;
          while (hits.length < limit) {
            const at = hay.indexOf(k.literal, from);
            if (at < 0) break;
            const end = at + k.literal.length;
            const okStart = !k.wordStart || at === 0 || !WORD_CHAR_RE.test(hay[at - 1] ?? '');
            const okEnd = !k.wordEnd || end === hay.length || !WORD_CHAR_RE.test(hay[end] ?? '');
            if (okStart && okEnd) hits.push({ keyword: k.index, start: at, end, fuzzy: false });
            from = at + 1;
          }
        }
      }
      return hits;
    },
  };
}

/**
 * Candidates for fuzzy first-word matches (a symmetric-delete index): a word within edit distance
 * b of a first word shares with it a string reached by deleting at most b characters from each.
 * First words are indexed under their deletions, a token looks up its own, and only the keywords
 * found that way are compared letter by letter. Comparing each token with every keyword of about
 * its length took 4 s for 200 KB of unknown words against 1,000 keywords; this is ~50 lookups for
 * a 9-letter token. First words over MAX_INDEXED characters (their deletion sets grow with the
 * square of the length) are compared directly, by length.
 */
const MAX_INDEXED = 20;
const CANDIDATE_CACHE = 10_000;

class FuzzyIndex {
  private readonly byDeletion = new Map<string, WordKeyword[]>();
  /** First words over MAX_INDEXED characters, by length. */
  private readonly longByLength = new Map<number, WordKeyword[]>();
  private readonly longCandidates = new Map<number, readonly WordKeyword[]>();
  private readonly cache = new Map<string, readonly WordKeyword[]>();
  private maxBudget = 0;
  private longest = 0;

  add(entry: WordKeyword, first: string, budget: number): void {
    this.maxBudget = Math.max(this.maxBudget, budget);
    this.longest = Math.max(this.longest, first.length);
    if (first.length > MAX_INDEXED) {
      const list = this.longByLength.get(first.length);
      if (list) list.push(entry);
      else this.longByLength.set(first.length, [entry]);
      return;
    }
    for (const d of deletions(first, budget)) {
      const list = this.byDeletion.get(d);
      if (list) list.push(entry);
      else this.byDeletion.set(d, [entry]);
    }
  }

  /** Keywords whose first word may be within its budget of `word`, in keyword order. */
  candidates(word: string): readonly WordKeyword[] {
    if (this.maxBudget === 0 || word.length > this.longest + this.maxBudget) return [];
    const long = this.long(word.length);
    if (word.length > MAX_INDEXED + this.maxBudget) return long;
    let out = this.cache.get(word);
    if (out) return out;
    const found = new Set<WordKeyword>(long);
    for (const d of deletions(word, this.maxBudget))
      for (const k of this.byDeletion.get(d) ?? []) found.add(k);
    out = found.size === long.length ? long : [...found].sort((a, b) => a.index - b.index);
    if (this.cache.size >= CANDIDATE_CACHE) this.cache.clear();
    this.cache.set(word, out);
    return out;
  }

  /** Long first words within `maxBudget` characters of `length`, in keyword order. */
  private long(length: number): readonly WordKeyword[] {
    if (this.longByLength.size === 0) return [];
    let out = this.longCandidates.get(length);
    if (!out) {
      const list: WordKeyword[] = [];
      for (let l = length - this.maxBudget; l <= length + this.maxBudget; l++)
        for (const k of this.longByLength.get(l) ?? []) list.push(k);
      out = list.sort((a, b) => a.index - b.index);
      this.longCandidates.set(length, out);
    }
    return out;
  }
}

/** `word` and every string made from it by deleting at most `max` characters. */
function deletions(word: string, max: number): Set<string> {
  const out = new Set<string>([word]);
  let frontier = [word];
  for (let k = 0; k < max; k++) {
    const next: string[] = [];
    for (const w of frontier) {
      for (let i = 0; i < w.length; i++) {
        const d = w.slice(0, i) + w.slice(i + 1);
        if (!out.has(d)) {
          out.add(d);
          next.push(d);
        }
      }
    }
    frontier = next;
  }
  return out;
}

/** The match of `k` starting at token i (with whether any word needed the fuzzy budget), or null. */
function matchSequence(
  tokens: WordToken[],
  i: number,
  k: WordKeyword,
  allowFuzzy: boolean,
): { end: number; fuzzy: boolean } | null {
  let end = -1;
  let fuzzy = false;
  for (let j = 0; j < k.words.length; j++) {
    const t = tokens[i + j];
    const w = k.words[j];
    if (!t || w === undefined) return null;
    if (t.word !== w) {
      const budget = allowFuzzy ? (k.budgets[j] ?? 0) : 0;
      if (budget === 0 || boundedLevenshtein(t.word, w, budget) > budget) return null;
      fuzzy = true;
    }
    end = t.end;
  }
  return { end, fuzzy };
}
