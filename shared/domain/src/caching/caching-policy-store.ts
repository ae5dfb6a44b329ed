import type { ConfigChanges, PolicyStore } from '../ports.js';
import { decorate } from './decorate.js';
import { readCache } from './read-cache.js';

/**
 * Live-policy reads through a short-lived cache: monitor calls read their policies (or the org's
 * default) on every request. Writes through this store drop the entry at once; a change made in
 * another process as soon as `changes` reports it, or within the TTL without it. Reads that
 * writes depend on (`getLastState`, used for compare-and-set) always go to the store.
 */
export function cachingPolicyStore(
  inner: PolicyStore,
  ttlMs: number,
  options: { max?: number; changes?: ConfigChanges } = {},
): PolicyStore {
  const key = (orgId: string, id: string) => `${orgId}\u0000${id}`;
  const cache = readCache(
    ttlMs,
    options.max ?? 10_000,
    (k) => {
      const [orgId, id] = k.split('\u0000') as [string, string];
      return inner.get(orgId, id);
    },
    options.changes,
  );
  const forget = (orgId: string, id: string) => cache.forget(key(orgId, id));
  return decorate(inner, {
    get: (orgId: string, id: string) => cache.get(key(orgId, id)),
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
