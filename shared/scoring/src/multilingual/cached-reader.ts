/**
 * The multilingual reader's embeddings remembered as the encoder's outputs are
 * (encoder/cached-encoder.ts): in a shared-memory table keyed by a digest of the request's scope
 * and the text, so that a request read before its answer is checked, or before each streamed
 * window of it, is read once. Exactly the embedding a new read gives (float32, one text a run).
 */
import { cacheKey, readThroughTable } from '../encoder/cached-encoder.js';
import {
  createOutputBuffer,
  SharedOutputTable,
  type OutputShape,
} from '../encoder/shared-output-table.js';
import type { MultilingualManifest, MultilingualReader } from './reader.js';

/** The table's shape for this reader: no heads, its embedding (the harm head's width). */
export function readerShape(manifest: MultilingualManifest): OutputShape {
  return { heads: [], dims: manifest.harm?.w.length ?? 384 };
}

/** A table for `entries` embeddings of this reader, to share between engines. */
export function createReaderBuffer(
  entries: number,
  manifest: MultilingualManifest,
): SharedArrayBuffer {
  return createOutputBuffer(entries, readerShape(manifest));
}

/** `inner` reading through a table in `buffer` (shared), or of its own of `buffer` entries. */
export function cachedReader(
  inner: MultilingualReader,
  buffer: SharedArrayBuffer | number,
): MultilingualReader & { stats(): { hits: number; reads: number } } {
  const shape = readerShape(inner.manifest);
  const table = new SharedOutputTable(
    typeof buffer === 'number' ? createOutputBuffer(buffer, shape) : buffer,
    shape,
  );
  let hits = 0;
  let reads = 0;
  return {
    manifest: inner.manifest,
    async read(texts, signal) {
      const keys = texts.map((t) => cacheKey('multilingual', t));
      const { outs, reads: read } = await readThroughTable(table, keys, async (positions) =>
        (
          await inner.read(
            positions.map((p) => texts[p] as string),
            signal,
          )
        ).map((embedding) => ({
          probs: [],
          embedding,
        })),
      );
      hits += texts.length - read;
      reads += read;
      return outs.map((o) => o.embedding);
    },
    stats: () => ({ hits, reads }),
    close: () => inner.close(),
  };
}
