/**
 * Character tables for the normaliser. Built once at module load; lookups are by code point.
 */

/** Zero-width and other invisible formatting characters (not bidi controls, not tags). */
export function isInvisible(cp: number): boolean {
  return (
    cp === 0x00ad || // soft hyphen
    cp === 0x034f || // combining grapheme joiner
    cp === 0x115f ||
    cp === 0x1160 ||
    cp === 0x17b4 ||
    cp === 0x17b5 ||
    cp === 0x180e ||
    (cp >= 0x200b && cp <= 0x200d) ||
    (cp >= 0x2060 && cp <= 0x2064) ||
    (cp >= 0x206a && cp <= 0x206f) ||
    cp === 0x3164 ||
    cp === 0xffa0 ||
    cp === 0xfeff ||
    (cp >= 0x1d173 && cp <= 0x1d17a)
  );
}

export function isBidiControl(cp: number): boolean {
  return (
    cp === 0x061c ||
    cp === 0x200e ||
    cp === 0x200f ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069)
  );
}

/** Overrides (LRO/RLO) re-order what a reader sees; they have almost no legitimate use in prompts. */
export function isBidiOverride(cp: number): boolean {
  return cp === 0x202d || cp === 0x202e;
}

export function isTagChar(cp: number): boolean {
  return cp >= 0xe0000 && cp <= 0xe007f;
}

export function isVariationSelector(cp: number): boolean {
  return (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
}

/** Byte value a variation selector carries in "emoji smuggling" (VS1..VS16 = 0..15, VS17..VS256 = 16..255). */
export function variationSelectorByte(cp: number): number {
  return cp <= 0xfe0f ? cp - 0xfe00 : cp - 0xe0100 + 16;
}

/**
 * A run of more than 30 combining marks. Unicode's Stream-Safe Text Format (UAX #15) caps runs of
 * non-starters at 30: no writing system needs more, and `String.prototype.normalize` reorders a
 * run by insertion sort, quadratic in its length (160,000 alternating marks: 20 s). The regex is
 * linear: a shorter run is retried from each of its marks, at most 30 steps each.
 */
export const LONG_MARK_RUN_RE = /\p{M}{31,}/gu;

export function isCombiningMark(cp: number): boolean {
  return (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x1ab0 && cp <= 0x1aff) ||
    (cp >= 0x1dc0 && cp <= 0x1dff) ||
    (cp >= 0x20d0 && cp <= 0x20ff) ||
    (cp >= 0xfe20 && cp <= 0xfe2f)
  );
}

/** Right-to-left letters (Hebrew, Arabic, Syriac, Thaana, NKo, presentation forms). */
export function isRtlLetter(cp: number): boolean {
  return (
    (cp >= 0x0590 && cp <= 0x08ff) ||
    (cp >= 0xfb1d && cp <= 0xfdff) ||
    (cp >= 0xfe70 && cp <= 0xfefc)
  );
}

/** Scripts that legitimately use ZWJ/ZWNJ inside words (Arabic/Persian, Indic, Sinhala, ...). */
export function isJoiningScript(cp: number): boolean {
  return (
    (cp >= 0x0600 && cp <= 0x06ff) ||
    (cp >= 0x0750 && cp <= 0x077f) ||
    (cp >= 0x0900 && cp <= 0x0dff) ||
    (cp >= 0x0f00 && cp <= 0x0fff)
  );
}

export function isCjk(cp: number): boolean {
  return (
    (cp >= 0x3040 && cp <= 0x30ff) || // kana
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xac00 && cp <= 0xd7af) // hangul
  );
}

/** Characters NFKC folds to ASCII letters/digits that are used to dodge filters: fullwidth, math alphanumerics, enclosed. */
export function isCompatLetter(cp: number): 'fullwidth' | 'styled' | null {
  if (
    (cp >= 0xff10 && cp <= 0xff19) ||
    (cp >= 0xff21 && cp <= 0xff3a) ||
    (cp >= 0xff41 && cp <= 0xff5a)
  )
    return 'fullwidth';
  if (cp >= 0x1d400 && cp <= 0x1d7ff) return 'styled';
  if ((cp >= 0x2460 && cp <= 0x24ff) || (cp >= 0x1f130 && cp <= 0x1f189)) return 'styled';
  return null;
}

export function isCyrillicOrGreek(cp: number): boolean {
  return (
    (cp >= 0x0370 && cp <= 0x03ff) ||
    (cp >= 0x0400 && cp <= 0x052f) ||
    (cp >= 0x0530 && cp <= 0x058f)
  );
}

/**
 * Look-alikes of ASCII letters in other scripts (Cyrillic, Greek, Armenian, Cherokee) and in
 * Latin's own IPA / small-capital blocks. Only shapes that are near-identical in common fonts.
 */
