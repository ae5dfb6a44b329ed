/** Word-level helpers shared by the normaliser, the scanners and the rule router. */

const WORD_RE = /[\p{L}\p{N}]+/gu;

export interface WordToken {
  /** Lower-cased word. */
  word: string;
  start: number;
  end: number;
}

/** Lower-cased words (letters and digits) with their offsets in `text`. */
export function tokenizeWords(text: string): WordToken[] {
  const out: WordToken[] = [];
  WORD_RE.lastIndex = 0;
  for (let m = WORD_RE.exec(text); m !== null; m = WORD_RE.exec(text)) {
    out.push({ word: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** Lower-cased words only. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  WORD_RE.lastIndex = 0;
  for (let m = WORD_RE.exec(text); m !== null; m = WORD_RE.exec(text)) out.push(m[0].toLowerCase());
  return out;
}

/**
 * A light English suffix stripper: enough to make "weapons"/"weapon", "hacking"/"hack",
 * "threatens"/"threaten" meet, cheap, and idempotent on its own output.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) return w.slice(0, -3) + 'y';
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ing') && w.length > 5) {
    w = w.slice(0, -3);
    return undouble(w);
  }
  if (w.endsWith('ed') && w.length > 4) {
    w = w.slice(0, -2);
    return undouble(w);
  }
  if (w.endsWith('es') && w.length > 4 && /(?:ch|sh|x|ss|z)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is') && w.length > 3) return w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  if (n >= 3 && w[n - 1] === w[n - 2] && !'lsz'.includes(w[n - 1] ?? '')) return w.slice(0, -1);
  return w;
}

/**
 * Levenshtein distance, abandoned as soon as it must exceed `max` (then returns max + 1).
 * O(len * (2*max+1)) time with two rows.
 */
export function boundedLevenshtein(a: string, b: string, max: number): number {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > max) return max + 1;
  if (la === 0) return lb;
  if (lb === 0) return la;
  let prev = new Array<number>(lb + 1);
  let cur = new Array<number>(lb + 1);
  for (let j = 0; j <= lb; j++) prev[j] = j;
  for (let i = 1; i <= la; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= lb; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb] ?? max + 1;
}

/** Fuzzy tolerance by word length: short words must match exactly. */
export function fuzzyBudget(length: number): number {
  if (length < 5) return 0;
  if (length < 9) return 1;
  return 2;
}
