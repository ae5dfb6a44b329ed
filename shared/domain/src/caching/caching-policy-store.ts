import { LRUCache } from 'lru-cache';
import type { PolicyStore } from '../ports.js';
import type { Policy } from '../types.js';
import { decorate } from './decorate.js';

const MISSING = { missing: true } as const;

/**
 * Live-policy reads through a short-lived cache: monitor calls read their policies (or the org's
 * default) on every request. Writes through this store drop the entry at once; a change made in
 * another process applies within the TTL. Reads that writes depend on (`getLastState`, used for
 * compare-and-set) always go to the store.
 */
export function cachingPolicyStore(inner: PolicyStore, ttlMs: number, max = 10_000): PolicyStore {
  const key = (orgId: string, id: string) => `${orgId}\u0000${id}`;
  const cache = new LRUCache<string, Policy | typeof MISSING>({
    max,
    ttl: ttlMs,
    fetchMethod: async (k) => {
      const [orgId, id] = k.split('\u0000') as [string, string];
      return (await inner.get(orgId, id)) ?? MISSING;
    },
  });
  const forget = (orgId: string, id: string) => cache.delete(key(orgId, id));
  return decorate(inner, {
    get: async (orgId: string, id: string) => {
      const hit = await cache.fetch(key(orgId, id));
      return !hit || hit === MISSING ? null : (hit as Policy);
    },
    insert: async (...args: Parameters<PolicyStore['insert']>) => {
      await inner.insert(...args);
      forget(args[0].org_id ?? '', args[0].id);
    },
    replace: async (...args: Parameters<PolicyStore['replace']>) => {
      const result = await inner.replace(...args);
      forget(args[0].org_id ?? '', args[0].id);
      return result;
    },
    markDeleted: async (...args: Parameters<PolicyStore['markDeleted']>) => {
      const result = await inner.markDeleted(...args);
      forget(args[0], args[1]);
      return result;
    },
  });
}
