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
import { wordsOf } from './words.js';
import {
  type MutationEvidence,
  type NormalizedText,
  type TextVariant,
  dedupeEvidence,
} from './normalized-text.js';
import { Vocab } from './vocab.js';
import { type Replacement, applyReplacements } from './replacements.js';
import { isPlainAscii } from './char-predicates.js';
import { unicodePass } from './unicode-pass.js';
import { leetPass } from './leet-pass.js';
import { splitWordPass } from './split-word-pass.js';
import { rot13AndReversedPass } from './rot13-reversed-pass.js';
import { payloadPass } from './payload-pass.js';

export type {
  MutationEvidence,
  MutationKind,
  NormalizedText,
  TextVariant,
} from './normalized-text.js';

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
