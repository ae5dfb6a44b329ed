import { describe, expect, it } from 'vitest';
import { scriptedEncoder, testManifest } from '../testing/scripted-encoder.js';
import type { EncoderItem, EncoderOutput } from './encoder.js';
import { cachedEncoder, encoderCacheScope } from './cached-encoder.js';
import { createOutputBuffer, SharedOutputTable } from './shared-output-table.js';

/** Outputs that name what was read, so that a wrong order or a wrong entry shows. */
const answer = (item: EncoderItem): EncoderOutput => ({
  probs: [item.text.length, item.role.length, 0, 0],
  // testManifest's dims: 4.
  embedding: Float32Array.from([item.text.charCodeAt(0) || 0, 0, 0, 1]),
});

const p = (text: string): EncoderItem => ({ role: 'prompt', text });

describe('cachedEncoder', () => {
  it('reads a text once and answers it again with the same output, in the order asked', async () => {
    const inner = scriptedEncoder(testManifest(), answer);
    const enc = cachedEncoder(inner, 4096);
    const first = await enc.encode([p('alpha'), p('be')]);
    const second = await enc.encode([p('be'), p('gamma'), p('alpha')]);
    expect(inner.seen.map((i) => i.text)).toEqual(['alpha', 'be', 'gamma']);
    expect(second.map((o) => o.probs[0])).toEqual([2, 5, 5]);
    expect(second[0]).toEqual(first[1]);
    expect(second[2]).toEqual(first[0]);
    expect(enc.stats()).toEqual({ hits: 2, reads: 3, entries: 3 });
  });

  it('reads a text asked twice in one call once, and tells roles apart', async () => {
    const inner = scriptedEncoder(testManifest(), answer);
    const enc = cachedEncoder(inner, 4096);
    const out = await enc.encode([p('same'), { role: 'response', text: 'same' }, p('same')]);
    expect(inner.seen).toEqual([p('same'), { role: 'response', text: 'same' }]);
    expect(out.map((o) => o.probs[1])).toEqual([6, 8, 6]);
  });

  it('holds at most its number of entries, and answers every text of a call larger than that', async () => {
    const inner = scriptedEncoder(testManifest(), answer);
    const enc = cachedEncoder(inner, 2);
    const texts = ['v', 'wx', 'xyz', 'wxyz0', 'abcdef'];
    const many = await enc.encode(texts.map(p));
    expect(many.map((o) => o.probs[0])).toEqual([1, 2, 3, 5, 6]);
    expect(enc.stats().entries).toBeLessThanOrEqual(2);
    // Whatever it kept is answered rightly (a slot holds one text, checked by its key).
    const again = await enc.encode(texts.map(p));
    expect(again.map((o) => o.probs[0])).toEqual([1, 2, 3, 5, 6]);
    expect(inner.seen.length).toBeGreaterThanOrEqual(5 + 3);
  });

  it('shares its table with the engines given the same buffer', async () => {
    const buffer = createOutputBuffer(64, testManifest());
    const a = scriptedEncoder(testManifest(), answer);
    const b = scriptedEncoder(testManifest(), answer);
    await cachedEncoder(a, buffer).encode([p('read by one')]);
    const out = await cachedEncoder(b, buffer).encode([p('read by one')]);
    expect(b.seen).toEqual([]);
    // The table counts for both.
    expect(new SharedOutputTable(buffer, testManifest()).stats()).toMatchObject({
      hits: 1,
      reads: 1,
    });
    expect(out[0]?.probs).toEqual([11, 6, 0, 0]);
  });

  it('keeps what it read in one scope (an organization) from every other', async () => {
    const inner = scriptedEncoder(testManifest(), answer);
    const enc = cachedEncoder(inner, 4096);
    await encoderCacheScope.run('org-a', () => enc.encode([p('same text')]));
    await encoderCacheScope.run('org-b', () => enc.encode([p('same text')]));
    await encoderCacheScope.run('org-a', () => enc.encode([p('same text')]));
    await enc.encode([p('same text')]);
    expect(inner.seen).toHaveLength(3);
    expect(enc.stats()).toMatchObject({ hits: 1, reads: 3 });
  });

  it('does not remember a failed read', async () => {
    let fail = true;
    const reads: string[] = [];
    const enc = cachedEncoder(
      {
        manifest: testManifest(),
        encode: async (items) => {
          if (fail) throw new Error('model file missing');
          reads.push(...items.map((i) => i.text));
          return items.map(answer);
        },
        close: async () => undefined,
      },
      10,
    );
    await expect(enc.encode([p('x')])).rejects.toThrow('model file missing');
    fail = false;
    expect((await enc.encode([p('x')]))[0]?.probs[0]).toBe(1);
    expect(reads).toEqual(['x']);
  });

  it('refuses an encoder that answers for fewer texts than asked', async () => {
    const short = scriptedEncoder(testManifest(), answer);
    const enc = cachedEncoder({ ...short, encode: async () => [] }, 10);
    await expect(enc.encode([p('x')])).rejects.toThrow('fewer texts');
    expect(enc.stats().entries).toBe(0);
  });
});
