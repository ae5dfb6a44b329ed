/** Small code point tests shared by the passes. */
import { isVariationSelector } from './char-tables.js';

export function isPlainAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7e) return false;
  return true;
}

export function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

export function isLetterLike(cp: number): boolean {
  if (isAsciiLetter(cp)) return true;
  if (cp < 0xc0) return false;
  return /\p{L}/u.test(String.fromCodePoint(cp));
}

export function isEmojiLike(cp: number): boolean {
  return (
    cp >= 0x1f000 || (cp >= 0x2600 && cp <= 0x27bf) || cp === 0x2764 || isVariationSelector(cp)
  );
}
