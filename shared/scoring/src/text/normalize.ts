/**
 * Normalisation that defeats disguise. One linear pass over the code points (invisible, bidi,
 * tag and variation-selector smuggling, combining-mark stacking, compatibility letters), NFKC,
 * a word pass for homoglyphs, then word-level passes on the cleaned text (leetspeak, split words,
 * rot13 and reversed segments) and payload decoders.
 *
 * False positives are the main risk, so a disguise only counts (sets `mutation`) when it is
 * unambiguous on its own (bidi overrides, tag smuggling, letters split by zero-width characters,
 * a word mixing Latin and Cyrillic letters) or when undoing it reveals a word from the trigger
 * vocabulary (or the rules' own vocabulary). Russian text, hex hashes, base64 blobs and URLs
 * therefore stay clean.
 */
import { COMMON_WORDS, STOPWORDS, TRIGGER_WORDS } from './word-lists.js';
import {
  HOMOGLYPHS,
  LEET,
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
import {
  bytesToReadableText,
  findBase64,
  findHex,
  findHtmlEntities,
  findUnicodeEscapes,
  findUrlEncoding,
  isReadable,
  reverseString,
  rot13,
  type DecodedPayload,
} from './decode-payloads.js';
import { wordsOf } from './words.js';

export type MutationKind =
  | 'invisible_characters'
  | 'bidi_controls'
  | 'tag_smuggling'
  | 'variation_selector_smuggling'
  | 'combining_marks'
  | 'compat_letters'
  | 'homoglyphs'
  | 'leetspeak'
  | 'split_words'
  | 'base64'
  | 'hex'
  | 'url_encoding'
  | 'html_entities'
  | 'unicode_escapes'
  | 'rot13'
  | 'reversed_text';

export interface MutationEvidence {
  kind: MutationKind;
  /** Human-readable, never quotes the payload itself. */
  detail: string;
}

export interface TextVariant {
  kind: MutationKind;
  /** Decoded/recovered text, itself normalised. */
  text: string;
}

export interface NormalizedText {
  original: string;
  /** Invisible/bidi characters removed, NFKC, homoglyphs, leetspeak and split words undone. */
  canonical: string;
  /** Hidden or encoded payloads, decoded: scored in addition to `canonical`. */
  variants: TextVariant[];
  mutation: boolean;
  evidence: MutationEvidence[];
}

export interface NormalizeOptions {
  /** Extra words whose appearance after de-obfuscation is evidence of disguise (e.g. the rules' keywords). */
  vocabulary?: ReadonlySet<string>;
  /** Look for reversed-text segments (default true). */
  reversed?: boolean;
}

const MAX_DEPTH = 2;
/** Beyond this, decoding stops looking for payloads inside payloads. */
const MAX_VARIANTS = 8;

export function normalizeText(input: string, options: NormalizeOptions = {}): NormalizedText {
  const vocab = new Vocab(options.vocabulary);
  return normalizeAt(input, vocab, options.reversed ?? true, 0);
}

const TRIGGER_PREFIXES: ReadonlySet<string> = prefixesOf(TRIGGER_WORDS);
const extraPrefixCache = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

function prefixesOf(words: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const w of words) for (let i = 1; i <= w.length; i++) out.add(w.slice(0, i));
  return out;
}

class Vocab {
  private readonly extraPrefixes: ReadonlySet<string> | undefined;
  constructor(private readonly extra: ReadonlySet<string> | undefined) {
    if (extra && extra.size > 0) {
      let p = extraPrefixCache.get(extra);
      if (!p) {
        p = prefixesOf(extra);
        extraPrefixCache.set(extra, p);
      }
      this.extraPrefixes = p;
    }
  }
  has(word: string): boolean {
    return TRIGGER_WORDS.has(word) || (this.extra !== undefined && this.extra.has(word));
  }
  /** Whether some vocabulary word starts with `s` (prunes fragment joining early). */
  isPrefix(s: string): boolean {
    return (
      TRIGGER_PREFIXES.has(s) || (this.extraPrefixes !== undefined && this.extraPrefixes.has(s))
    );
  }
  /** Whether `s` contains a vocabulary word of length >= 4 as a substring. */
  hasInside(s: string): boolean {
    const n = s.length;
    for (let i = 0; i < n; i++) {
      for (let len = 4; len <= 16 && i + len <= n; len++)
        if (this.has(s.slice(i, i + len))) return true;
    }
    return false;
  }
}

interface Replacement {
  start: number;
  end: number;
  text: string;
}

