/** Threshold and ranking measures shared by the evaluation scripts. */

/** The score above which at most `fpr` of `neg` lie (a row is flagged when its score is above). */
export function thresholdAt(neg: number[], fpr: number): number {
  const sorted = [...neg].sort((a, b) => b - a);
  return sorted[Math.floor(fpr * sorted.length)] ?? -Infinity;
}

/** ROC AUC, ties averaged. */
export function rocAuc(pos: number[], neg: number[]): number {
  if (pos.length === 0 || neg.length === 0) return NaN;
  const all = [...pos.map((s) => ({ s, p: 1 })), ...neg.map((s) => ({ s, p: 0 }))].sort(
    (a, b) => a.s - b.s,
  );
  let rankSumPos = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j < all.length && all[j]?.s === all[i]?.s) j++;
    const avg = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (all[k]?.p === 1) rankSumPos += avg;
    i = j;
  }
  return (rankSumPos - (pos.length * (pos.length + 1)) / 2) / (pos.length * neg.length);
}
