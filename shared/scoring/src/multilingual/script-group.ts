/**
 * The writing system a text is mostly in, for the multilingual reader's per-script offsets
 * (`harm.offsets` in multilingual.json): its sentence embeddings carry the language as well as the
 * meaning, so the harm head is fitted on embeddings less each script's mean over benign texts, and
 * the same mean is taken off at serving (as an offset of the logit, the head being linear).
 */
export const SCRIPT_GROUPS = [
  'han',
  'kana',
  'hangul',
  'thai',
  'arabic',
  'hebrew',
  'cyrillic',
  'greek',
  'devanagari',
  'bengali',
  'latin',
  'other',
] as const;
export type ScriptGroup = (typeof SCRIPT_GROUPS)[number];

const SCRIPTS: ReadonlyArray<readonly [ScriptGroup, RegExp]> = [
  ['han', /\p{Script=Han}/u],
  ['kana', /[\p{Script=Hiragana}\p{Script=Katakana}]/u],
  ['hangul', /\p{Script=Hangul}/u],
  ['thai', /\p{Script=Thai}/u],
  ['arabic', /\p{Script=Arabic}/u],
  ['hebrew', /\p{Script=Hebrew}/u],
  ['cyrillic', /\p{Script=Cyrillic}/u],
  ['greek', /\p{Script=Greek}/u],
  ['devanagari', /\p{Script=Devanagari}/u],
  ['bengali', /\p{Script=Bengali}/u],
  ['latin', /\p{Script=Latin}/u],
];
const LETTER = /\p{L}/u;

/**
 * The script most of the letters of `text` are in; Japanese (kana among Han characters) counts
 * as `kana` from one kana letter in ten; `other` for scripts not listed, or no letters.
 */
export function scriptGroup(text: string): ScriptGroup {
  const counts = new Map<ScriptGroup, number>();
  let letters = 0;
  for (const ch of text) {
    if (!LETTER.test(ch)) continue;
    letters++;
    const hit = SCRIPTS.find(([, re]) => re.test(ch));
    const g = hit ? hit[0] : 'other';
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  if (letters === 0) return 'other';
  if ((counts.get('kana') ?? 0) >= 0.1 * letters) return 'kana';
  let best: ScriptGroup = 'other';
  let most = 0;
  for (const [g, n] of counts)
    if (n > most) {
      best = g;
      most = n;
    }
  return best;
}
