/**
 * Logistic regressions for the calibration scripts (calibrate.ts, calibrate-documents.ts,
 * calibrate-answers.ts) and the heads on sentence embeddings (the multilingual reader's harm head,
 * train-comply-meaning.ts).
 */

/**
 * Logistic regression of y on the rows of `x` (Newton steps; a tiny ridge keeps the Hessian
 * invertible): the weights, then the intercept. With one feature, Platt scaling.
 */
export function fitLogistic(x: number[][], y: number[]): number[] {
  const k = (x[0]?.length ?? 0) + 1;
  const w: number[] = new Array<number>(k).fill(0);
  w[0] = 1;
  for (let it = 0; it < 50; it++) {
    const g: number[] = new Array<number>(k).fill(0);
    const h: number[][] = Array.from({ length: k }, () => new Array<number>(k).fill(0));
    x.forEach((row, i) => {
      const f = [...row, 1];
      const p = 1 / (1 + Math.exp(-f.reduce((s, v, j) => s + v * (w[j] ?? 0), 0)));
      const d = p - (y[i] ?? 0);
      const wt = Math.max(p * (1 - p), 1e-9);
      f.forEach((fa, a) => {
        g[a] = (g[a] ?? 0) + d * fa;
        f.forEach((fb, b) => ((h[a] as number[])[b] = ((h[a] as number[])[b] ?? 0) + wt * fa * fb));
      });
    });
    h.forEach((r, a) => (r[a] = (r[a] ?? 0) + 1e-6));
    const step = solve(h, g);
    // Damped: a full Newton step from saturated scores can overshoot and diverge (measured on
    // answers' harm logits of +-16); halve it until the loss does not rise. Where the full step
    // lowers the loss, as near the optimum, it is taken as it is.
    const before = logLoss(x, y, w);
    let t = 1;
    const tried = (tt: number) => w.map((v, a) => v - tt * (step[a] ?? 0));
    while (t > 1e-6 && logLoss(x, y, tried(t)) > before) t /= 2;
    // No step along this direction lowers the loss: keep the weights. Near the optimum that is
    // rounding; from a start saturated far from it (features of |25| or more, which `logit`'s clamp
    // at about 16 keeps out of the calibrations) the fit stalls here, as it did before this check.
    if (logLoss(x, y, tried(t)) > before) break;
    tried(t).forEach((v, a) => (w[a] = v));
    if (t * step.reduce((s, v) => s + Math.abs(v), 0) < 1e-9) break;
  }
  return w;
}

/**
 * `fitLogistic` with no negative weight: readers that say much the same thing may get one (more
 * of it read, less overall) to correct the others on a few hundred rows; such a column is dropped
 * and the fit redone, the most negative first, down to one column (non-negative stacking), so
 * that no reader counts against what it reads. The weights of every column of `x` (0 for those
 * dropped), then the intercept. A last column left is kept whatever its sign (a calibration that
 * gets a negative weight there has no reader to fall back on).
 */
export function fitNonNegative(x: number[][], y: number[]): number[] {
  const all = (x[0] ?? []).map((_, k) => k);
  const fitOn = (keep: number[]): number[] => {
    const fit = fitLogistic(
      x.map((row) => keep.map((k) => row[k] ?? 0)),
      y,
    );
    const worst = keep.reduce((w, _, i) => ((fit[i] ?? 0) < (fit[w] ?? 0) ? i : w), 0);
    if ((fit[worst] ?? 0) < 0 && keep.length > 1) return fitOn(keep.filter((_, i) => i !== worst));
    return [
      ...all.map((k) => (keep.includes(k) ? (fit[keep.indexOf(k)] ?? 0) : 0)),
      fit[keep.length] ?? 0,
    ];
  };
  return fitOn(all);
}

/** The summed log loss of weights `w` (then the intercept) on rows `x` with labels `y`. */
function logLoss(x: number[][], y: number[], w: number[]): number {
  let loss = 0;
  x.forEach((row, i) => {
    const z = row.reduce((s, v, j) => s + v * (w[j] ?? 0), w[row.length] ?? 0);
    const m = (y[i] ?? 0) === 1 ? -z : z;
    // log(1 + e^m), stable for large |m|.
    loss += m > 0 ? m + Math.log1p(Math.exp(-m)) : Math.log1p(Math.exp(m));
  });
  return loss;
}

/** Solves m v = r by Gaussian elimination with partial pivoting (m is small and well posed). */
function solve(m: number[][], r: number[]): number[] {
  const a = m.map((row, i) => [...row, r[i] ?? 0]);
  const n = a.length;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let i = c + 1; i < n; i++) if (Math.abs(a[i]?.[c] ?? 0) > Math.abs(a[p]?.[c] ?? 0)) p = i;
    [a[c], a[p]] = [a[p] as number[], a[c] as number[]];
    const pc = a[c] as number[];
    for (let i = 0; i < n; i++) {
      if (i === c) continue;
      const ri = a[i] as number[];
      const f = (ri[c] ?? 0) / (pc[c] ?? 1);
      for (let j = c; j <= n; j++) ri[j] = (ri[j] ?? 0) - f * (pc[j] ?? 0);
    }
  }
  return a.map((row, i) => (row[n] ?? 0) / (row[i] ?? 1));
}

/** A linear head on embeddings: `w · e + b` is its logit (encoder.ts `linearLogit`). */
export interface EmbeddingHead {
  w: number[];
  b: number;
}

/**
 * Logistic regression of y on embeddings (`rows`, each `dims` long), classes weighted to balance,
 * by full-batch gradient descent with an L2 penalty `lambda` on the embeddings scaled by `scale`
 * (so the penalty does not depend on their unit length), `steps` steps. For the heads on frozen
 * sentence embeddings: the multilingual reader's harm head, the encoder's compliance by meaning.
 */
export function fitEmbeddingHead(
  rows: readonly Float32Array[],
  ys: readonly number[],
  {
    dims,
    scale = 8,
    lambda = 1e-2,
    steps = 3000,
  }: { dims: number; scale?: number; lambda?: number; steps?: number },
): EmbeddingHead {
  const n = rows.length;
  const pos = ys.filter((y) => y === 1).length;
  const flat = new Float64Array(n * dims);
  rows.forEach((x, i) => {
    for (let k = 0; k < dims; k++) flat[i * dims + k] = scale * (x[k] as number);
  });
  const weight = Float64Array.from(ys, (y) => (y === 1 ? n / (2 * pos) : n / (2 * (n - pos))));
  const w = new Float64Array(dims);
  let b = 0;
  const g = new Float64Array(dims);
  for (let step = 0; step < steps; step++) {
    g.fill(0);
    let gb = 0;
    for (let i = 0, o = 0; i < n; i++, o += dims) {
      let z = b;
      for (let k = 0; k < dims; k++) z += w[k]! * flat[o + k]!;
      const e = (1 / (1 + Math.exp(-z)) - (ys[i] as number)) * weight[i]!;
      for (let k = 0; k < dims; k++) g[k]! += e * flat[o + k]!;
      gb += e;
    }
    for (let k = 0; k < dims; k++) w[k] = w[k]! - (g[k]! / n + lambda * w[k]!);
    b -= gb / n;
  }
  return { w: Array.from(w, (v) => v * scale), b };
}
