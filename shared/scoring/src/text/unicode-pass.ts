/**
 * The code point pass: invisible, bidi, tag and variation-selector smuggling, combining-mark
 * stacking and compatibility letters, then NFKC and the homoglyph word pass.
 */
import {
  HOMOGLYPHS,
  isBidiControl,
  isBidiOverride,
  isCjk,
  isCombiningMark,
  isCompatLetter,
  isCyrillicOrGreek,
  isInvisible,
  isJoiningScript,
  isLatinLookalike,
  isRtlLetter,
  isTagChar,
  isVariationSelector,
  LONG_MARK_RUN_RE,
  variationSelectorByte,
} from './char-tables.js';
import { bytesToReadableText } from './decode-payloads.js';
import type { MutationEvidence, TextVariant } from './normalized-text.js';
import type { Vocab } from './vocab.js';
import { isAsciiLetter, isEmojiLike, isLetterLike } from './char-predicates.js';
import { homoglyphPass } from './homoglyph-pass.js';

export function unicodePass(
  input: string,
  vocab: Vocab,
  evidence: MutationEvidence[],
  variants: TextVariant[],
): string {
  let out = '';
  let runStart = 0; // start of the pending slice of `input` to copy
  let prevCp = -1; // last code point kept
  let inWordInvisible = 0;
  let otherInvisible = 0;
  const invisibleJoinOffsets: number[] = [];
  let bidiOverrides = 0;
  let bidiOther = 0;
  let rtlLetters = 0;
  let latinLetters = 0;
  let cyrGreekLetters = 0;
  let cjkLetters = 0;
  let stackedMarks = 0;
  let fullwidth = 0;
  let styled = 0;
  let homoglyphCandidates = false;
  let latinExtended = false;
  let tagLegit = 0;

  const n = input.length;
  let i = 0;
  const flush = (to: number): void => {
    if (to > runStart) out += input.slice(runStart, to);
  };
  while (i < n) {
    const cp = input.codePointAt(i) ?? 0;
    const width = cp > 0xffff ? 2 : 1;

    if (isTagChar(cp)) {
      flush(i);
      let j = i;
      let hidden = '';
      let lastTag = 0;
      while (j < n) {
        const c = input.codePointAt(j) ?? 0;
        if (!isTagChar(c)) break;
        if (c >= 0xe0020 && c <= 0xe007e) hidden += String.fromCharCode(c - 0xe0000);
        lastTag = c;
        j += 2;
      }
      // Emoji subdivision flags (black flag + tag letters + cancel tag) are legitimate.
      if (prevCp === 0x1f3f4 && lastTag === 0xe007f && hidden.length <= 8) {
        tagLegit++;
      } else if (hidden.trim().length > 0) {
        variants.push({ kind: 'tag_smuggling', text: hidden });
        evidence.push({
          kind: 'tag_smuggling',
          detail: `${hidden.length} characters hidden in invisible Unicode tag characters`,
        });
      }
      i = j;
      runStart = j;
      continue;
    }

    if (isVariationSelector(cp)) {
      flush(i);
      let j = i;
      const bytes: number[] = [];
      while (j < n) {
        const c = input.codePointAt(j) ?? 0;
        if (!isVariationSelector(c)) break;
        bytes.push(variationSelectorByte(c));
        j += c > 0xffff ? 2 : 1;
      }
      if (bytes.length >= 4) {
        const hidden = bytesToReadableText(Uint8Array.from(bytes));
        if (hidden !== null) {
          variants.push({ kind: 'variation_selector_smuggling', text: hidden });
          evidence.push({
            kind: 'variation_selector_smuggling',
            detail: `${hidden.length} characters hidden in variation selectors`,
          });
        }
      }
      i = j;
      runStart = j;
      continue;
    }

    if (isInvisible(cp)) {
      flush(i);
      // Find the next visible code point to judge the context.
      let j = i + width;
      while (j < n) {
        const c = input.codePointAt(j) ?? 0;
        if (!isInvisible(c)) break;
        j += c > 0xffff ? 2 : 1;
      }
      const nextCp = j < n ? (input.codePointAt(j) ?? -1) : -1;
      const benign =
        (cp === 0xfeff && out.length === 0) ||
        ((cp === 0x200c || cp === 0x200d) &&
          (isJoiningScript(prevCp) ||
            isJoiningScript(nextCp) ||
            isEmojiLike(prevCp) ||
            isEmojiLike(nextCp)));
      if (!benign) {
        const count = countInvisibles(input, i, j);
        if (isLetterLike(prevCp) && isLetterLike(nextCp)) {
          inWordInvisible += count;
          invisibleJoinOffsets.push(out.length);
        } else {
          otherInvisible += count;
        }
      }
      i = j;
      runStart = j;
      continue;
    }

    if (isBidiControl(cp)) {
      flush(i);
      if (isBidiOverride(cp)) bidiOverrides++;
      else bidiOther++;
      i += width;
      runStart = i;
      continue;
    }

    if (isCombiningMark(cp)) {
      let j = i;
      let marks = 0;
      while (j < n && isCombiningMark(input.codePointAt(j) ?? 0)) {
        marks++;
        j++;
      }
      if (marks >= 3) {
        // Stacked marks ("zalgo") hide the base letters from word matchers; keep only the bases.
        flush(i);
        stackedMarks++;
        runStart = j;
      }
      i = j;
      continue;
    }

    if (cp >= 0x80) {
      const compat = isCompatLetter(cp);
      if (compat === 'fullwidth') fullwidth++;
      else if (compat === 'styled') styled++;
      if (HOMOGLYPHS.has(cp) || isLatinLookalike(cp)) homoglyphCandidates = true;
      if (cp >= 0xc0 && cp <= 0x24f) {
        latinExtended = true;
        latinLetters++;
      } else if (isCyrillicOrGreek(cp)) cyrGreekLetters++;
      else if (isRtlLetter(cp)) rtlLetters++;
      else if (isCjk(cp)) cjkLetters++;
    } else if (isAsciiLetter(cp)) {
      latinLetters++;
    }
    prevCp = cp;
    i += width;
  }
  flush(n);

  // Invisible characters: splitting words is the attack; a single stray one (copy-paste from a
  // web page) is not, unless removing it reveals a trigger word.
  if (
    inWordInvisible >= 2 ||
    otherInvisible >= 5 ||
    revealsWord(out, invisibleJoinOffsets, vocab)
  ) {
    evidence.push({
      kind: 'invisible_characters',
      detail: `${inWordInvisible + otherInvisible} zero-width/invisible characters removed (${inWordInvisible} inside words)`,
    });
  }
  if (bidiOverrides > 0 || (bidiOther > 0 && rtlLetters === 0)) {
    evidence.push({
      kind: 'bidi_controls',
      detail: `${bidiOverrides + bidiOther} bidirectional control characters removed`,
    });
  }
  // Runs of marks too long for any script (Hebrew points, Devanagari signs, ... stacked past the
  // stream-safe limit) bury their base letters like zalgo does, and NFKC below would be quadratic
  // in them: drop them, as the zalgo marks above.
  // (After the invisible-character check: its offsets point into `out` as it was.)
  out = out.replace(LONG_MARK_RUN_RE, () => {
    stackedMarks++;
    return '';
  });
  if (stackedMarks > 0) {
    evidence.push({
      kind: 'combining_marks',
      detail: `${stackedMarks} letters buried under stacked combining marks`,
    });
  }
  // Fullwidth Latin is ordinary inside CJK text; styled (mathematical, enclosed) letters are not
  // used to write prompts except to dodge filters.
  const compatCount = styled + (cjkLetters * 4 < latinLetters + fullwidth ? fullwidth : 0);
  if (compatCount >= 3) {
    evidence.push({
      kind: 'compat_letters',
      detail: `${compatCount} fullwidth/styled letters folded to ASCII`,
    });
  }
  void tagLegit;

  let s = out.normalize('NFKC');
  if (homoglyphCandidates || latinExtended) {
    s = homoglyphPass(s, vocab, latinLetters > 3 * cyrGreekLetters, evidence);
  }
  return s;
}

export function countInvisibles(s: string, from: number, to: number): number {
  let c = 0;
  for (let k = from; k < to; k++) {
    const code = s.charCodeAt(k);
    if (code < 0xdc00 || code > 0xdfff) c++;
  }
  return c;
}

export function revealsWord(text: string, offsets: number[], vocab: Vocab): boolean {
  for (const off of offsets) {
    let a = off;
    let b = off;
    while (a > 0 && isAsciiLetter(text.charCodeAt(a - 1))) a--;
    while (b < text.length && isAsciiLetter(text.charCodeAt(b))) b++;
    if (b - a >= 3 && vocab.has(text.slice(a, b).toLowerCase())) return true;
  }
  return false;
}
