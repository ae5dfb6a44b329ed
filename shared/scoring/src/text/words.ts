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
  if (
    w.endsWith('s') &&
    !w.endsWith('ss') &&
    !w.endsWith('us') &&
    !w.endsWith('is') &&
    w.length > 3
  )
    return w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  if (n >= 3 && w[n - 1] === w[n - 2] && !'lsz'.includes(w[n - 1] ?? '')) return w.slice(0, -1);
  return w;
}

let rowA = new Int32Array(64);
let rowB = new Int32Array(64);

/**
 * Levenshtein distance, abandoned as soon as it must exceed `max` (then returns max + 1).
 * Only the diagonal band |i - j| <= max is computed (a cell outside it is already > max), so it
 * takes O(len * (2*max+1)) time with two rows rather than O(len^2): 200-letter keywords against
 * 200-letter words cost 1,000 cells per pair, not 40,000.
 */
export function boundedLevenshtein(a: string, b: string, max: number): number {
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > max) return max + 1;
  if (la === 0) return lb;
  if (lb === 0) return la;
  const over = max + 1;
  // Two rows reused between calls: the keyword matcher calls this for every candidate pair.
  if (rowA.length <= lb) {
    rowA = new Int32Array(2 * (lb + 1));
    rowB = new Int32Array(2 * (lb + 1));
  }
  let prev = rowA;
  let cur = rowB;
  prev.fill(over, 0, lb + 1);
  for (let j = 0; j <= Math.min(lb, max); j++) prev[j] = j;
  for (let i = 1; i <= la; i++) {
    const from = Math.max(1, i - max);
    const to = Math.min(lb, i + max);
    // The cell left of the band: column 0 (distance i) or outside the band (> max).
    cur[from - 1] = from === 1 ? Math.min(i, over) : over;
    let rowMin = cur[from - 1] ?? over;
    const ca = a.charCodeAt(i - 1);
    for (let j = from; j <= to; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min(
        (prev[j] ?? over) + 1,
        (cur[j - 1] ?? over) + 1,
        (prev[j - 1] ?? over) + cost,
        over,
      );
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    // The next row reads one cell right of this band: outside it, so > max.
    if (to < lb) cur[to + 1] = over;
    if (rowMin > max) return over;
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb] ?? over;
}

/** Fuzzy tolerance by word length: short words must match exactly. */
export function fuzzyBudget(length: number): number {
  if (length < 5) return 0;
  if (length < 9) return 1;
  return 2;
}
