import { describe, expect, it } from 'vitest';
import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  it('expires entries after the ttl and bounds its size', () => {
    let now = 1000;
    const c = new TtlCache<string, number>(50, 2, () => now);
    c.set('a', 1);
    expect(c.get('a')).toBe(1);
    now += 50;
    expect(c.get('a')).toBeUndefined();
    c.set('a', 1);
    c.set('b', 2);
    c.set('c', 3);
    expect(c.size).toBe(2);
    expect(c.get('a')).toBeUndefined();
    expect(c.get('c')).toBe(3);
  });

  it('stores nothing with a zero ttl', () => {
    const c = new TtlCache<string, number>(0);
    c.set('a', 1);
    expect(c.get('a')).toBeUndefined();
  });
});
