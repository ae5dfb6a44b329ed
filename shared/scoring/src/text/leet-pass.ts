/**
 * Leetspeak (`h4ck3r`, `p@ssw0rd`) folded to letters when that reveals a word. Like the other
 * word-level passes it runs on ASCII letters: homoglyphs are already folded.
 */
import { COMMON_WORDS } from './word-lists.js';
import { LEET } from './char-tables.js';
import type { MutationEvidence } from './normalized-text.js';
import type { Vocab } from './vocab.js';
import type { Replacement } from './replacements.js';
import { isAsciiLetter } from './char-predicates.js';

export const LEET_CHAR_RE = /[0-9@$|+!]/g;
export const HAS_LETTER_RE = /[A-Za-z]/;

export function isLeetChunkChar(c: number): boolean {
  // letters, digits, @ $ | + !
  return (
    isAsciiLetter(c) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x40 ||
    c === 0x24 ||
    c === 0x7c ||
    c === 0x2b ||
    c === 0x21
  );
}

export function leetFold(chunk: string, one: string): string | null {
  let out = '';
  for (let i = 0; i < chunk.length; i++) {
    const ch = chunk[i] ?? '';
    const c = chunk.charCodeAt(i);
    if (isAsciiLetter(c)) out += ch.toLowerCase();
    else if (ch === '1') out += one;
    else {
      const m = LEET.get(ch);
      if (m === undefined) return null;
      out += m;
    }
  }
  return out;
}

export function leetPass(
  s: string,
  vocab: Vocab,
  replacements: Replacement[],
  evidence: MutationEvidence[],
): void {
  const hits: Replacement[] = [];
  const candidates: Array<{ start: number; end: number; fold: string }> = [];
  // Only chunks that contain a leet character are looked at: linear, and nothing to do on prose.
  let scannedUntil = -1;
  LEET_CHAR_RE.lastIndex = 0;
  for (let m = LEET_CHAR_RE.exec(s); m !== null; m = LEET_CHAR_RE.exec(s)) {
    if (m.index < scannedUntil) continue;
    let a = m.index;
    let b = m.index + 1;
    while (a > 0 && isLeetChunkChar(s.charCodeAt(a - 1))) a--;
    while (b < s.length && isLeetChunkChar(s.charCodeAt(b))) b++;
    scannedUntil = b;
    LEET_CHAR_RE.lastIndex = b;
    let start = a;
    let chunk = s.slice(a, b);
    // Trailing "!" / leading "+" are punctuation, not letters.
    while (chunk.length > 0 && (chunk.endsWith('!') || chunk.endsWith('+')))
      chunk = chunk.slice(0, -1);
    while (chunk.length > 0 && chunk.startsWith('+')) {
      chunk = chunk.slice(1);
      start++;
    }
    if (chunk.length < 3 || chunk.length > 40 || !HAS_LETTER_RE.test(chunk)) continue;
    const asI = leetFold(chunk, 'i');
    if (asI === null) continue;
    const asL = leetFold(chunk, 'l') ?? asI;
    const end = start + chunk.length;
    if (vocab.has(asI)) hits.push({ start, end, text: asI });
    else if (vocab.has(asL)) hits.push({ start, end, text: asL });
    else if (/^[a-z]+$/.test(asI))
      candidates.push({
        start,
        end,
        fold: COMMON_WORDS.has(asL) && !COMMON_WORDS.has(asI) ? asL : asI,
      });
  }
  if (hits.length === 0) return;
  // Once leetspeak is established, fold the other leet words too ("4ll", "pr3v10us") so the
  // detectors read the sentence.
  for (const c of candidates) hits.push({ start: c.start, end: c.end, text: c.fold });
  for (const h of hits) replacements.push(h);
  evidence.push({
    kind: 'leetspeak',
    detail: `${hits.length} words written in leetspeak folded to letters`,
  });
}
