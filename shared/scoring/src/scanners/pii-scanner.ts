/**
 * PII scanner: e-mail addresses, phone numbers, payment cards (Luhn + issuer prefix), national
 * ids (US SSN, UK NINO, Spanish DNI/NIE, Italian codice fiscale, French NIR, Dutch BSN, Polish
 * PESEL — checksums where the id has one), IBANs (mod-97) and IP addresses.
 *
 * Precision first: numbers that merely look like ids (dates, versions, order numbers, Luhn-invalid
 * card-length numbers) are rejected by validators and context rules. Findings carry offsets and
 * types, never the matched value.
 */
import { keepDisjoint } from './disjoint-spans.js';
import type { PiiType } from './scanners-config.js';

export interface PiiFinding {
  type: PiiType;
  /** Finer kind: visa, us_ssn, es_dni, ipv4, ... */
  subtype: string;
  start: number;
  end: number;
  /** How sure the validator is (checksum-backed ids are high). */
  confidence: number;
}

const EMAIL_RE =
  /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
const CARD_RE = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g;
const PHONE_RE = /(?<![\w+./-])(?:\+|\(\d)?\d[\d ().-]{6,22}\d(?![\w/]|[.-]\d)/g;
const SSN_RE = /(?<![\d-])(\d{3})-(\d{2})-(\d{4})(?![\d-])/g;
const SSN_PLAIN_RE = /(?<!\d)\d{9}(?!\d)/g;
const NINO_RE = /\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])\b/g;
const DNI_RE = /\b(\d{8})-?([A-Z])\b/g;
const NIE_RE = /\b([XYZ])-?(\d{7})-?([A-Z])\b/g;
const CF_RE = /\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b/g;
const NIR_RE =
  /\b([12]) ?(\d{2}) ?(0[1-9]|1[0-2]|[2-9]\d) ?(\d{2}|2[AB]) ?(\d{3}) ?(\d{3}) ?(\d{2})\b/g;
const ELEVEN_RE = /(?<!\d)\d{11}(?!\d)/g;
const IBAN_RE = /\b([A-Z]{2})(\d{2})((?: ?[A-Z0-9]){11,30})\b/g;
const IPV4_RE =
  /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)/g;
const IPV6_RE = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g;

const PHONE_CONTEXT_RE =
  /\b(?:phone|tel|telephone|call|mobile|cell|fax|whatsapp|contact|number|ring|text me|sms)\b/i;
const SSN_CONTEXT_RE = /\b(?:ssn|social security)\b/i;
const BSN_CONTEXT_RE = /\b(?:bsn|burgerservicenummer|sofinummer)\b/i;
const PESEL_CONTEXT_RE = /\bpesel\b/i;
const VERSION_CONTEXT_RE = /(?:\bv|version|release|build|firmware|node|python|chrome)\s*$/i;

export function scanPii(text: string, types?: ReadonlySet<PiiType>): PiiFinding[] {
  const want = (t: PiiType): boolean => types === undefined || types.has(t);
  const found: PiiFinding[] = [];
  const hasDigit = /\d/.test(text);

  if (want('email') && text.includes('@')) {
    for (const m of matches(EMAIL_RE, text))
      found.push({
        type: 'email',
        subtype: 'email',
        start: m.index,
        end: m.index + m[0].length,
        confidence: 0.95,
      });
  }
  if (hasDigit) {
    if (want('credit_card')) scanCards(text, found);
    if (want('national_id')) scanNationalIds(text, found);
    if (want('iban')) scanIbans(text, found);
    if (want('ip_address')) scanIps(text, found);
    if (want('phone')) scanPhones(text, found);
  } else if (want('ip_address') && text.includes('::')) {
    scanIps(text, found);
  }
  return resolveOverlaps(found);
}

function* matches(re: RegExp, text: string): Generator<RegExpExecArray> {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) yield m;
}

function digitsOf(s: string): string {
  return s.replace(/\D/g, '');
}

function contextBefore(text: string, start: number, re: RegExp, width = 40): boolean {
  return re.test(text.slice(Math.max(0, start - width), start));
}

