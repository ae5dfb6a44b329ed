import { LRUCache } from 'lru-cache';

/** lru-cache holds objects only: a cached "not found". */
const MISSING = { missing: true } as const;

export interface ReadCache<V> {
  /** The cached value, or one store read shared by every concurrent miss for this key. */
  get(key: string): Promise<V | null>;
  forget(key: string): void;
}

/**
 * Short-lived cache of one store read, "not found" included (an unknown id is asked for as often
 * as a known one). Used by the caching store decorators; the TTL is the staleness they accept
 * for changes made by another process.
 */
export function readCache<V extends object>(
  ttlMs: number,
  max: number,
  load: (key: string) => Promise<V | null>,
): ReadCache<V> {
  const cache = new LRUCache<string, V | typeof MISSING>({
    max,
    ttl: ttlMs,
    fetchMethod: async (key) => (await load(key)) ?? MISSING,
  });
  return {
    async get(key) {
      const hit = await cache.fetch(key);
      return !hit || hit === MISSING ? null : (hit as V);
    },
    forget: (key) => {
      cache.delete(key);
    },
  };
}
