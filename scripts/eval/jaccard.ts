/** Jaccard similarity of two sets: the members they share over all their members. */
export function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  const shared = [...a].filter((x) => b.has(x)).length;
  return shared / (a.size + b.size - shared);
}
