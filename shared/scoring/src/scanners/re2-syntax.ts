/**
 * Policy authors write JavaScript regexes; RE2 spells some things differently and refuses others
 * with messages that do not say why. This rewrites the JavaScript spelling into RE2's and refuses,
 * with a message a policy author can act on, what RE2 cannot run.
 */
import { SafeRegexError } from './safe-regex-error.js';

/** Refused before compiling: bounds the program size, hence the cost per character. */
export const MAX_REPEAT = 200;

const REFUSED = 'RE2 does not support backreferences/lookaround';

// JavaScript's \s (Unicode spaces); RE2's is ASCII only.
const SPACE_RANGES: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const hex = (c: number): string => `\\x{${c.toString(16)}}`;
const rangesText = (ranges: Array<[number, number]>): string =>
  ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('');
const NOT_SPACE_RANGES: Array<[number, number]> = [];
{
  let next = 0;
  for (const [lo, hi] of SPACE_RANGES) {
    if (lo > next) NOT_SPACE_RANGES.push([next, lo - 1]);
    next = hi + 1;
  }
  NOT_SPACE_RANGES.push([next, 0x10ffff]);
}
const SPACE = rangesText(SPACE_RANGES);
const NOT_SPACE = rangesText(NOT_SPACE_RANGES);
// JavaScript's `.` without the s flag also stops at \r, U+2028 and U+2029; RE2's only at \n.
const DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

const isHex = (s: string): boolean => /^[0-9a-fA-F]+$/.test(s);
const SAME_ESCAPES = new Set(['d', 'D', 'w', 'W', 't', 'n', 'r', 'f', 'v', 'p', 'P']);

/** The escape at `pattern[i] === '\\'`: its RE2 spelling and the index after it. */
function escape(pattern: string, i: number, inClass: boolean): [string, number] {
  const c = pattern[i + 1];
  if (c === undefined) throw new SafeRegexError('pattern ends with a backslash');
  if (c >= '1' && c <= '9' && !inClass)
    throw new SafeRegexError(`backreference \\${c}: ${REFUSED}`);
  if (c === 'k' && pattern[i + 2] === '<')
    throw new SafeRegexError(`named backreference \\k<...>: ${REFUSED}`);
  if (c === '0' && !/[0-9]/.test(pattern[i + 2] ?? '')) return ['\\x00', i + 2];
  if (c === 's') return [inClass ? SPACE : `[${SPACE}]`, i + 2];
  if (c === 'S') return [inClass ? NOT_SPACE : `[^${SPACE}]`, i + 2];
  if (c === 'b' || c === 'B') {
    if (!inClass) return [`\\${c}`, i + 2];
    if (c === 'b') return ['\\x08', i + 2];
    throw new SafeRegexError('\\B inside a class');
  }
  if (c === 'x') {
    const h = pattern.slice(i + 2, i + 4);
    if (h.length === 2 && isHex(h)) return [`\\x${h}`, i + 4];
    throw new SafeRegexError('\\x needs two hex digits');
  }
  if (c === 'c') {
    const l = pattern[i + 2] ?? '';
    if (/^[a-zA-Z]$/.test(l)) return [hex(l.charCodeAt(0) % 32), i + 3];
    throw new SafeRegexError('\\c needs a letter');
  }
  if (c === 'u') return unicodeEscape(pattern, i);
  if (SAME_ESCAPES.has(c)) return [`\\${c}`, i + 2];
  // Escaped punctuation means itself in both; RE2 refuses other escapes it does not know.
  if (/^[!-/:-@[-`{-~ ]$/.test(c)) return [`\\${c}`, i + 2];
  if (c.charCodeAt(0) >= 0x80) return [c, i + 2];
  throw new SafeRegexError(`invalid escape \\${c}`);
}

/** `\uHHHH` (a surrogate pair written as two is one character) or `\u{H...}`. */
function unicodeEscape(pattern: string, i: number): [string, number] {
  const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(i + 2));
  if (braced?.[1] !== undefined) {
    const cp = parseInt(braced[1], 16);
    if (cp > 0x10ffff) throw new SafeRegexError('\\u{...} beyond U+10FFFF');
    return [hex(cp), i + 2 + braced[0].length];
  }
  const h = pattern.slice(i + 2, i + 6);
  if (h.length !== 4 || !isHex(h)) throw new SafeRegexError('\\u needs four hex digits or {...}');
  const hi = parseInt(h, 16);
  const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(pattern.slice(i + 6));
  if (hi >= 0xd800 && hi <= 0xdbff && low?.[1] !== undefined) {
    const lo = parseInt(low[1], 16);
    return [hex(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)), i + 12];
  }
  return [hex(hi), i + 6];
}

/** The group opening at `pattern[i] === '('`: its RE2 spelling and the index after it. */
function group(pattern: string, i: number): [string, number] {
  if (pattern[i + 1] !== '?') return ['(', i + 1];
  const rest = pattern.slice(i + 2);
  if (rest.startsWith(':')) return ['(?:', i + 3];
  if (/^(?:=|!|<=|<!)/.test(rest))
    throw new SafeRegexError(`lookaround (?${rest.slice(0, rest[0] === '<' ? 2 : 1)}: ${REFUSED}`);
  const named = /^<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
  if (named?.[1] !== undefined) return [`(?P<${named[1]}>`, i + 2 + named[0].length];
  throw new SafeRegexError('inline modifiers (?...) are not supported: use the flags field');
}

/**
 * Rewrites a JavaScript pattern into RE2 syntax with JavaScript's meaning for `.` (unless
 * `dotAll`), `\s`, `\S`, `\uHHHH`, `\u{...}`, `\cX`, `[\b]`, `(?<name>...)`, `[^]` and `[]`.
 * Throws SafeRegexError for backreferences, lookaround, inline modifiers and repetition counts
 * above MAX_REPEAT.
 */
export function toRe2Syntax(pattern: string, dotAll: boolean): string {
  let out = '';
  let inClass = false;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] ?? '';
    if (c === '\\') {
      const [text, next] = escape(pattern, i, inClass);
      out += text;
      i = next;
    } else if (inClass) {
      // A literal `[` opens a POSIX class such as [:alpha:] in RE2, never in JavaScript.
      out += c === '[' ? '\\[' : c;
      if (c === ']') inClass = false;
      i++;
    } else if (c === '[') {
      const negated = pattern[i + 1] === '^';
      const first = i + (negated ? 2 : 1);
      if (pattern[first] === ']') {
        // JavaScript's `[]` matches nothing and `[^]` anything; RE2 would read `]` as a member.
        out += negated ? '[\\x{0}-\\x{10ffff}]' : '[^\\x{0}-\\x{10ffff}]';
        i = first + 1;
      } else {
        out += negated ? '[^' : '[';
        inClass = true;
        i = first;
      }
    } else if (c === '(') {
      const [text, next] = group(pattern, i);
      out += text;
      i = next;
    } else if (c === '{') {
      const counts = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (counts && Math.max(Number(counts[1]), Number(counts[2] || 0)) > MAX_REPEAT)
        throw new SafeRegexError(`repetition count above ${MAX_REPEAT}`);
      out += c;
      i++;
    } else {
      out += c === '.' && !dotAll ? DOT : c;
      i++;
    }
  }
  if (inClass) throw new SafeRegexError('unterminated character class');
  return out;
}
