/** Words split by separators or spaces (`b.o.m.b`, `k i l l`) joined when that reveals a word. */
import { COMMON_WORDS, STOPWORDS, TRIGGER_WORDS } from './word-lists.js';
import type { MutationEvidence } from './normalized-text.js';
import type { Vocab } from './vocab.js';
import type { Replacement } from './replacements.js';

export interface LetterToken {
  start: number;
  end: number;
  word: string;
}

export const LETTER_RE = /[A-Za-z]+/g;
export const SPLIT_SEPARATORS = ' \t.-_*/|+~^,\'"`';
export const INWORD_SEPARATORS = '-._*|/~^+';

/** Returns the lower-cased ASCII letter words of `s` (reused by later passes). */
export function splitWordPass(
  s: string,
  vocab: Vocab,
  replacements: Replacement[],
  evidence: MutationEvidence[],
): string[] {
  const tokens: LetterToken[] = [];
  LETTER_RE.lastIndex = 0;
  for (let m = LETTER_RE.exec(s); m !== null; m = LETTER_RE.exec(s)) {
    tokens.push({ start: m.index, end: m.index + m[0].length, word: m[0].toLowerCase() });
  }
  let found = 0;
  // Only the leetspeak replacements can overlap a rejoined word (this pass moves past each of its
  // own). They are disjoint and are asked about at increasing offsets, so one forward cursor
  // answers every check; scanning them all per check was quadratic on long disguised texts.
  const leet = [...replacements].sort((a, b) => a.start - b.start);
  let cursor = 0;
  const taken = (start: number, end: number): boolean => {
    while (cursor < leet.length && (leet[cursor]?.end ?? 0) <= start) cursor++;
    const r = leet[cursor];
    return r !== undefined && r.start < end;
  };

  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i];
    if (!t) break;

    // (1) Single letters separated by one separator ("i g n o r e", "i.g.n.o.r.e").
    if (t.word.length === 1) {
      let j = i;
      let joined = t.word;
      const breaks: number[] = [];
      while (j + 1 < tokens.length && j - i < 200) {
        const a = tokens[j];
        const b = tokens[j + 1];
        if (!a || !b || b.word.length !== 1) break;
        const gap = s.slice(a.end, b.start);
        if (gap.length === 0 || gap.length > 3 || !onlyChars(gap, SPLIT_SEPARATORS)) break;
        if (gap.length >= 2 && gap.trim() === '') breaks.push(joined.length);
        joined += b.word;
        j++;
      }
      const last = tokens[j];
      if (j - i + 1 >= 4 && last && vocab.hasInside(joined) && !taken(t.start, last.end)) {
        replacements.push({
          start: t.start,
          end: last.end,
          text: segmentWords(joined, breaks, vocab),
        });
        found++;
        i = j + 1;
        continue;
      }
      if (j > i) {
        // A run of single letters that spells nothing: skip it whole (keeps the pass linear).
        i = j;
        continue;
      }
    }

    // (2) Short fragments glued by in-word separators ("ig-no-re", "b.o.m.b" handled above).
    const startsVocab = t.word.length <= 5 && vocab.isPrefix(t.word);
    if (startsVocab) {
      let j = i;
      let joined = t.word;
      while (j + 1 < tokens.length && j - i < 5) {
        const a = tokens[j];
        const b = tokens[j + 1];
        if (!a || !b || b.word.length > 5) break;
        const gap = s.slice(a.end, b.start);
        if (gap.length !== 1 || !INWORD_SEPARATORS.includes(gap)) break;
        joined += b.word;
        j++;
        if (!vocab.isPrefix(joined)) break;
        const last = tokens[j];
        if (joined.length >= 4 && vocab.has(joined) && last && !taken(t.start, last.end)) {
          replacements.push({ start: t.start, end: last.end, text: joined });
          found++;
          i = j + 1;
          break;
        }
      }
      if (i > j) continue;
    }

    // (3) Short fragments separated by single spaces ("ig no re"): only when they spell a trigger
    // word and are not themselves ordinary words.
    if (startsVocab && t.word.length <= 4) {
      let joined = t.word;
      let allCommon = isOrdinaryWord(t.word);
      let matched = -1;
      for (let j = i + 1; j < tokens.length && j - i < 4; j++) {
        const a = tokens[j - 1];
        const b = tokens[j];
        if (!a || !b || b.word.length > 4 || b.start !== a.end + 1 || s.charCodeAt(a.end) !== 0x20)
          break;
        joined += b.word;
        if (!vocab.isPrefix(joined)) break;
        allCommon = allCommon && isOrdinaryWord(b.word);
        if (joined.length >= 5 && vocab.has(joined) && !allCommon) {
          matched = j;
          break;
        }
      }
      const last = matched >= 0 ? tokens[matched] : undefined;
      if (last && !taken(t.start, last.end)) {
        replacements.push({ start: t.start, end: last.end, text: joined });
        found++;
        i = matched + 1;
        continue;
      }
    }
    i++;
  }
  if (found > 0)
    evidence.push({
      kind: 'split_words',
      detail: `${found} words split by spaces or separators rejoined`,
    });
  return tokens.map((t) => t.word);
}

export function isOrdinaryWord(w: string): boolean {
  return COMMON_WORDS.has(w) || STOPWORDS.has(w) || TRIGGER_WORDS.has(w);
}

export function onlyChars(s: string, allowed: string): boolean {
  for (let i = 0; i < s.length; i++) if (!allowed.includes(s[i] ?? '')) return false;
  return true;
}

/** Recover word boundaries in a run of joined letters: explicit breaks first, then dictionary segmentation. */
export function segmentWords(joined: string, breaks: number[], vocab: Vocab): string {
  if (breaks.length > 0) {
    let out = '';
    let prev = 0;
    for (const b of breaks) {
      out += joined.slice(prev, b) + ' ';
      prev = b;
    }
    return out + joined.slice(prev);
  }
  if (joined.length > 120) return joined;
  // Word break by dynamic programming, preferring fewer words; unknown letters stay attached.
  const n = joined.length;
  const best: Array<{ cost: number; prev: number } | undefined> = new Array(n + 1);
  best[0] = { cost: 0, prev: -1 };
  for (let end = 1; end <= n; end++) {
    for (let start = Math.max(0, end - 16); start < end; start++) {
      const b = best[start];
      if (!b) continue;
      const w = joined.slice(start, end);
      const known = vocab.has(w) || COMMON_WORDS.has(w);
      const cost = b.cost + (known ? 1 : 3 * w.length);
      const cur = best[end];
      if (!cur || cost < cur.cost) best[end] = { cost, prev: start };
    }
  }
  const parts: string[] = [];
  let end = n;
  while (end > 0) {
    const b = best[end];
    if (!b || b.prev < 0) break;
    parts.push(joined.slice(b.prev, end));
    end = b.prev;
  }
  // Merge consecutive unknown single letters back together.
  parts.reverse();
  const merged: string[] = [];
  for (const p of parts) {
    const last = merged[merged.length - 1];
    if (
      last !== undefined &&
      !COMMON_WORDS.has(p) &&
      !vocab.has(p) &&
      !COMMON_WORDS.has(last) &&
      !vocab.has(last)
    ) {
      merged[merged.length - 1] = last + p;
    } else merged.push(p);
  }
  return merged.join(' ');
}
