/**
 * Featurisation shared by training (scripts/train/build-dataset.ts) and serving, so the two can
 * never drift: text -> segments -> per segment (a) hashed word/char n-gram bucket ids, (b) a dense
 * vector = static sentence embedding + hand-written statistics + role.
 */
import type { TextRole } from '../detectors.js';
import type { WordPieceTokenizer } from './wordpiece.js';

export const HASH_BITS = 18;
export const HASH_MASK = (1 << HASH_BITS) - 1;
export const MAX_SEGMENT_CHARS = 400;
const SHORT_LINE = 60;
export const HAND_FEATURES = 16;
export const ROLES: readonly TextRole[] = ['prompt', 'response', 'document'];
export const CHAR_CLASSES = 64;
const CHAR_START = 63;
const LM_WINDOW = 16;

export interface TextSegment {
  start: number;
  end: number;
}

/** Static token embedding table: int8 rows with a float scale per row. */
export interface EmbeddingTable {
  dims: number;
  scales: Float32Array;
  rows: Int8Array;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 0x3000 || c === 0xa0;
}

function isTerminal(c: number): boolean {
  // . ! ? and their CJK full-width forms
  return c === 46 || c === 33 || c === 63 || c === 0x3002 || c === 0xff01 || c === 0xff1f;
}

/**
 * Splits text into segments of at most `maxChars` (MAX_SEGMENT_CHARS) UTF-16 units at line and
 * sentence boundaries; with `merge` false, each sentence or line is a segment of its own.
 * Detectors score each segment and take the maximum, so an instruction hidden in the middle of a
 * long document is not averaged away, and the winning segment is the evidence.
 */
