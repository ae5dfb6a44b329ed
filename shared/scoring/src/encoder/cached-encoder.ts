/**
 * Encoder outputs remembered by what was read. Traffic sends the same texts again and again: an
 * agent's loop sends every earlier tool result with each step, a chat sends its history with
 * each turn (a long history is read in windows, and all but the last stay the same), and
 * protected completions read the request again to judge the answer. The encoder answers a given
 * (role, text) the same every time (one text per run, the same weights), so a remembered output
 * is exactly the one a new read would give: the verdicts do not change, only the cost.
 *
 * Keys are SHA-256 digests of the role and text, so the cache holds no request text; it is
 * bounded by entries (about 2 KB each: the head probabilities and the 384-number embedding), and
 * the least recently used go first.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Encoder, EncoderItem, EncoderOutput } from './encoder.js';

export interface EncoderCacheStats {
  /** Texts answered from the cache. */
  hits: number;
  /** Texts read by the encoder. */
  reads: number;
  /** Entries held now. */
  entries: number;
}

export interface CachedEncoder extends Encoder {
  stats(): EncoderCacheStats;
}

function keyOf(item: EncoderItem): string {
  return createHash('sha256').update(item.role).update('\0').update(item.text).digest('base64');
}

/**
 * `inner` with its outputs remembered for up to `entries` texts. A call reads only the texts it
 * does not find (each once, even when asked twice in one call), in one call to `inner`, and
 * answers in the order asked. Outputs are shared between callers: they are read, never written.
 * Failed or aborted reads are not remembered.
 */
export function cachedEncoder(inner: Encoder, entries: number): CachedEncoder {
  const cache = new LRUCache<string, EncoderOutput>({ max: Math.max(1, Math.floor(entries)) });
  let hits = 0;
  let reads = 0;
  return {
    manifest: inner.manifest,
    async encode(items, signal) {
      const keys = items.map(keyOf);
      const found = keys.map((k) => cache.get(k));
      const missing = new Map<string, EncoderItem>();
      keys.forEach((k, i) => {
        if (!found[i] && !missing.has(k)) missing.set(k, items[i] as EncoderItem);
      });
      const fresh = new Map<string, EncoderOutput>();
      if (missing.size > 0) {
        const out = await inner.encode([...missing.values()], signal);
        if (out.length !== missing.size)
          throw new Error('encoder answered for fewer texts than asked');
        [...missing.keys()].forEach((k, i) => {
          fresh.set(k, out[i] as EncoderOutput);
          cache.set(k, out[i] as EncoderOutput);
        });
      }
      hits += items.length - missing.size;
      reads += missing.size;
      return keys.map((k, i) => found[i] ?? (fresh.get(k) as EncoderOutput));
    },
    stats: () => ({ hits, reads, entries: cache.size }),
    close: () => inner.close(),
  };
}
