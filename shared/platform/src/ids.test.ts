import { describe, expect, it } from 'vitest';
import { idTime, isId, newId } from './ids.js';

describe('newId', () => {
  it('makes 24-char lowercase hex ids that sort by creation', () => {
    const ids = Array.from({ length: 2000 }, () => newId());
    for (const id of ids) expect(isId(id)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('encodes the creation second first', () => {
    const t = Date.parse('2030-05-01T10:00:00Z');
    const id = newId(t);
    expect(idTime(id).toISOString()).toBe('2030-05-01T10:00:00.000Z');
    expect(newId(t + 1000) > id).toBe(true);
  });
});