// ---- payment cards ----------------------------------------------------------------------------

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function cardBrand(d: string): string | null {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === '4' && (n === 13 || n === 16 || n === 19)) return 'visa';
  if (((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) && n === 16) return 'mastercard';
  if ((p2 === 34 || p2 === 37) && n === 15) return 'amex';
  if ((p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649)) && n >= 16 && n <= 19)
    return 'discover';
  if (p4 >= 3528 && p4 <= 3589 && n >= 16 && n <= 19) return 'jcb';
  if ((p2 === 36 || p2 === 38 || (p3 >= 300 && p3 <= 305)) && n >= 14 && n <= 19) return 'diners';
  if ((d.startsWith('62') || d.startsWith('81')) && n >= 16 && n <= 19) return 'unionpay';
  if ((d.startsWith('50') || (p2 >= 56 && p2 <= 69)) && n >= 12 && n <= 19) return 'maestro';
  return null;
}

function scanCards(text: string, found: PiiFinding[]): void {
  for (const m of matches(CARD_RE, text)) {
    const raw = m[0];
    const d = digitsOf(raw);
    if (d.length < 13 || d.length > 19) continue;
    // Separators must be used consistently (all spaces or all dashes) when present.
    if (raw.includes(' ') && raw.includes('-')) continue;
    if (/^(\d)\1+$/.test(d)) continue;
    const brand = cardBrand(d);
    if (brand === null || !luhnValid(d)) continue;
    found.push({
      type: 'credit_card',
      subtype: brand,
      start: m.index,
      end: m.index + raw.length,
      confidence: 0.95,
    });
  }
}

// ---- national ids ----------------------------------------------------------------------------

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

function scanNationalIds(text: string, found: PiiFinding[]): void {
  for (const m of matches(SSN_RE, text)) {
    const area = m[1] ?? '';
    const group = m[2] ?? '';
    const serial = m[3] ?? '';
    if (area === '000' || area === '666' || area[0] === '9' || group === '00' || serial === '0000')
      continue;
    found.push({
      type: 'national_id',
      subtype: 'us_ssn',
      start: m.index,
      end: m.index + m[0].length,
      confidence: 0.85,
    });
  }
  for (const m of matches(SSN_PLAIN_RE, text)) {
    const d = m[0];
    if (
      contextBefore(text, m.index, SSN_CONTEXT_RE) &&
      !d.startsWith('000') &&
      !d.startsWith('666') &&
      d[0] !== '9'
    ) {
      found.push({
        type: 'national_id',
        subtype: 'us_ssn',
        start: m.index,
        end: m.index + 9,
        confidence: 0.8,
      });
    } else if (contextBefore(text, m.index, BSN_CONTEXT_RE) && bsnValid(d)) {
      found.push({
        type: 'national_id',
        subtype: 'nl_bsn',
        start: m.index,
        end: m.index + 9,
        confidence: 0.85,
      });
    }
  }
  for (const m of matches(NINO_RE, text)) {
    const prefix = m[1] ?? '';
    if (['BG', 'GB', 'NK', 'KN', 'TN', 'NT', 'ZZ'].includes(prefix)) continue;
    found.push({
      type: 'national_id',
      subtype: 'uk_nino',
      start: m.index,
      end: m.index + m[0].length,
      confidence: 0.8,
    });
  }
  for (const m of matches(DNI_RE, text)) {
    if (DNI_LETTERS[Number(m[1]) % 23] === m[2]) {
      found.push({
        type: 'national_id',
        subtype: 'es_dni',
        start: m.index,
        end: m.index + m[0].length,
        confidence: 0.9,
      });
    }
  }
  for (const m of matches(NIE_RE, text)) {
    const n = Number(`${'XYZ'.indexOf(m[1] ?? 'X')}${m[2] ?? ''}`);
    if (DNI_LETTERS[n % 23] === m[3]) {
      found.push({
        type: 'national_id',
        subtype: 'es_nie',
        start: m.index,
        end: m.index + m[0].length,
        confidence: 0.9,
      });
    }
  }
  if (/[A-Z]{6}\d/.test(text)) {
    for (const m of matches(CF_RE, text)) {
      if (codiceFiscaleValid(m[0]))
        found.push({
          type: 'national_id',
          subtype: 'it_fiscal_code',
          start: m.index,
          end: m.index + 16,
          confidence: 0.95,
        });
    }
  }
  for (const m of matches(NIR_RE, text)) {
    if (nirValid(m))
      found.push({
        type: 'national_id',
        subtype: 'fr_nir',
        start: m.index,
        end: m.index + m[0].length,
        confidence: 0.9,
      });
  }
  for (const m of matches(ELEVEN_RE, text)) {
    if (contextBefore(text, m.index, PESEL_CONTEXT_RE) && peselValid(m[0])) {
      found.push({
        type: 'national_id',
        subtype: 'pl_pesel',
        start: m.index,
        end: m.index + 11,
        confidence: 0.9,
      });
    }
  }
}

