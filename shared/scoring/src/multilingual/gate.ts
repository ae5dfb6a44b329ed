/**
 * Which texts the English models cannot read: the multilingual reader's gate. A text is sent on
 * when most of its letters are outside ASCII (another script, or a Latin-script language written
 * with many diacritics, such as Vietnamese), or when too few of its words are whole words of the
 * English WordPiece vocabulary the static detectors and the English encoder read (a Latin-script
 * language in plain ASCII: Indonesian, Javanese, Swahili, German, ...). Cheap: one pass over the
 * text and a set lookup per word.
 */
import { loadTokenizerResources } from '../ml/ml-model.js';

export interface GatePoint {
  /** Share of non-ASCII letters from which a text is sent on. */
  non_ascii: number;
  /** Below this share of known English words (texts of `min_words` or more), a text is sent on. */
  known_words: number;
  min_words: number;
}

export const DEFAULT_GATE: GatePoint = { non_ascii: 0.3, known_words: 0.6, min_words: 3 };

const LETTER = /\p{L}/u;
const WORD = /[\p{L}\p{M}]+(?:['’][\p{L}]+)?/gu;

export interface GateReading {
  letters: number;
  nonAscii: number;
  words: number;
  known: number;
  send: boolean;
}

/** `known`: whether a lower-cased word is a whole word of the English vocabulary. */
export function readGate(
  text: string,
  known: (word: string) => boolean,
  point: GatePoint = DEFAULT_GATE,
): GateReading {
  let letters = 0;
  let nonAscii = 0;
  for (const ch of text) {
    if (!LETTER.test(ch)) continue;
    letters++;
    if (ch.charCodeAt(0) > 0x7f) nonAscii++;
  }
  let words = 0;
  let knownWords = 0;
  for (const m of text.matchAll(WORD)) {
    words++;
    if (known(m[0].toLowerCase().replace(/’/g, "'"))) knownWords++;
  }
  const send =
    letters > 0 &&
    (nonAscii / letters >= point.non_ascii ||
      (words >= point.min_words && knownWords / words < point.known_words));
  return { letters, nonAscii, words, known: knownWords, send };
}

/**
 * The gate over the English WordPiece vocabulary the static detectors read (models/vocab.txt):
 * whether a text is sent on to the multilingual reader.
 */
export function englishGate(point: GatePoint = DEFAULT_GATE): (text: string) => boolean {
  const { tokenizer } = loadTokenizerResources();
  return (text) => readGate(text, (w) => tokenizer.has(w), point).send;
}
