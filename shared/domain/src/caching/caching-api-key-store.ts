import { LRUCache } from 'lru-cache';
import type { ApiKeyStore, ConfigChanges } from '../ports.js';
import type { ApiKeyRecord } from '../types.js';
import { decorate } from './decorate.js';
import { clearOnChange } from './read-cache.js';

/**
 * Key lookups by hash through a short-lived cache, keyed by the hash (never the key). Only keys
 * that exist are cached, so a new key works at once; a revocation made through this store applies
 * at once, one made elsewhere (another process, the CLI) as soon as `changes` reports it, or
 * within the TTL without it. Concurrent misses for one key share a single store read.
 */
export function cachingApiKeyStore(
  inner: ApiKeyStore,
  ttlMs: number,
  options: { max?: number; changes?: ConfigChanges } = {},
): ApiKeyStore {
  const cache = new LRUCache<string, ApiKeyRecord>({
    max: options.max ?? 10_000,
    ttl: ttlMs,
    fetchMethod: async (hash) => (await inner.findByHash(hash)) ?? undefined,
  });
  const check = clearOnChange(options.changes, cache);
  return decorate(inner, {
    findByHash: async (hash: string) => {
      check();
      return (await cache.fetch(hash)) ?? null;
    },
    revoke: async (id: string, at: string) => {
      const ok = await inner.revoke(id, at);
      for (const [hash, record] of cache.entries()) if (record.id === id) cache.delete(hash);
      return ok;
    },
  });
}
