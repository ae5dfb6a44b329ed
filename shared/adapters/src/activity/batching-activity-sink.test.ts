import { describe, expect, it } from 'vitest';
import { anActivity } from '@guard/testing';
import { MemoryActivityStore } from '../memory/memory-activity-store.js';
import { BatchingActivitySink } from './batching-activity-sink.js';

describe('BatchingActivitySink', () => {
  it('writes activities published in one tick as one batch, and resolves after the write', async () => {
    const store = new MemoryActivityStore();
    const calls: number[] = [];
    const counting = {
      ...store,
      record: async (a: Parameters<typeof store.record>[0]) => {
        calls.push(a.length);
        return store.record(a);
      },
      list: store.list.bind(store),
      get: store.get.bind(store),
    };
    const sink = new BatchingActivitySink(counting);
    const acts = Array.from({ length: 50 }, () => anActivity('org-a'));
    await Promise.all(acts.map((a) => sink.publish(a)));
    expect(calls).toEqual([50]);
    expect((await store.list('org-a', { limit: 100 })).items).toHaveLength(50);
  });

  it('rejects the publishers of a batch whose write failed', async () => {
    const failing = {
      record: async () => {
        throw new Error('disk full');
      },
      list: async () => ({ items: [], has_more: false }),
      get: async () => null,
    };
    const sink = new BatchingActivitySink(failing);
    await expect(sink.publish(anActivity('org-a'))).rejects.toThrow('disk full');
  });

  it('caps a batch at maxBatch', async () => {
    const sizes: number[] = [];
    const store = new MemoryActivityStore();
    const sink = new BatchingActivitySink(
      {
        record: async (a) => {
          sizes.push(a.length);
          return store.record(a);
        },
        list: store.list.bind(store),
        get: store.get.bind(store),
      },
      10,
    );
    await Promise.all(Array.from({ length: 25 }, () => sink.publish(anActivity('org-a'))));
    expect(sizes).toEqual([10, 10, 5]);
  });

  it('a record that cannot be stored fails only its own publisher; the rest of its batch is written', async () => {
    const store = new MemoryActivityStore();
    const bad = anActivity('org-x');
    // Like SQLite: the whole batch's transaction fails when any record in it does.
    const picky = {
      record: async (a: Parameters<typeof store.record>[0]) => {
        if (a.some((x) => x.id === bad.id)) throw new Error('cannot serialise');
        return store.record(a);
      },
      list: store.list.bind(store),
      get: store.get.bind(store),
    };
    const reported: string[] = [];
    const sink = new BatchingActivitySink(picky, 1000, (_err, id) => reported.push(id));
    const good = Array.from({ length: 20 }, () => anActivity('org-a'));
    const results = await Promise.allSettled(
      [...good.slice(0, 10), bad, ...good.slice(10)].map((a) => sink.publish(a)),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[10]!.status).toBe('rejected');
    expect((await store.list('org-a', { limit: 100 })).items).toHaveLength(20);
    expect(reported).toEqual([bad.id]);
    expect(sink.failedRecords).toBe(1);
  });
});