function bsnValid(d: string): boolean {
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * (d.charCodeAt(i) - 48);
  sum -= d.charCodeAt(8) - 48;
  return sum % 11 === 0 && sum !== 0;
}

function peselValid(d: string): boolean {
  const w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (w[i] ?? 0) * (d.charCodeAt(i) - 48);
  return (10 - (sum % 10)) % 10 === d.charCodeAt(10) - 48;
}

const CF_ODD: Record<string, number> = {};
(() => {
  const odd = [
    1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
  ];
  for (let i = 0; i < 26; i++) {
    CF_ODD[String.fromCharCode(65 + i)] = odd[i] ?? 0;
    if (i < 10) CF_ODD[String(i)] = odd[i] ?? 0;
  }
})();

function codiceFiscaleValid(cf: string): boolean {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const ch = cf[i] ?? '';
    if (i % 2 === 0) sum += CF_ODD[ch] ?? 0;
    else sum += /\d/.test(ch) ? Number(ch) : ch.charCodeAt(0) - 65;
  }
  return String.fromCharCode(65 + (sum % 26)) === cf[15];
}

function nirValid(m: RegExpExecArray): boolean {
  const dept = m[4] ?? '';
  let body = `${m[1]}${m[2]}${m[3]}${dept}${m[5]}${m[6]}`;
  // Corsica: 2A -> 19, 2B -> 18 for the checksum.
  let adjust = 0n;
  if (dept === '2A') {
    body = body.replace('2A', '19');
    adjust = 1000000n;
  } else if (dept === '2B') {
    body = body.replace('2B', '18');
    adjust = 2000000n;
  }
  const n = BigInt(body) - adjust;
  const key = 97n - (n % 97n);
  return key === BigInt(m[7] ?? '-1');
}

// ---- IBAN --------------------------------------------------------------------------------------

const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TN: 24,
  TR: 26,
  UA: 29,
  VG: 24,
  XK: 20,
};

export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, '');
  const expected = IBAN_LENGTHS[s.slice(0, 2)];
  if (expected === undefined || s.length !== expected) return false;
  const rearranged = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    const v = c >= 65 ? c - 55 : c - 48;
    rem = v >= 10 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97;
  }
  return rem === 1;
}

function scanIbans(text: string, found: PiiFinding[]): void {
  if (!/[A-Z]{2}\d{2}/.test(text)) return;
  for (const m of matches(IBAN_RE, text)) {
    // The regex may run past the IBAN into following grouped digits: try the country's length.
    const country = m[1] ?? '';
    const expected = IBAN_LENGTHS[country];
    if (expected === undefined) continue;
    let compact = 0;
    let end = m.index;
    const raw = m[0];
    for (let i = 0; i < raw.length && compact < expected; i++) {
      if (raw[i] !== ' ') compact++;
      end = m.index + i + 1;
    }
    if (compact !== expected) continue;
    if (ibanValid(text.slice(m.index, end)))
      found.push({
        type: 'iban',
        subtype: country.toLowerCase(),
        start: m.index,
        end,
        confidence: 0.95,
      });
  }
}

// ---- IP addresses -----------------------------------------------------------------------------

