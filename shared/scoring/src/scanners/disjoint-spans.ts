/**
 * Overlap resolution shared by the PII and secrets scanners: walk the findings best first and keep
 * each one that overlaps nothing already kept.
 *
 * Kept spans are marked in a coverage array rather than compared with every kept span: a text of
 * 200 KB can hold tens of thousands of findings (one e-mail address or SSN every few characters),
 * and the pairwise check was quadratic in them. Each regex's matches are disjoint, so the
 * characters visited add up to at most (number of patterns) x (text length). Findings are
 * never empty spans.
 */
export interface Span {
  start: number;
  end: number;
}

/** The spans of `byPriority` (best first) that overlap no better span, in text order. */
export function keepDisjoint<T extends Span>(byPriority: readonly T[]): T[] {
  let limit = 0;
  for (const f of byPriority) limit = Math.max(limit, f.end);
  const covered = new Uint8Array(limit);
  const kept: T[] = [];
  for (const f of byPriority) {
    let free = true;
    for (let p = f.start; p < f.end && free; p++) free = covered[p] === 0;
    if (!free) continue;
    covered.fill(1, f.start, f.end);
    kept.push(f);
  }
  return kept.sort((a, b) => a.start - b.start);
}
