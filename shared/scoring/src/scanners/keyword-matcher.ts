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
      this.caseTokens = this.tokens.map((t) => ({ word: this.text.slice(t.start, t.end), start: t.start, end: t.end }));
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

export function compileKeywords(keywords: readonly string[], options: KeywordOptions = {}): KeywordMatcher {
  const cs = options.caseSensitive ?? false;
  const byFirst = new Map<string, WordKeyword[]>();
  const fuzzyList: WordKeyword[] = [];
  const literals: LiteralKeyword[] = [];
  keywords.forEach((raw, index) => {
    const k = raw.trim().replace(/\s+/g, ' ');
    if (k.length === 0) return;
    if (WORDISH_RE.test(k)) {
      const words = tokenizeWords(k).map((t) => (cs ? k.slice(t.start, t.end) : t.word));
      if (words.length === 0) return;
      const entry: WordKeyword = { index, words, budgets: words.map((w) => (options.fuzzy ? fuzzyBudget(w.length) : 0)) };
      const first = words[0] ?? '';
      const list = byFirst.get(first) ?? [];
      list.push(entry);
      byFirst.set(first, list);
      if (entry.budgets.some((b) => b > 0)) fuzzyList.push(entry);
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
          for (const k of fuzzyList) {
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

/** The match of `k` starting at token i (with whether any word needed the fuzzy budget), or null. */
function matchSequence(tokens: WordToken[], i: number, k: WordKeyword, allowFuzzy: boolean): { end: number; fuzzy: boolean } | null {
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
