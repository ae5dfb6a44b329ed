import { describe, expect, it } from 'vitest';
import { anActivity } from '@guard/testing';
import { MemoryActivityStore } from '../memory/memory-activity-store.js';
import { BatchingActivitySink } from './batching-activity-sink.js';

describe('BatchingActivitySink', () => {
  it('writes activities published in one tick as one batch, and resolves after the write', async () => {
    const store = new MemoryActivityStore();
    const calls: number[] = [];
    const counting = { ...store, record: async (a: Parameters<typeof store.record>[0]) => { calls.push(a.length); return store.record(a); }, list: store.list.bind(store), get: store.get.bind(store) };
    const sink = new BatchingActivitySink(counting);
    const acts = Array.from({ length: 50 }, () => anActivity('org-a'));
    await Promise.all(acts.map((a) => sink.publish(a)));
    expect(calls).toEqual([50]);
    expect((await store.list('org-a', { limit: 100 })).items).toHaveLength(50);
  });

  it('rejects the publishers of a batch whose write failed', async () => {
    const failing = { record: async () => { throw new Error('disk full'); }, list: async () => ({ items: [], has_more: false }), get: async () => null };
    const sink = new BatchingActivitySink(failing);
    await expect(sink.publish(anActivity('org-a'))).rejects.toThrow('disk full');
  });

  it('caps a batch at maxBatch', async () => {
    const sizes: number[] = [];
    const store = new MemoryActivityStore();
    const sink = new BatchingActivitySink({ record: async (a) => { sizes.push(a.length); return store.record(a); }, list: store.list.bind(store), get: store.get.bind(store) }, 10);
    await Promise.all(Array.from({ length: 25 }, () => sink.publish(anActivity('org-a'))));
    expect(sizes).toEqual([10, 10, 5]);
  });
});
