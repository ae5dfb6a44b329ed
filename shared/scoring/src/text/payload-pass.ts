/** Encoded payloads (base64, hex, URL encoding, HTML entities, escapes) decoded into variants. */
import { COMMON_WORDS } from './word-lists.js';
import {
  findBase64,
  findHex,
  findHtmlEntities,
  findUnicodeEscapes,
  findUrlEncoding,
  isReadable,
  type DecodedPayload,
} from './decode-payloads.js';
import { wordsOf } from './words.js';
import type { MutationEvidence, MutationKind, TextVariant } from './normalized-text.js';
import type { Vocab } from './vocab.js';

export const DECODE_HINT_RE =
  /\b(?:decode|decoded|decoding|base ?64|b64|hex|encoded|encoding|cipher|decrypt)\b/i;

export function payloadPass(
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

export function label(kind: MutationKind): string {
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
