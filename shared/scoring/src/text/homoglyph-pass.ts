/** Homoglyphs: words mixing Latin with Cyrillic/Greek look-alikes, folded to Latin. */
import { COMMON_WORDS } from './word-lists.js';
import { HOMOGLYPHS, isLatinLookalike } from './char-tables.js';
import type { MutationEvidence } from './normalized-text.js';
import type { Vocab } from './vocab.js';

export const WORD_WITH_MARKS_RE = /[\p{L}\p{M}\p{N}]+/gu;

export function homoglyphPass(
  s: string,
  vocab: Vocab,
  latinDominant: boolean,
  evidence: MutationEvidence[],
): string {
  let mixed = 0;
  let folded = 0;
  let diacritics = 0;
  const out = s.replace(WORD_WITH_MARKS_RE, (word) => {
    let ascii = 0;
    let mapped = 0;
    let lookalike = 0;
    let otherNonAscii = 0;
    let latinExt = 0;
    for (const ch of word) {
      const cp = ch.codePointAt(0) ?? 0;
      if (cp < 0x80) ascii++;
      else if (isLatinLookalike(cp)) lookalike++;
      else if (HOMOGLYPHS.has(cp)) mapped++;
      else if (cp >= 0xc0 && cp <= 0x24f) latinExt++;
      else otherNonAscii++;
    }
    if (mapped + lookalike > 0 && otherNonAscii === 0) {
      const fold = foldHomoglyphs(word);
      const lower = fold.toLowerCase();
      // A word mixing Latin with Cyrillic/Greek/IPA look-alikes is never natural text; a word made
      // only of look-alikes is (Russian, Greek) unless it spells something in a Latin-script text.
      if ((ascii > 0 || latinExt > 0) && (mapped > 0 || lookalike > 0)) {
        mixed++;
        return fold;
      }
      if (lookalike > 0 && (vocab.has(lower) || COMMON_WORDS.has(lower))) {
        mixed++;
        return fold;
      }
      if (latinDominant && word.length >= 3 && (vocab.has(lower) || COMMON_WORDS.has(lower))) {
        folded++;
        return fold;
      }
      return word;
    }
    if (latinExt > 0 && otherNonAscii === 0 && mapped === 0) {
      // Diacritics sprinkled on a trigger word ("bömb"): fold only when that reveals one.
      const bare = word.normalize('NFD').replace(/\p{M}+/gu, '');
      if (bare !== word && vocab.has(bare.toLowerCase())) {
        diacritics++;
        return bare;
      }
    }
    return word;
  });
  const total = mixed + folded + diacritics;
  if (total > 0) {
    evidence.push({
      kind: 'homoglyphs',
      detail: `${total} words written with look-alike letters from other scripts or diacritics folded to ASCII`,
    });
  }
  return out;
}

export function foldHomoglyphs(word: string): string {
  let out = '';
  for (const ch of word) {
    const cp = ch.codePointAt(0) ?? 0;
    out += HOMOGLYPHS.get(cp) ?? ch;
  }
  return out;
}
