/**
 * rot13 and reversed text: a segment whose words are gibberish but become ordinary words when
 * rotated (or read backwards). Lookups only: the rotated/reversed vocabularies are built once.
 */
import { COMMON_WORDS, TRIGGER_WORDS } from './word-lists.js';
import { reverseString, rot13 } from './decode-payloads.js';
import { wordsOf } from './words.js';
import type { MutationEvidence, TextVariant } from './normalized-text.js';
import type { Vocab } from './vocab.js';

export const READABLE_WORDS: ReadonlySet<string> = new Set([...COMMON_WORDS, ...TRIGGER_WORDS]);
export const ROT13_WORDS: ReadonlySet<string> = new Set([...READABLE_WORDS].map(rot13));
export const REVERSED_WORDS: ReadonlySet<string> = new Set(
  [...READABLE_WORDS].filter((w) => w.length >= 3 && reverseString(w) !== w).map(reverseString),
);

export function rot13AndReversedPass(
  text: string,
  words: string[],
  vocab: Vocab,
  reversed: boolean,
  evidence: MutationEvidence[],
  variants: TextVariant[],
): void {
  if (words.length < 3) return;
  let rotHits = 0;
  let revHits = 0;
  let plainHits = 0;
  for (const w of words) {
    if (READABLE_WORDS.has(w)) {
      plainHits++;
      continue;
    }
    if (ROT13_WORDS.has(w)) rotHits++;
    if (reversed && REVERSED_WORDS.has(w)) revHits++;
  }
  // Whole text first; a mixed text ("decode this: <rot13>") is handled line by line.
  const considerRot = rotHits >= 3;
  const considerRev = reversed && revHits >= 3;
  if (!considerRot && !considerRev) return;
  const lines = plainHits === 0 ? [text] : text.split(/[\n:;"“”]+/);
  for (const line of lines) {
    const lw = wordsOf(line);
    if (lw.length < 3) continue;
    let plain = 0;
    let rot = 0;
    let rev = 0;
    for (const w of lw) {
      if (READABLE_WORDS.has(w)) plain++;
      else {
        if (ROT13_WORDS.has(w)) rot++;
        if (REVERSED_WORDS.has(w)) rev++;
      }
    }
    if (considerRot && rot >= 3 && rot >= 0.4 * lw.length && rot > plain) {
      const decoded = rot13(line);
      if (wordsOf(decoded).some((w) => vocab.has(w)) || rot >= 0.6 * lw.length) {
        variants.push({ kind: 'rot13', text: decoded });
        evidence.push({ kind: 'rot13', detail: `rot13 segment of ${lw.length} words decoded` });
      }
    } else if (considerRev && rev >= 3 && rev >= 0.4 * lw.length && rev > plain) {
      const decoded = reverseString(line);
      if (wordsOf(decoded).some((w) => vocab.has(w)) || rev >= 0.6 * lw.length) {
        variants.push({ kind: 'reversed_text', text: decoded });
        evidence.push({
          kind: 'reversed_text',
          detail: `reversed segment of ${lw.length} words read backwards`,
        });
      }
    }
  }
}
