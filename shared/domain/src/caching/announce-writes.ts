import type { ApiKeyStore, OrgStore, PolicyStore } from '../ports.js';
import { decorate } from './decorate.js';

/** The methods of each config store that change what the request path caches. */
const WRITES = {
  orgs: ['create', 'setDefaultPolicy'],
  keys: ['create', 'revoke'],
  policies: ['insert', 'replace', 'markDeleted'],
} as const satisfies {
  orgs: ReadonlyArray<keyof OrgStore>;
  keys: ReadonlyArray<keyof ApiKeyStore>;
  policies: ReadonlyArray<keyof PolicyStore>;
};

export interface ConfigStores {
  orgs: OrgStore;
  keys: ApiKeyStore;
  policies: PolicyStore;
}

/**
 * The config stores with `announce` called after every write that lands (also after a write that
 * answered a conflict: nothing changed, and a spare notice costs one cache refill). Other
 * processes learn from the notice that their caches are stale (see ConfigChanges). `announce`
 * must not throw: a notice that cannot be sent leaves the others stale for their cache TTL.
 */
export function announceWrites(stores: ConfigStores, announce: () => void): ConfigStores {
  const wrap = <T extends object>(inner: T, methods: readonly (keyof T & string)[]): T => {
    const overrides: Partial<T> = {};
    for (const m of methods) {
      const original = inner[m] as (...args: unknown[]) => Promise<unknown>;
      (overrides as Record<string, unknown>)[m] = async (...args: unknown[]) => {
        const result = await original.apply(inner, args);
        announce();
        return result;
      };
    }
    return decorate(inner, overrides);
  };
  return {
    orgs: wrap(stores.orgs, WRITES.orgs),
    keys: wrap(stores.keys, WRITES.keys),
    policies: wrap(stores.policies, WRITES.policies),
  };
}
