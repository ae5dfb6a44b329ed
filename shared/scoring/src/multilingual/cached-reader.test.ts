import { describe, expect, it } from 'vitest';
import { encoderCacheScope } from '../encoder/cached-encoder.js';
import { testMultilingualManifest } from '../testing/multilingual-manifest.js';
import { createOutputBuffer } from '../encoder/shared-output-table.js';
import { cachedReader, readerShape } from './cached-reader.js';
import type { MultilingualReader } from './reader.js';

const manifest = testMultilingualManifest({ harm: { w: [1, 0, 0], b: 0 } });

/** A reader whose embedding names the text (its length, first character), recording reads. */
function reader(): MultilingualReader & { seen: string[] } {
  const seen: string[] = [];
  return {
    manifest,
    seen,
    read: async (texts) => {
      seen.push(...texts);
      return texts.map((t) => Float32Array.from([t.length, t.charCodeAt(0), 0.25]));
    },
    close: async () => undefined,
  };
}

describe('cachedReader', () => {
  it('reads a text once per scope and answers it again with the same embedding', async () => {
    const inner = reader();
    const r = cachedReader(inner, 4096);
    const first = await encoderCacheScope.run('org-a', () => r.read(['Xin chào', 'Merhaba']));
    const again = await encoderCacheScope.run('org-a', () => r.read(['Merhaba', 'Xin chào']));
    expect(again[0]).toEqual(first[1]);
    expect(again[1]).toEqual(first[0]);
    expect(inner.seen).toEqual(['Xin chào', 'Merhaba']);
    await encoderCacheScope.run('org-b', () => r.read(['Xin chào']));
    expect(inner.seen).toHaveLength(3);
    expect(r.stats()).toEqual({ hits: 2, reads: 3 });
  });

  it('shares a table between readers given the same buffer', async () => {
    const buffer = createOutputBuffer(64, readerShape(manifest));
    const [a, b] = [reader(), reader()];
    await cachedReader(a, buffer).read(['Bonjour à tous']);
    const [out] = await cachedReader(b, buffer).read(['Bonjour à tous']);
    expect(b.seen).toEqual([]);
    expect(Array.from(out ?? [])).toEqual([14, 66, 0.25]);
  });
});
