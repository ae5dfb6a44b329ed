/**
 * Finds encoded payloads (base64, hex, percent-encoding, numeric HTML entities, \u / \x escapes)
 * and decodes them. Every finder is linear in the input: global regexes without nested
 * quantifiers, or indexOf scans. Whether a decoded payload counts as a disguise is decided by
 * the normaliser (it looks at what the payload says); this module only decodes and measures.
 */

export type PayloadKind = 'base64' | 'hex' | 'url_encoding' | 'html_entities' | 'unicode_escapes';

export interface DecodedPayload {
  kind: PayloadKind;
  start: number;
  end: number;
  text: string;
  /** Letters/digits that were encoded although they never need to be (a strong disguise signal). */
  encodedAlnum: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 bytes to text when they are valid UTF-8 and read as text (printable, mostly letters/spaces). */
export function bytesToReadableText(bytes: Uint8Array): string | null {
  if (bytes.length < 4) return null;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return null;
  }
  return isReadable(text) ? text : null;
}

/** Printable text with a natural share of letters and word breaks. */
export function isReadable(text: string): boolean {
  const n = text.length;
  if (n < 4) return false;
  let printable = 0;
  let letters = 0;
  let spaces = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      spaces++;
      printable++;
    } else if (c >= 0x21 && c < 0x7f) {
      printable++;
      if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) letters++;
    } else if (c >= 0xa0 && c !== 0xfffd) {
      printable++;
      letters++;
    }
  }
  if (printable / n < 0.97) return false;
  if (letters / n < 0.55) return false;
  // Long letter runs without any break are typical of random bytes that happen to be ASCII.
  return spaces > 0 || n <= 24;
}

// The lookbehind anchors attempts at token starts: linear, where a bare class run would rescan every word.
const BASE64_RE = /(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{16,}={0,2}/g;

function decodeBase64(candidate: string): Uint8Array | null {
  const body = candidate.replace(/=+$/, '');
  if (body.length % 4 === 1) return null;
  // Identifiers, words and paths are not base64: demand a mix of character classes.
  let upper = 0;
  let lower = 0;
  let digit = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) upper++;
    else if (c >= 0x61 && c <= 0x7a) lower++;
    else if (c >= 0x30 && c <= 0x39) digit++;
  }
  if (upper === 0 || lower === 0 || upper + digit < 3) return null;
  if (body.includes('-') && body.includes('+')) return null;
  return Buffer.from(body, body.includes('-') || body.includes('_') ? 'base64url' : 'base64');
}

export function findBase64(text: string): DecodedPayload[] {
  const out: DecodedPayload[] = [];
  BASE64_RE.lastIndex = 0;
  for (let m = BASE64_RE.exec(text); m !== null; m = BASE64_RE.exec(text)) {
    const bytes = decodeBase64(m[0]);
    if (!bytes) continue;
    const decoded = bytesToReadableText(bytes);
    if (decoded === null) continue;
    out.push({
      kind: 'base64',
      start: m.index,
      end: m.index + m[0].length,
      text: decoded,
      encodedAlnum: 0,
    });
  }
  return out;
}

// Pairs of hex digits, optionally prefixed (\x, 0x) and separated by one space, colon, comma or dash.
const HEX_RE =
  /(?<![0-9A-Za-z])(?:\\x|0x)?[0-9a-fA-F]{2}(?:[ :,-]?(?:\\x|0x)?[0-9a-fA-F]{2}){5,}(?![0-9A-Za-z])/g;

export function findHex(text: string): DecodedPayload[] {
  const out: DecodedPayload[] = [];
  HEX_RE.lastIndex = 0;
  for (let m = HEX_RE.exec(text); m !== null; m = HEX_RE.exec(text)) {
    const digits = m[0].replace(/\\x|0x|[ :,-]/g, '');
    if (digits.length % 2 !== 0) continue;
    const bytes = Buffer.from(digits, 'hex');
    const decoded = bytesToReadableText(bytes);
    if (decoded === null) continue;
    out.push({
      kind: 'hex',
      start: m.index,
      end: m.index + m[0].length,
      text: decoded,
      encodedAlnum: countAlnum(decoded),
    });
  }
  return out;
}

function countAlnum(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) n++;
  }
  return n;
}

function isAlnumCode(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

const PCT_RE = /%([0-9a-fA-F]{2})/g;

/** Percent-encoding: the whole text decoded, when it has at least three escapes. */
export function findUrlEncoding(text: string): DecodedPayload | null {
  if (text.indexOf('%') < 0) return null;
  let escapes = 0;
  let alnum = 0;
  PCT_RE.lastIndex = 0;
  for (let m = PCT_RE.exec(text); m !== null; m = PCT_RE.exec(text)) {
    escapes++;
    if (isAlnumCode(parseInt(m[1] ?? '0', 16))) alnum++;
  }
  if (escapes < 3) return null;
  // Decode runs of escapes together so multi-byte UTF-8 sequences survive.
  const decoded = text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  return { kind: 'url_encoding', start: 0, end: text.length, text: decoded, encodedAlnum: alnum };
}

const ENTITY_RE = /&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));?/g;

export function findHtmlEntities(text: string): DecodedPayload | null {
  if (text.indexOf('&#') < 0) return null;
  let count = 0;
  let alnum = 0;
  const decoded = text.replace(
    ENTITY_RE,
    (whole, hex: string | undefined, dec: string | undefined) => {
      const cp = hex !== undefined ? parseInt(hex, 16) : parseInt(dec ?? '', 10);
      if (!Number.isFinite(cp) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return whole;
      count++;
      if (isAlnumCode(cp)) alnum++;
      return String.fromCodePoint(cp);
    },
  );
  if (count < 3) return null;
  return { kind: 'html_entities', start: 0, end: text.length, text: decoded, encodedAlnum: alnum };
}

const ESCAPE_RE = /\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})/g;

export function findUnicodeEscapes(text: string): DecodedPayload | null {
  if (text.indexOf('\\') < 0) return null;
  let count = 0;
  let alnum = 0;
  const decoded = text.replace(
    ESCAPE_RE,
    (whole, braced: string | undefined, u4: string | undefined, x2: string | undefined) => {
      const cp = parseInt(braced ?? u4 ?? x2 ?? '', 16);
      if (!Number.isFinite(cp) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return whole;
      count++;
      if (isAlnumCode(cp)) alnum++;
      return String.fromCodePoint(cp);
    },
  );
  if (count < 3) return null;
  return {
    kind: 'unicode_escapes',
    start: 0,
    end: text.length,
    text: decoded,
    encodedAlnum: alnum,
  };
}

export function rot13(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) out += String.fromCharCode(((c - 0x41 + 13) % 26) + 0x41);
    else if (c >= 0x61 && c <= 0x7a) out += String.fromCharCode(((c - 0x61 + 13) % 26) + 0x61);
    else out += s[i];
  }
  return out;
}

export function reverseString(s: string): string {
  return Array.from(s).reverse().join('');
}