const HOMOGLYPH_PAIRS: ReadonlyArray<readonly [string, string]> = [
  // Cyrillic
  ['а', 'a'],
  ['е', 'e'],
  ['ё', 'e'],
  ['о', 'o'],
  ['р', 'p'],
  ['с', 'c'],
  ['у', 'y'],
  ['х', 'x'],
  ['і', 'i'],
  ['ї', 'i'],
  ['ј', 'j'],
  ['ѕ', 's'],
  ['ԁ', 'd'],
  ['ԛ', 'q'],
  ['ԝ', 'w'],
  ['һ', 'h'],
  ['ӏ', 'l'],
  ['ɡ', 'g'],
  ['ʏ', 'y'],
  ['А', 'A'],
  ['В', 'B'],
  ['Е', 'E'],
  ['К', 'K'],
  ['М', 'M'],
  ['Н', 'H'],
  ['О', 'O'],
  ['Р', 'P'],
  ['С', 'C'],
  ['Т', 'T'],
  ['Х', 'X'],
  ['У', 'Y'],
  ['Ѕ', 'S'],
  ['І', 'I'],
  ['Ј', 'J'],
  ['Ԛ', 'Q'],
  ['Ԝ', 'W'],
  ['Һ', 'H'],
  ['Ӏ', 'I'],
  ['Ԁ', 'D'],
  // Greek
  ['α', 'a'],
  ['ε', 'e'],
  ['ι', 'i'],
  ['κ', 'k'],
  ['ν', 'v'],
  ['ο', 'o'],
  ['ρ', 'p'],
  ['τ', 't'],
  ['υ', 'u'],
  ['χ', 'x'],
  ['γ', 'y'],
  ['ϲ', 'c'],
  ['ϳ', 'j'],
  ['ω', 'w'],
  ['Α', 'A'],
  ['Β', 'B'],
  ['Ε', 'E'],
  ['Ζ', 'Z'],
  ['Η', 'H'],
  ['Ι', 'I'],
  ['Κ', 'K'],
  ['Μ', 'M'],
  ['Ν', 'N'],
  ['Ο', 'O'],
  ['Ρ', 'P'],
  ['Τ', 'T'],
  ['Υ', 'Y'],
  ['Χ', 'X'],
  ['Ϲ', 'C'],
  // Armenian
  ['օ', 'o'],
  ['ս', 'u'],
  ['ց', 'g'],
  ['հ', 'h'],
  ['ո', 'n'],
  ['զ', 'q'],
  // Cherokee capitals
  ['Ꭺ', 'A'],
  ['Ᏼ', 'B'],
  ['Ꮯ', 'C'],
  ['Ꭼ', 'E'],
  ['Ꮋ', 'H'],
  ['Ꮃ', 'W'],
  ['Ꮪ', 'S'],
  ['Ꭲ', 'T'],
  ['Ꮇ', 'M'],
  // Latin small capitals / IPA look-alikes
  ['ı', 'i'],
  ['ȷ', 'j'],
  ['ɑ', 'a'],
  ['ɩ', 'i'],
  ['ʟ', 'l'],
  ['ɪ', 'i'],
  ['ʀ', 'r'],
  ['ᴀ', 'a'],
  ['ʙ', 'b'],
  ['ᴄ', 'c'],
  ['ᴅ', 'd'],
  ['ᴇ', 'e'],
  ['ꜰ', 'f'],
  ['ɢ', 'g'],
  ['ʜ', 'h'],
  ['ᴊ', 'j'],
  ['ᴋ', 'k'],
  ['ᴍ', 'm'],
  ['ɴ', 'n'],
  ['ᴏ', 'o'],
  ['ᴘ', 'p'],
  ['ǫ', 'q'],
  ['ꜱ', 's'],
  ['ᴛ', 't'],
  ['ᴜ', 'u'],
  ['ᴠ', 'v'],
  ['ᴡ', 'w'],
  ['ᴢ', 'z'],
];

export const HOMOGLYPHS: ReadonlyMap<number, string> = new Map(
  HOMOGLYPH_PAIRS.map(([from, to]) => [from.codePointAt(0) ?? 0, to] as const),
);

/** Latin-script look-alikes (IPA, small capitals): no natural-language text mixes them into English words. */
export function isLatinLookalike(cp: number): boolean {
  return (
    (cp >= 0x0250 && cp <= 0x02af) ||
    (cp >= 0x1d00 && cp <= 0x1d2b) ||
    cp === 0xa730 ||
    cp === 0xa731 ||
    cp === 0x0131 ||
    cp === 0x0237 ||
    cp === 0x01eb
  );
}

/** Leetspeak substitutions. `1` is ambiguous (i or l): callers try both. */
export const LEET: ReadonlyMap<string, string> = new Map([
  ['0', 'o'],
  ['1', 'i'],
  ['3', 'e'],
  ['4', 'a'],
  ['5', 's'],
  ['7', 't'],
  ['8', 'b'],
  ['9', 'g'],
  ['@', 'a'],
  ['$', 's'],
  ['!', 'i'],
  ['|', 'l'],
  ['+', 't'],
]);
