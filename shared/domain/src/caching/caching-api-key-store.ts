import { LRUCache } from 'lru-cache';
import type { ApiKeyStore } from '../ports.js';
import type { ApiKeyRecord } from '../types.js';
import { decorate } from './decorate.js';

/**
 * Key lookups by hash through a short-lived cache, keyed by the hash (never the key). Only keys
 * that exist are cached, so a new key works at once; a revocation made through this store applies
 * at once, one made elsewhere (another process, the CLI) within the TTL. Concurrent misses for
 * one key share a single store read.
 */
export function cachingApiKeyStore(inner: ApiKeyStore, ttlMs: number, max = 10_000): ApiKeyStore {
  const cache = new LRUCache<string, ApiKeyRecord>({
    max,
    ttl: ttlMs,
    fetchMethod: async (hash) => (await inner.findByHash(hash)) ?? undefined,
  });
  return decorate(inner, {
    findByHash: async (hash: string) => (await cache.fetch(hash)) ?? null,
    revoke: async (id: string, at: string) => {
      const ok = await inner.revoke(id, at);
      for (const [hash, record] of cache.entries()) if (record.id === id) cache.delete(hash);
      return ok;
    },
  });
}
