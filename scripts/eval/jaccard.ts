/** Jaccard similarity of two sets: the members they share over all their members. */
export function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  const shared = [...a].filter((x) => b.has(x)).length;
  return shared / (a.size + b.size - shared);
}

/** The lower-cased words of `text` (letters, digits and apostrophes), as a set. */
export function wordSet(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z0-9']+/g) ?? []);
}

/**
 * The texts of `probe` that are near-copies of one of `written`: a word Jaccard of `at` or more.
 * How a hand-written probe is kept apart from the build's written families (its tests).
 */
export function nearCopies(
  probe: readonly string[],
  written: readonly string[],
  at = 0.5,
): string[] {
  const sets = written.map(wordSet);
  return probe.filter((t) => {
    const w = wordSet(t);
    return sets.some((s) => jaccard(w, s) >= at);
  });
}