function normalizeAt(
  input: string,
  vocab: Vocab,
  reversed: boolean,
  depth: number,
): NormalizedText {
  const evidence: MutationEvidence[] = [];
  const variants: TextVariant[] = [];

  let s = input;
  if (!isPlainAscii(input)) s = unicodePass(input, vocab, evidence, variants);

  // Word-level disguises on the cleaned text.
  const replacements: Replacement[] = [];
  leetPass(s, vocab, replacements, evidence);
  const letterWords = splitWordPass(s, vocab, replacements, evidence);
  const canonical = applyReplacements(s, replacements);

  const words = replacements.length === 0 ? letterWords : wordsOf(canonical);
  rot13AndReversedPass(canonical, words, vocab, reversed, evidence, variants);
  payloadPass(canonical, vocab, evidence, variants);

  // Payloads inside payloads (base64 of rot13, url-encoded base64, ...).
  if (depth < MAX_DEPTH) {
    const nested: TextVariant[] = [];
    for (const v of variants) {
      const inner = normalizeAt(v.text, vocab, reversed, depth + 1);
      v.text = inner.canonical;
      for (const e of inner.evidence) evidence.push(e);
      for (const iv of inner.variants) nested.push(iv);
    }
    for (const v of nested) variants.push(v);
  }

  const dedupedEvidence = dedupeEvidence(evidence);
  return {
    original: input,
    canonical,
    variants: variants.slice(0, MAX_VARIANTS),
    mutation: dedupedEvidence.length > 0,
    evidence: dedupedEvidence,
  };
}

function isPlainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7e) return false;
  return true;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

function isLetterLike(cp: number): boolean {
  if (isAsciiLetter(cp)) return true;
  if (cp < 0xc0) return false;
  return /\p{L}/u.test(String.fromCodePoint(cp));
}

function isEmojiLike(cp: number): boolean {
  return (
    cp >= 0x1f000 || (cp >= 0x2600 && cp <= 0x27bf) || cp === 0x2764 || isVariationSelector(cp)
  );
}

// ---------------------------------------------------------------------------------------------
// Code point pass

