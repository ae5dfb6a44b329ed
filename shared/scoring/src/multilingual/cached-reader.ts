/**
 * The multilingual reader's embeddings remembered as the encoder's outputs are
 * (encoder/cached-encoder.ts): in a shared-memory table keyed by a digest of the request's scope
 * and the text, so that a request read before its answer is checked, or before each streamed
 * window of it, is read once. Exactly the embedding a new read gives (float32, one text a run).
 */
import { cacheKey, OutputCache } from '../encoder/cached-encoder.js';
import type { OutputShape } from '../encoder/shared-output-table.js';
import type { MultilingualManifest, MultilingualReader } from './reader.js';

/** The table's shape for this reader: no heads, its embedding (the harm head's width). */
export function readerShape(manifest: MultilingualManifest): OutputShape {
  return { heads: [], dims: manifest.harm?.w.length ?? 384 };
}

/** `inner` reading through a table in `source` (shared), or of its own of `source` entries. */
export function cachedReader(
  inner: MultilingualReader,
  source: SharedArrayBuffer | number,
): MultilingualReader & { stats(): { hits: number; reads: number } } {
  const cache = new OutputCache(source, readerShape(inner.manifest));
  return {
    manifest: inner.manifest,
    async read(texts, signal) {
      const outs = await cache.outputs(
        texts.map((t) => cacheKey('multilingual', t)),
        async (positions) =>
          (
            await inner.read(
              positions.map((p) => texts[p] as string),
              signal,
            )
          ).map((embedding) => ({ probs: [], embedding })),
      );
      return outs.map((o) => o.embedding);
    },
    stats: () => cache.counts(),
    close: () => inner.close(),
  };
}
