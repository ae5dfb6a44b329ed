/**
 * BERT-style uncased WordPiece tokenizer (basic pre-tokenisation + greedy longest-match), used to
 * look tokens up in the static embedding table distilled from all-MiniLM-L6-v2. The same code
 * featurises the training data (scripts/train/build-dataset.ts), so training and serving agree
 * by construction even where this differs in some corner from the upstream Rust tokenizer.
 */

import { LONG_MARK_RUN_RE } from '../text/char-tables.js';

const MAX_WORD_CHARS = 100;
const CACHE_LIMIT = 50_000;

const PUNCT_RE = /\p{P}/u;
const MARK_RE = /\p{Mn}/u;
const CONTROL_RE = /[\p{Cc}\p{Cf}]/u;

function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

function isAsciiPunct(cp: number): boolean {
  return (
    (cp >= 33 && cp <= 47) ||
    (cp >= 58 && cp <= 64) ||
    (cp >= 91 && cp <= 96) ||
    (cp >= 123 && cp <= 126)
  );
}

function stripAccents(word: string): string {
  // Fast path: pure ASCII has nothing to strip.
  let ascii = true;
  for (let i = 0; i < word.length && ascii; i++) ascii = word.charCodeAt(i) < 128;
  if (ascii) return word;
  let out = '';
  // Marks past the stream-safe limit would be stripped anyway; NFD is quadratic in such runs.
  for (const ch of word.replace(LONG_MARK_RUN_RE, '').normalize('NFD')) {
    if (!MARK_RE.test(ch)) out += ch;
  }
  return out;
}

export class WordPieceTokenizer {
  readonly unkId: number;
  private readonly vocab: Map<string, number>;
  private readonly cache = new Map<string, readonly number[]>();
  /** Longest vocabulary entry (UTF-16 units, "##" included): no longer piece can match. */
  private readonly maxPieceChars: number;

  constructor(tokens: readonly string[]) {
    this.vocab = new Map();
    let longest = 1;
    tokens.forEach((t, i) => {
      if (!this.vocab.has(t)) this.vocab.set(t, i);
      longest = Math.max(longest, t.length);
    });
    this.unkId = this.vocab.get('[UNK]') ?? 0;
    this.maxPieceChars = longest;
  }

  /** Basic tokenisation: lower-case, strip accents, split on whitespace and punctuation, isolate CJK ideographs. */
  basicTokens(text: string): string[] {
    const words: string[] = [];
    let cur = '';
    const flush = (): void => {
      if (cur.length > 0) {
        words.push(cur);
        cur = '';
      }
    };
    for (const ch of text) {
      const cp = ch.codePointAt(0) ?? 0;
      if (cp === 32 || cp === 9 || cp === 10 || cp === 13) {
        flush();
        continue;
      }
      if (cp < 128) {
        if (isAsciiPunct(cp)) {
          flush();
          words.push(ch);
        } else if (cp > 32 && cp !== 127) {
          cur += ch;
        }
        // Other ASCII control characters are dropped without ending the word, as the reference
        // tokenizer's text cleaning does ("control\u0000chars" is one word).
        continue;
      }
      if (cp === 0xfffd || CONTROL_RE.test(ch)) continue;
      if (/\s/u.test(ch)) {
        flush();
        continue;
      }
      if (isCjk(cp) || PUNCT_RE.test(ch)) {
        flush();
        words.push(ch);
        continue;
      }
      cur += ch;
    }
    flush();
    return words;
  }

  /** Token ids for one pre-tokenised word (lower-cased and accent-stripped here). */
  wordIds(rawWord: string): readonly number[] {
    const hit = this.cache.get(rawWord);
    if (hit !== undefined) return hit;
    const word = stripAccents(rawWord.toLowerCase());
    let ids: number[];
    if (word.length === 0) {
      ids = [];
    } else if (word.length > MAX_WORD_CHARS) {
      ids = [this.unkId];
    } else {
      ids = [];
      let start = 0;
      while (start < word.length) {
        // Longest match first, but never from a piece longer than any vocabulary entry: same
        // tokens, and O(word x longest entry) instead of O(word^2) (18 vs 100 for a 100-char word).
        let end = Math.min(word.length, start + this.maxPieceChars);
        let found = -1;
        while (end > start) {
          const piece = start === 0 ? word.slice(start, end) : '##' + word.slice(start, end);
          const id = this.vocab.get(piece);
          if (id !== undefined) {
            found = id;
            break;
          }
          end--;
        }
        if (found < 0) {
          ids = [this.unkId];
          break;
        }
        ids.push(found);
        start = end;
      }
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(rawWord, ids);
    return ids;
  }

  /** Whether `token` is a vocabulary entry (a whole word, for one without "##"). */
  has(token: string): boolean {
    return this.vocab.has(token);
  }

  /** Id of a vocabulary entry (special tokens such as "[CLS]" included); throws when absent. */
  idOf(token: string): number {
    const id = this.vocab.get(token);
    if (id === undefined) throw new Error(`"${token}" is not in the vocabulary`);
    return id;
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const w of this.basicTokens(text)) {
      for (const id of this.wordIds(w)) out.push(id);
    }
    return out;
  }
}
