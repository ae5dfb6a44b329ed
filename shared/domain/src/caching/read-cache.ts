import { LRUCache } from 'lru-cache';
import type { ConfigChanges } from '../ports.js';

/** lru-cache holds objects only: a cached "not found". */
const MISSING = { missing: true } as const;

export interface ReadCache<V> {
  /** The cached value, or one store read shared by every concurrent miss for this key. */
  get(key: string): Promise<V | null>;
  forget(key: string): void;
}

/**
 * Returns a check to run before every cached lookup: it clears the cache when `changes` reports
 * a change made elsewhere since the last check. Without `changes`, nothing to check.
 */
export function clearOnChange(
  changes: ConfigChanges | undefined,
  cache: { clear(): void },
): () => void {
  if (!changes) return () => undefined;
  let seen = changes.version();
  return () => {
    const now = changes.version();
    if (now !== seen) {
      seen = now;
      cache.clear();
    }
  };
}

/**
 * Short-lived cache of one store read, "not found" included (an unknown id is asked for as often
 * as a known one). Used by the caching store decorators; a change made by another process
 * applies at once when `changes` reports it, else within the TTL.
 */
export function readCache<V extends object>(
  ttlMs: number,
  max: number,
  load: (key: string) => Promise<V | null>,
  changes?: ConfigChanges,
): ReadCache<V> {
  const cache = new LRUCache<string, V | typeof MISSING>({
    max,
    ttl: ttlMs,
    fetchMethod: async (key) => (await load(key)) ?? MISSING,
  });
  const check = clearOnChange(changes, cache);
  return {
    async get(key) {
      check();
      const hit = await cache.fetch(key);
      return !hit || hit === MISSING ? null : (hit as V);
    },
    forget: (key) => {
      cache.delete(key);
    },
  };
}
