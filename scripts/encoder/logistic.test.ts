import { describe, expect, it } from 'vitest';
import { seeded } from '../../shared/testing/src/seeded.js';
import { fitLogistic, fitNonNegative } from './logistic.js';

/** The gradient of the mean log loss at `w` (weights, then the intercept). */
function gradient(x: number[][], y: number[], w: number[]): number[] {
  const g = new Array<number>(w.length).fill(0);
  x.forEach((row, i) => {
    const f = [...row, 1];
    const p = 1 / (1 + Math.exp(-f.reduce((s, v, j) => s + v * (w[j] ?? 0), 0)));
    f.forEach((v, j) => (g[j] = (g[j] ?? 0) + ((p - (y[i] ?? 0)) * v) / x.length));
  });
  return g;
}

describe('fitLogistic', () => {
  it('recovers the weights of a logistic model', () => {
    const rng = seeded(3);
    const x: number[][] = [];
    const y: number[] = [];
    for (let i = 0; i < 4000; i++) {
      const a = 2 * rng() - 1;
      const b = 2 * rng() - 1;
      x.push([a, b]);
      y.push(rng() < 1 / (1 + Math.exp(-(2 * a - 1 * b + 0.5))) ? 1 : 0);
    }
    const [wa = 0, wb = 0, c = 0] = fitLogistic(x, y);
    expect(wa).toBeCloseTo(2, 0);
    expect(wb).toBeCloseTo(-1, 0);
    expect(c).toBeCloseTo(0.5, 0);
  });

  it('converges on logits clamped at +-16 (probabilities of 0 and 1), where a full Newton step from its start overshoots', () => {
    // Scores of two readers that are often saturated, as an answer's static harm is (0 for most
    // benign answers, logit -16.1), with overlapping classes: the optimum is finite.
    const rng = seeded(11);
    const x: number[][] = [];
    const y: number[] = [];
    for (let i = 0; i < 1500; i++) {
      const harmful = rng() < 0.5;
      const s = rng() < 0.4 ? -16.1 : (harmful ? 1 : -2) + 3 * (rng() - 0.5) * 2;
      const e = (harmful ? 1 : -1) + 4 * (rng() - 0.5);
      x.push([s, e]);
      y.push(harmful ? 1 : 0);
    }
    const w = fitLogistic(x, y);
    for (const v of w) expect(Math.abs(v)).toBeLessThan(10);
    for (const g of gradient(x, y, w)) expect(Math.abs(g)).toBeLessThan(1e-6);
  });
});

describe('fitNonNegative', () => {
  // y depends on s and t; the first column is noise n, the second s + n: the plain fit reads s as
  // (s + n) - n and gives the noise column a negative weight.
  const rng = seeded(5);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const s = 4 * rng() - 2;
    const t = 4 * rng() - 2;
    const n = 3 * (rng() - 0.5);
    x.push([n, s + n, t]);
    y.push(rng() < 1 / (1 + Math.exp(-(2 * s + t))) ? 1 : 0);
  }

  it('drops a reader the plain fit weighs negative, refits on the others, and puts each weight back in its column', () => {
    const plain = fitLogistic(x, y);
    expect(plain[0]).toBeLessThan(-1);
    const kept = fitLogistic(
      x.map(([, a = 0, b = 0]) => [a, b]),
      y,
    );
    expect(fitNonNegative(x, y)).toEqual([0, ...kept]);
    expect(kept[0]).toBeGreaterThan(0);
    expect(kept[1]).toBeGreaterThan(0);
  });

  it('is the plain fit when no weight is negative', () => {
    const cols = x.map(([, a = 0, b = 0]) => [a, b]);
    const plain = fitLogistic(cols, y);
    expect(Math.min(...plain.slice(0, 2))).toBeGreaterThanOrEqual(0);
    expect(fitNonNegative(cols, y)).toEqual(plain);
  });
});