function unicodePass(
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

function countInvisibles(s: string, from: number, to: number): number {
  let c = 0;
  for (let k = from; k < to; k++) {
    const code = s.charCodeAt(k);
    if (code < 0xdc00 || code > 0xdfff) c++;
  }
  return c;
}

function revealsWord(text: string, offsets: number[], vocab: Vocab): boolean {
  for (const off of offsets) {
    let a = off;
    let b = off;
    while (a > 0 && isAsciiLetter(text.charCodeAt(a - 1))) a--;
    while (b < text.length && isAsciiLetter(text.charCodeAt(b))) b++;
    if (b - a >= 3 && vocab.has(text.slice(a, b).toLowerCase())) return true;
  }
  return false;
}

const WORD_WITH_MARKS_RE = /[\p{L}\p{M}\p{N}]+/gu;

function homoglyphPass(
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

function foldHomoglyphs(word: string): string {
  let out = '';
  for (const ch of word) {
    const cp = ch.codePointAt(0) ?? 0;
    out += HOMOGLYPHS.get(cp) ?? ch;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Word-level passes (operate on ASCII letters; homoglyphs are already folded)

const LEET_CHAR_RE = /[0-9@$|+!]/g;
const HAS_LETTER_RE = /[A-Za-z]/;

function isLeetChunkChar(c: number): boolean {
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

function leetFold(chunk: string, one: string): string | null {
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

function leetPass(
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

interface LetterToken {
  start: number;
  end: number;
  word: string;
}

const LETTER_RE = /[A-Za-z]+/g;
const SPLIT_SEPARATORS = ' \t.-_*/|+~^,\'"`';
const INWORD_SEPARATORS = '-._*|/~^+';

/** Returns the lower-cased ASCII letter words of `s` (reused by later passes). */
function splitWordPass(
  s: string,
  vocab: Vocab,
  replacements: Replacement[],
  evidence: MutationEvidence[],
): string[] {
  const tokens: LetterToken[] = [];
  LETTER_RE.lastIndex = 0;
  for (let m = LETTER_RE.exec(s); m !== null; m = LETTER_RE.exec(s)) {
    tokens.push({ start: m.index, end: m.index + m[0].length, word: m[0].toLowerCase() });
  }
  let found = 0;
  // Only the leetspeak replacements can overlap a rejoined word (this pass moves past each of its
  // own). They are disjoint and are asked about at increasing offsets, so one forward cursor
  // answers every check; scanning them all per check was quadratic on long disguised texts.
  const leet = [...replacements].sort((a, b) => a.start - b.start);
  let cursor = 0;
  const taken = (start: number, end: number): boolean => {
    while (cursor < leet.length && (leet[cursor]?.end ?? 0) <= start) cursor++;
    const r = leet[cursor];
    return r !== undefined && r.start < end;
  };

  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i];
    if (!t) break;

    // (1) Single letters separated by one separator ("i g n o r e", "i.g.n.o.r.e").
    if (t.word.length === 1) {
      let j = i;
      let joined = t.word;
      const breaks: number[] = [];
      while (j + 1 < tokens.length && j - i < 200) {
        const a = tokens[j];
        const b = tokens[j + 1];
        if (!a || !b || b.word.length !== 1) break;
        const gap = s.slice(a.end, b.start);
        if (gap.length === 0 || gap.length > 3 || !onlyChars(gap, SPLIT_SEPARATORS)) break;
        if (gap.length >= 2 && gap.trim() === '') breaks.push(joined.length);
        joined += b.word;
        j++;
      }
      const last = tokens[j];
      if (j - i + 1 >= 4 && last && vocab.hasInside(joined) && !taken(t.start, last.end)) {
        replacements.push({
          start: t.start,
          end: last.end,
          text: segmentWords(joined, breaks, vocab),
        });
        found++;
        i = j + 1;
        continue;
      }
      if (j > i) {
        // A run of single letters that spells nothing: skip it whole (keeps the pass linear).
        i = j;
        continue;
      }
    }

    // (2) Short fragments glued by in-word separators ("ig-no-re", "b.o.m.b" handled above).
    const startsVocab = t.word.length <= 5 && vocab.isPrefix(t.word);
    if (startsVocab) {
      let j = i;
      let joined = t.word;
      while (j + 1 < tokens.length && j - i < 5) {
        const a = tokens[j];
        const b = tokens[j + 1];
        if (!a || !b || b.word.length > 5) break;
        const gap = s.slice(a.end, b.start);
        if (gap.length !== 1 || !INWORD_SEPARATORS.includes(gap)) break;
        joined += b.word;
        j++;
        if (!vocab.isPrefix(joined)) break;
        const last = tokens[j];
        if (joined.length >= 4 && vocab.has(joined) && last && !taken(t.start, last.end)) {
          replacements.push({ start: t.start, end: last.end, text: joined });
          found++;
          i = j + 1;
          break;
        }
      }
      if (i > j) continue;
    }

    // (3) Short fragments separated by single spaces ("ig no re"): only when they spell a trigger
    // word and are not themselves ordinary words.
    if (startsVocab && t.word.length <= 4) {
      let joined = t.word;
      let allCommon = isOrdinaryWord(t.word);
      let matched = -1;
      for (let j = i + 1; j < tokens.length && j - i < 4; j++) {
        const a = tokens[j - 1];
        const b = tokens[j];
        if (!a || !b || b.word.length > 4 || b.start !== a.end + 1 || s.charCodeAt(a.end) !== 0x20)
          break;
        joined += b.word;
        if (!vocab.isPrefix(joined)) break;
        allCommon = allCommon && isOrdinaryWord(b.word);
        if (joined.length >= 5 && vocab.has(joined) && !allCommon) {
          matched = j;
          break;
        }
      }
      const last = matched >= 0 ? tokens[matched] : undefined;
      if (last && !taken(t.start, last.end)) {
        replacements.push({ start: t.start, end: last.end, text: joined });
        found++;
        i = matched + 1;
        continue;
      }
    }
    i++;
  }
  if (found > 0)
    evidence.push({
      kind: 'split_words',
      detail: `${found} words split by spaces or separators rejoined`,
    });
  return tokens.map((t) => t.word);
}

function isOrdinaryWord(w: string): boolean {
  return COMMON_WORDS.has(w) || STOPWORDS.has(w) || TRIGGER_WORDS.has(w);
}

function onlyChars(s: string, allowed: string): boolean {
  for (let i = 0; i < s.length; i++) if (!allowed.includes(s[i] ?? '')) return false;
  return true;
}

/** Recover word boundaries in a run of joined letters: explicit breaks first, then dictionary segmentation. */
function segmentWords(joined: string, breaks: number[], vocab: Vocab): string {
  if (breaks.length > 0) {
    let out = '';
    let prev = 0;
    for (const b of breaks) {
      out += joined.slice(prev, b) + ' ';
      prev = b;
    }
    return out + joined.slice(prev);
  }
  if (joined.length > 120) return joined;
  // Word break by dynamic programming, preferring fewer words; unknown letters stay attached.
  const n = joined.length;
  const best: Array<{ cost: number; prev: number } | undefined> = new Array(n + 1);
  best[0] = { cost: 0, prev: -1 };
  for (let end = 1; end <= n; end++) {
    for (let start = Math.max(0, end - 16); start < end; start++) {
      const b = best[start];
      if (!b) continue;
      const w = joined.slice(start, end);
      const known = vocab.has(w) || COMMON_WORDS.has(w);
      const cost = b.cost + (known ? 1 : 3 * w.length);
      const cur = best[end];
      if (!cur || cost < cur.cost) best[end] = { cost, prev: start };
    }
  }
  const parts: string[] = [];
  let end = n;
  while (end > 0) {
    const b = best[end];
    if (!b || b.prev < 0) break;
    parts.push(joined.slice(b.prev, end));
    end = b.prev;
  }
  // Merge consecutive unknown single letters back together.
  parts.reverse();
  const merged: string[] = [];
  for (const p of parts) {
    const last = merged[merged.length - 1];
    if (
      last !== undefined &&
      !COMMON_WORDS.has(p) &&
      !vocab.has(p) &&
      !COMMON_WORDS.has(last) &&
      !vocab.has(last)
    ) {
      merged[merged.length - 1] = last + p;
    } else merged.push(p);
  }
  return merged.join(' ');
}

function applyReplacements(s: string, replacements: Replacement[]): string {
  if (replacements.length === 0) return s;
  replacements.sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const r of replacements) {
    if (r.start < pos) continue;
    out += s.slice(pos, r.start) + r.text;
    pos = r.end;
  }
  return out + s.slice(pos);
}

// ---------------------------------------------------------------------------------------------
// rot13 and reversed text: a segment whose words are gibberish but become ordinary words when
// rotated (or read backwards). Lookups only: the rotated/reversed vocabularies are built once.

const READABLE_WORDS: ReadonlySet<string> = new Set([...COMMON_WORDS, ...TRIGGER_WORDS]);
const ROT13_WORDS: ReadonlySet<string> = new Set([...READABLE_WORDS].map(rot13));
const REVERSED_WORDS: ReadonlySet<string> = new Set(
  [...READABLE_WORDS].filter((w) => w.length >= 3 && reverseString(w) !== w).map(reverseString),
);

function rot13AndReversedPass(
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

// ---------------------------------------------------------------------------------------------
// Encoded payloads

const DECODE_HINT_RE =
  /\b(?:decode|decoded|decoding|base ?64|b64|hex|encoded|encoding|cipher|decrypt)\b/i;

function payloadPass(
  text: string,
  vocab: Vocab,
  evidence: MutationEvidence[],
  variants: TextVariant[],
): void {
  const hinted = DECODE_HINT_RE.test(text);
  const found: DecodedPayload[] = [...findBase64(text), ...findHex(text)];
  for (const p of [findUrlEncoding(text), findHtmlEntities(text), findUnicodeEscapes(text)])
    if (p) found.push(p);
  for (const p of found) {
    const lower = p.text.toLowerCase();
    const words = wordsOf(lower);
    const revealsTrigger = words.some((w) => vocab.has(w));
    let disguised: boolean;
    if (p.kind === 'base64' || p.kind === 'hex') {
      // Readable text hidden in an encoding: a disguise when it says something we look for, or
      // when the text asks for it to be decoded. Ordinary blobs in code decode to binary.
      const natural = words.length >= 3 && words.filter((w) => COMMON_WORDS.has(w)).length >= 2;
      disguised = revealsTrigger || (hinted && natural);
    } else {
      // Nobody needs to escape letters and digits: six or more such escapes is deliberate.
      disguised = p.encodedAlnum >= 6 || (p.encodedAlnum >= 3 && revealsTrigger);
    }
    if (disguised) {
      evidence.push({
        kind: p.kind,
        detail: `${label(p.kind)} payload decoded (${p.text.length} characters)`,
      });
      variants.push({ kind: p.kind, text: p.text });
    } else if (
      (p.kind === 'base64' || p.kind === 'hex') &&
      isReadable(p.text) &&
      words.length >= 4
    ) {
      // Still scored, without claiming a disguise: the detectors decide.
      variants.push({ kind: p.kind, text: p.text });
    }
  }
}

function label(kind: MutationKind): string {
  switch (kind) {
    case 'base64':
      return 'base64';
    case 'hex':
      return 'hex';
    case 'url_encoding':
      return 'percent-encoded';
    case 'html_entities':
      return 'HTML-entity';
    case 'unicode_escapes':
      return 'escape-sequence';
    default:
      return kind;
  }
}

function dedupeEvidence(evidence: MutationEvidence[]): MutationEvidence[] {
  const seen = new Set<string>();
  const out: MutationEvidence[] = [];
  for (const e of evidence) {
    const key = `${e.kind}:${e.detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  return out;
}
