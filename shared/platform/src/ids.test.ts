import { describe, expect, it } from 'vitest';
import { idTime, isId, newId } from './ids.js';

describe('newId', () => {
  it('makes 24-char lowercase hex ids that sort by creation', () => {
    const ids = Array.from({ length: 2000 }, () => newId());
    for (const id of ids) expect(isId(id)).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('encodes the creation time to the millisecond, seconds first', () => {
    const t = Date.parse('2030-05-01T10:00:00.123Z');
    const id = newId(t);
    expect(idTime(id).toISOString()).toBe('2030-05-01T10:00:00.123Z');
    expect(id.slice(0, 8)).toBe(Math.floor(t / 1000).toString(16));
    const next = newId(t + 1);
    expect(next > id).toBe(true);
    expect(idTime(next).toISOString()).toBe('2030-05-01T10:00:00.124Z');
  });

  it('stays strictly increasing when the clock steps back', () => {
    const t = Date.parse('2031-01-01T00:00:00.500Z');
    const a = newId(t);
    const b = newId(t - 200);
    const c = newId(t - 5_000);
    expect(a < b && b < c).toBe(true);
    expect(idTime(c).getTime()).toBe(t);
  });

  it('borrows the next millisecond when one millisecond runs out of counter values', () => {
    const t = Date.parse('2032-01-01T00:00:00.000Z');
    const ids = Array.from({ length: 0x100002 }, () => newId(t));
    expect(idTime(ids[0]!).getTime()).toBe(t);
    expect(idTime(ids.at(-1)!).getTime()).toBe(t + 1);
    for (let i = 1; i < ids.length; i += 4099) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(ids.at(-1)! > ids.at(-2)!).toBe(true);
  });

  it('orders ids made in different milliseconds the same way in every process', () => {
    // The process part is last, so two processes' ids interleave by time.
    const t = Date.parse('2033-01-01T00:00:00.000Z');
    const mine = newId(t + 2);
    const otherProcessEarlier =
      Math.floor(t / 1000)
        .toString(16)
        .padStart(8, '0') +
      '001' +
      '00000' +
      'ffffffff';
    expect(otherProcessEarlier < mine).toBe(true);
  });
});
