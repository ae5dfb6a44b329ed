import { describe, expect, it } from 'vitest';
import { lagOf } from './consumer-lag.js';

describe('consumer lag', () => {
  it('sums what each partition holds past the committed offset, from the start where none is', () => {
    expect(
      lagOf([
        { partition: 0, high: '120', low: '0', committed: '100' },
        { partition: 1, high: '50', low: '10', committed: '-1' },
        { partition: 2, high: '7', low: '0', committed: undefined },
        // Retention can leave the committed offset past a truncated end: no negative lag.
        { partition: 3, high: '5', low: '5', committed: '9' },
      ]),
    ).toBe(20 + 40 + 7);
  });
});