export function segmentText(
  text: string,
  maxChars = MAX_SEGMENT_CHARS,
  merge = true,
): TextSegment[] {
  const n = text.length;
  // Pieces end after a newline or after sentence punctuation followed by whitespace; each piece
  // remembers the length of the line it belongs to.
  const pieces: (TextSegment & { line: number })[] = [];
  let s = 0;
  let lineStart = 0;
  const lineOf: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      pieces.push({ start: s, end: i + 1, line: 0 });
      for (let k = lineOf.length; k < pieces.length; k++) lineOf.push(i + 1 - lineStart);
      s = i + 1;
      lineStart = i + 1;
    } else if (isTerminal(c) && (i + 1 === n || isSpace(text.charCodeAt(i + 1)))) {
      pieces.push({ start: s, end: i + 1, line: 0 });
      s = i + 1;
    }
  }
  if (s < n) pieces.push({ start: s, end: n, line: 0 });
  for (let k = lineOf.length; k < pieces.length; k++) lineOf.push(n - lineStart);
  pieces.forEach((p, k) => (p.line = lineOf[k] ?? 0));

  const out: TextSegment[] = [];
  let cur: TextSegment | null = null;
  let curLine = 0;
  for (const p of pieces) {
    const len = p.end - p.start;
    if (len > maxChars) {
      if (cur) out.push(cur);
      cur = null;
      for (let a = p.start; a < p.end; a += maxChars)
        out.push({ start: a, end: Math.min(p.end, a + maxChars) });
    } else if (
      merge &&
      cur &&
      cur.end - cur.start + len <= maxChars &&
      // Lines of SHORT_LINE or more stand alone (a planted instruction is not diluted by its
      // neighbours); short lines (greetings, table fragments) and sentences of one line merge.
      !(text.charCodeAt(cur.end - 1) === 10 && (curLine >= SHORT_LINE || p.line >= SHORT_LINE))
    ) {
      cur.end = p.end;
      curLine = p.line;
    } else {
      if (cur) out.push(cur);
      cur = { start: p.start, end: p.end };
      curLine = p.line;
    }
  }
  if (cur) out.push(cur);
  const kept = out.filter((seg) => /\S/u.test(text.slice(seg.start, seg.end)));
  return kept.length > 0 ? kept : [{ start: 0, end: n }];
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function fnvStr(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

function bucket(h: number): number {
  h >>>= 0;
  return (h ^ (h >>> 15)) & HASH_MASK;
}

const WORD_RE = /[\p{L}\p{N}\p{M}_]+/gu;
const PUNCT_RUN_RE = /[^\p{L}\p{N}\p{M}_\s]+/gu;

/** Growable buffer of bucket ids (reused between calls to keep allocation off the hot path). */
export class BucketBuffer {
  data = new Uint32Array(4096);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/**
 * Hashed sparse features of one segment: word unigrams and bigrams, character 3-5-grams over the
 * lower-cased word sequence, and runs of punctuation/symbols. Appends bucket ids to `out`.
 */
export function sparseFeatures(segment: string, out: BucketBuffer): void {
  const lower = segment.toLowerCase();
  const words = lower.match(WORD_RE) ?? [];
  let prev: string | null = null;
  for (const w of words) {
    out.push(bucket(fnvStr(Math.imul(FNV_OFFSET ^ 1, FNV_PRIME), w)));
    if (prev !== null) {
      let h = fnvStr(Math.imul(FNV_OFFSET ^ 2, FNV_PRIME), prev);
      h = Math.imul(h ^ 32, FNV_PRIME);
      out.push(bucket(fnvStr(h, w)));
    }
    prev = w;
  }
  const z = ' ' + words.join(' ') + ' ';
  const seed = Math.imul(FNV_OFFSET ^ 3, FNV_PRIME);
  for (let i = 0; i + 3 <= z.length; i++) {
    let h = seed;
    for (let k = 0; k < 5 && i + k < z.length; k++) {
      h = Math.imul(h ^ z.charCodeAt(i + k), FNV_PRIME);
      if (k >= 2) out.push(bucket(h));
    }
  }
  const runs = segment.match(PUNCT_RUN_RE);
  if (runs) {
    const pseed = Math.imul(FNV_OFFSET ^ 4, FNV_PRIME);
    for (const r of runs) out.push(bucket(fnvStr(pseed, r.slice(0, 6))));
  }
}

/** Maps a UTF-16 unit to one of 63 classes for the character bigram language model. */
export function charClass(c: number): number {
  if (c >= 97 && c <= 122) return c - 97;
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 48 && c <= 57) return 26;
  if (isSpace(c)) return 27;
  if (c < 128) {
    // printable ASCII punctuation: 33-47, 58-64, 91-96, 123-126 (32 symbols)
    if (c >= 33 && c <= 47) return 28 + (c - 33);
    if (c >= 58 && c <= 64) return 43 + (c - 58);
    if (c >= 91 && c <= 96) return 50 + (c - 91);
    if (c >= 123 && c <= 126) return 56 + (c - 123);
    return 61;
  }
  return c >= 0xd800 && c <= 0xdfff ? 61 : 60;
}

/** Character bigram log-probabilities, `CHAR_CLASSES x CHAR_CLASSES`, trained on benign prompts. */
export type CharLm = Float32Array;

const lmRing = new Float64Array(LM_WINDOW);

export function charLmStats(segment: string, lm: CharLm): { mean: number; min: number } {
  const n = segment.length;
  if (n === 0) return { mean: 0, min: 0 };
  let prev = CHAR_START;
  let total = 0;
  let win = 0;
  let min = Infinity;
  for (let i = 0; i < n; i++) {
    const cc = charClass(segment.charCodeAt(i));
    const v = lm[prev * CHAR_CLASSES + cc]!;
    total += v;
    prev = cc;
    // Sliding window of the last LM_WINDOW log-probabilities, kept in a ring buffer.
    const slot = i % LM_WINDOW;
    if (i >= LM_WINDOW) win -= lmRing[slot]!;
    lmRing[slot] = v;
    win += v;
    if (i >= LM_WINDOW - 1 && win < min) min = win;
  }
  const mean = total / n;
  if (n <= LM_WINDOW) return { mean, min: mean };
  return { mean, min: min / LM_WINDOW };
}

/** Generation-stamped "seen" table for counting distinct UTF-16 units without allocating a Set. */
const seenStamp = new Uint32Array(65536);
let seenGeneration = 0;
function nextSeenGeneration(): number {
  seenGeneration = (seenGeneration + 1) >>> 0;
  if (seenGeneration === 0) {
    seenStamp.fill(0);
    seenGeneration = 1;
  }
  return seenGeneration;
}

const LETTER_RE = /\p{L}/u;
const UPPER_RE = /\p{Lu}/u;
const NUMBER_RE = /\p{N}/u;
const CAMEL_RE = /\p{Ll}\p{Lu}/u;

export interface TokenResources {
  tokenizer: WordPieceTokenizer;
  /** 1 where the vocabulary entry is a `##` continuation piece, 2 where it is a lone punctuation mark. */
  tokenKinds: Uint8Array;
  charLm: CharLm;
}

/** Training-time resources: the static embedding table itself (serving uses its projection). */
export interface FeaturizerResources extends TokenResources {
  embeddings: EmbeddingTable;
}

/** Hand-written statistics plus the one-hot role: the dense inputs besides the embedding. */
export const REST_FEATURES = HAND_FEATURES + ROLES.length;

export function denseDim(res: FeaturizerResources): number {
  return res.embeddings.dims + REST_FEATURES;
}

/** Growable list of token ids (reused between calls). */
export class TokenBuffer {
  data = new Int32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/**
 * Dense vector of one segment for training: mean of static token vectors (unknown tokens
 * skipped), then the REST_FEATURES of `segmentStats`. Serving computes the same first layer
 * through a projected token table, so the mean is not normalised here.
 */
export function denseFeatures(
  segment: string,
  role: TextRole,
  res: FeaturizerResources,
  out: Float32Array,
): void {
  const dims = res.embeddings.dims;
  const tokens = new TokenBuffer();
  const rest = out.subarray(dims, dims + REST_FEATURES);
  segmentStats(segment, role, res, tokens, rest);
  out.fill(0, 0, dims);
  const { scales, rows } = res.embeddings;
  for (let i = 0; i < tokens.length; i++) {
    const id = tokens.data[i]!;
    const sc = scales[id]!;
    const base = id * dims;
    for (let d = 0; d < dims; d++) out[d]! += rows[base + d]! * sc;
  }
  if (tokens.length > 0) for (let d = 0; d < dims; d++) out[d]! /= tokens.length;
}

/**
 * Tokenises a segment into `tokens` (known word pieces only) and writes `rest`: hand-written
 * statistics (character classes, tokenisation fragmentation, character language-model surprise:
 * optimised gibberish suffixes are rare character sequences split into many word pieces) and
 * the one-hot role.
 */
export function segmentStats(
  segment: string,
  role: TextRole,
  res: TokenResources,
  tokens: TokenBuffer,
  rest: Float32Array,
): void {
  tokens.length = 0;
  rest.fill(0);
  const words = res.tokenizer.basicTokens(segment);
  let nTok = 0;
  let nCont = 0;
  let nUnk = 0;
  let nPunctTok = 0;
  let nWords = 0;
  let nCamel = 0;
  let nLong = 0;
  for (const w of words) {
    const ids = res.tokenizer.wordIds(w);
    const isWord = !(w.length === 1 && !LETTER_RE.test(w) && !NUMBER_RE.test(w));
    if (isWord) {
      nWords++;
      if (CAMEL_RE.test(w)) nCamel++;
      if (w.length > 15) nLong++;
    }
    for (const id of ids) {
      nTok++;
      const kind = res.tokenKinds[id] ?? 0;
      if (kind === 1) nCont++;
      else if (kind === 2) nPunctTok++;
      if (id === res.tokenizer.unkId) nUnk++;
      else tokens.push(id);
    }
  }

  let letters = 0;
  let digits = 0;
  let punct = 0;
  let spaces = 0;
  let upper = 0;
  let nonAscii = 0;
  let run = 0;
  let maxRun = 0;
  const gen = nextSeenGeneration();
  let distinct = 0;
  const n = segment.length;
  for (let i = 0; i < n; i++) {
    const c = segment.charCodeAt(i);
    if (seenStamp[c] !== gen) {
      seenStamp[c] = gen;
      distinct++;
    }
    let isPunct = false;
    if (c < 128) {
      if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) {
        letters++;
        if (c <= 90) upper++;
      } else if (c >= 48 && c <= 57) digits++;
      else if (isSpace(c)) spaces++;
      else isPunct = true;
    } else {
      nonAscii++;
      if (isSpace(c)) spaces++;
      else {
        const ch = segment[i] ?? '';
        if (LETTER_RE.test(ch) || (c >= 0xd800 && c <= 0xdfff)) {
          letters++;
          if (UPPER_RE.test(ch)) upper++;
        } else if (NUMBER_RE.test(ch)) digits++;
        else isPunct = true;
      }
    }
    if (isPunct) {
      punct++;
      run++;
      if (run > maxRun) maxRun = run;
    } else run = 0;
  }
  const visible = Math.max(1, n - spaces);
  const lm = charLmStats(segment.toLowerCase(), res.charLm);
  rest[0] = Math.log1p(n) / 6;
  rest[1] = letters / visible;
  rest[2] = digits / visible;
  rest[3] = punct / visible;
  rest[4] = letters > 0 ? upper / letters : 0;
  rest[5] = nonAscii / Math.max(1, n);
  rest[6] = nWords > 0 ? Math.min(4, (nTok - nPunctTok) / nWords) / 4 : 0;
  rest[7] = nTok > 0 ? nCont / nTok : 0;
  rest[8] = nTok > 0 ? nUnk / nTok : 0;
  rest[9] = nWords > 0 ? nCamel / nWords : 0;
  rest[10] = nTok > 0 ? nPunctTok / nTok : 0;
  rest[11] = lm.mean / 5;
  rest[12] = lm.min / 5;
  rest[13] = Math.min(maxRun, 20) / 10;
  rest[14] = nWords > 0 ? nLong / nWords : 0;
  rest[15] = n > 0 ? distinct / n : 0;
  const r = ROLES.indexOf(role);
  rest[HAND_FEATURES + (r < 0 ? 0 : r)] = 1;
}

/** Builds the per-token kind table used by `denseFeatures`. */
export function buildTokenKinds(vocab: readonly string[]): Uint8Array {
  const kinds = new Uint8Array(vocab.length);
  vocab.forEach((t, i) => {
    if (t.startsWith('##')) kinds[i] = 1;
    else if (t.length === 1 && /[\p{P}\p{S}]/u.test(t)) kinds[i] = 2;
  });
  return kinds;
}
