/** What normalisation returns: the cleaned text, decoded variants and the evidence of disguise. */

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

export function dedupeEvidence(evidence: readonly MutationEvidence[]): MutationEvidence[] {
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
