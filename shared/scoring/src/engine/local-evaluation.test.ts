import { describe, expect, it } from 'vitest';
import { r3, r3Side } from './local-evaluation.js';

describe('r3Side', () => {
  it('never prints a score under the limit as the limit', () => {
    expect(r3(0.4996)).toBe(0.5);
    expect(r3Side(0.4996, 0.5)).toBe(0.499);
    expect(r3Side(0.49999, 0.5)).toBe(0.499);
  });
  it('never prints a score at the limit as under it', () => {
    expect(r3Side(0.5, 0.5)).toBe(0.5);
    expect(r3Side(0.33334, 0.3333)).toBe(0.334);
  });
  it('rounds as r3 does when the rounded score stays under the limit', () => {
    expect(r3Side(0.4994, 0.5)).toBe(0.499);
    expect(r3Side(0.0504, 0.5)).toBe(0.05);
    expect(r3Side(0.1236, 0.5)).toBe(0.124);
  });
});
