/** The words whose appearance after undoing a disguise counts as evidence: the trigger list plus the rules' own. */
import { TRIGGER_WORDS } from './word-lists.js';

export const TRIGGER_PREFIXES: ReadonlySet<string> = prefixesOf(TRIGGER_WORDS);
export const extraPrefixCache = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

export function prefixesOf(words: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const w of words) for (let i = 1; i <= w.length; i++) out.add(w.slice(0, i));
  return out;
}

export class Vocab {
  private readonly extraPrefixes: ReadonlySet<string> | undefined;
  constructor(private readonly extra: ReadonlySet<string> | undefined) {
    if (extra && extra.size > 0) {
      let p = extraPrefixCache.get(extra);
      if (!p) {
        p = prefixesOf(extra);
        extraPrefixCache.set(extra, p);
      }
      this.extraPrefixes = p;
    }
  }
  has(word: string): boolean {
    return TRIGGER_WORDS.has(word) || (this.extra !== undefined && this.extra.has(word));
  }
  /** Whether some vocabulary word starts with `s` (prunes fragment joining early). */
  isPrefix(s: string): boolean {
    return (
      TRIGGER_PREFIXES.has(s) || (this.extraPrefixes !== undefined && this.extraPrefixes.has(s))
    );
  }
  /** Whether `s` contains a vocabulary word of length >= 4 as a substring. */
  hasInside(s: string): boolean {
    const n = s.length;
    for (let i = 0; i < n; i++) {
      for (let len = 4; len <= 16 && i + len <= n; len++)
        if (this.has(s.slice(i, i + len))) return true;
    }
    return false;
  }
}