function scanIps(text: string, found: PiiFinding[]): void {
  if (text.includes('.')) {
    for (const m of matches(IPV4_RE, text)) {
      const ip = m[0];
      if (contextBefore(text, m.index, VERSION_CONTEXT_RE, 12)) continue;
      const [a, b] = ip.split('.').map(Number);
      if (ip === '0.0.0.0' || ip === '255.255.255.255' || a === 127) continue;
      const isPrivate =
        a === 10 ||
        (a === 172 && b !== undefined && b >= 16 && b <= 31) ||
        (a === 192 && b === 168);
      found.push({
        type: 'ip_address',
        subtype: 'ipv4',
        start: m.index,
        end: m.index + ip.length,
        confidence: isPrivate ? 0.5 : 0.8,
      });
    }
  }
  if (text.includes(':')) {
    for (const m of matches(IPV6_RE, text)) {
      if (ipv6Valid(m[0]))
        found.push({
          type: 'ip_address',
          subtype: 'ipv6',
          start: m.index,
          end: m.index + m[0].length,
          confidence: 0.8,
        });
    }
  }
}

export function ipv6Valid(s: string): boolean {
  const doubles = s.split('::').length - 1;
  if (doubles > 1) return false;
  const groups = s.split(/::|:/).filter((g) => g.length > 0);
  if (groups.some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  if (doubles === 0) {
    if (groups.length !== 8 || s.startsWith(':') || s.endsWith(':')) return false;
  } else {
    if (groups.length > 7) return false;
    // Loopback/unspecified and short forms like "a::b" (C++ scopes, timestamps) are not addresses.
    if (groups.length < 3 && !(groups.length >= 2 && (groups[0]?.length ?? 0) === 4)) return false;
  }
  // Need at least one hex letter or a 3+-digit group to tell it apart from clock times.
  return /[A-Fa-f]/.test(s) || groups.some((g) => g.length >= 3);
}

// ---- phones -----------------------------------------------------------------------------------

const DATE_LIKE_RE = /\b(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})\b/;
const NANP_RE = /^(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\)|[2-9]\d{2})[ .-]?\d{3}[ .-]\d{4}$/;

function scanPhones(text: string, found: PiiFinding[]): void {
  for (const m of matches(PHONE_RE, text)) {
    const raw = m[0];
    const d = digitsOf(raw);
    const plus = raw.startsWith('+');
    if (d.length < (plus ? 8 : 9) || d.length > 15) continue;
    if (DATE_LIKE_RE.test(raw)) continue;
    if ((raw.match(/\(/g) ?? []).length !== (raw.match(/\)/g) ?? []).length) continue;
    const dotsOnly = !/[ ()-]/.test(raw) && raw.includes('.');
    if (dotsOnly && !plus && !NANP_RE.test(raw)) continue; // versions, IPs, decimals
    let confidence: number;
    if (plus) confidence = 0.9;
    else if (NANP_RE.test(raw)) confidence = 0.85;
    else if (/[ ().-]/.test(raw) && contextBefore(text, m.index, PHONE_CONTEXT_RE))
      confidence = 0.7;
    else continue;
    found.push({
      type: 'phone',
      subtype: plus ? 'international' : 'national',
      start: m.index,
      end: m.index + raw.length,
      confidence,
    });
  }
}

// ---- overlaps and redaction -----------------------------------------------------------------

const PRIORITY: Record<PiiType, number> = {
  credit_card: 6,
  iban: 5,
  national_id: 4,
  email: 3,
  ip_address: 2,
  phone: 1,
};

/** Overlapping findings: keep the more specific (checksum-backed) one. */
function resolveOverlaps(found: PiiFinding[]): PiiFinding[] {
  if (found.length < 2) return found;
  return keepDisjoint(
    [...found].sort((a, b) => PRIORITY[b.type] - PRIORITY[a.type] || b.confidence - a.confidence),
  );
}

export function redactText(
  text: string,
  findings: ReadonlyArray<{ start: number; end: number; type: string }>,
  style: 'type' | 'mask' = 'type',
): string {
  if (findings.length === 0) return text;
  const sorted = [...findings].sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const f of sorted) {
    if (f.start < pos) continue;
    out +=
      text.slice(pos, f.start) +
      (style === 'mask' ? '*'.repeat(f.end - f.start) : `[${f.type.toUpperCase()}]`);
    pos = f.end;
  }
  return out + text.slice(pos);
}
