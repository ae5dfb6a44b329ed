import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { testManifest } from '../testing/scripted-encoder.js';
import { createOutputBuffer, SharedOutputTable } from './shared-output-table.js';

const shape = { heads: testManifest().heads, dims: 384 };
const key = (...w: number[]) => Int32Array.from(w);
const out = (v: number) => ({
  probs: [v, v / 2, v / 4, v / 8].map(Math.fround),
  embedding: new Float32Array(384).fill(v),
});

describe('SharedOutputTable', () => {
  it('answers what was stored under a key, exactly, and nothing for another key', () => {
    const t = new SharedOutputTable(createOutputBuffer(16, shape), shape);
    expect(t.entries).toBe(16);
    expect(t.get(key(1, 2, 3, 4))).toBeUndefined();
    t.set(key(1, 2, 3, 4), out(0.1));
    expect(t.get(key(1, 2, 3, 4))).toEqual(out(0.1));
    // Same slot (first word), another key: absent, not the stored output.
    expect(t.get(key(1, 2, 3, 5))).toBeUndefined();
    // A new text in the slot replaces the old one.
    t.set(key(17, 0, 0, 0), out(0.7));
    expect(t.get(key(1, 2, 3, 4))).toBeUndefined();
    expect(t.get(key(17, 0, 0, 0))).toEqual(out(0.7));
    expect(t.used()).toBe(1);
  });

  it('counts what every user of the buffer found and read', () => {
    const buffer = createOutputBuffer(16, shape);
    new SharedOutputTable(buffer, shape).count(3, 1);
    new SharedOutputTable(buffer, shape).count(0, 2);
    const t = new SharedOutputTable(buffer, shape);
    t.set(key(5, 5, 5, 5), out(0.5));
    expect(t.stats()).toEqual({ hits: 3, reads: 3, entries: 1 });
  });

  it('skips an output of another shape, and refuses a buffer of another shape', () => {
    const t = new SharedOutputTable(createOutputBuffer(4, shape), shape);
    t.set(key(1, 1, 1, 1), { probs: [0.5], embedding: new Float32Array(384) });
    expect(t.used()).toBe(0);
    expect(
      () => new SharedOutputTable(createOutputBuffer(4, shape), { heads: ['a'], dims: 384 }),
    ).toThrow(/does not hold a header and whole slots/);
  });

  it('four threads writing and reading the same slots never read a torn or wrong output', async () => {
    // 8 slots, 40 keys: every slot is written over and over by several threads at once.
    const buffer = createOutputBuffer(8, shape);
    const runs = await Promise.all(
      [1, 2, 3, 4].map(
        (seed) =>
          new Promise<{ hits: number; wrong: number }>((resolve, reject) => {
            const w = new Worker(new URL('../testing/output-table-worker.mjs', import.meta.url), {
              workerData: { buffer, shape, seed, rounds: 200_000, keys: 40 },
            });
            w.once('message', resolve);
            w.once('error', reject);
          }),
      ),
    );
    expect(runs.reduce((n, r) => n + r.wrong, 0)).toBe(0);
    // The check means something only if the threads did read outputs back.
    expect(runs.reduce((n, r) => n + r.hits, 0)).toBeGreaterThan(1000);
  }, 60_000);
});
