import type { ConfigChanges, OrgStore } from '../ports.js';
import type { Org } from '../types.js';
import { readCache, type ReadCache } from './read-cache.js';

/**
 * Reads of orgs through a short-lived cache: the request path reads the caller's org on every
 * request (authentication, the default policy). A change made in another process (the CLI,
 * another worker, another pod) applies as soon as `changes` reports it, or within the TTL
 * without it; writes made through this store apply at once. Concurrent misses for one org share
 * a single store read.
 */
export class CachingOrgStore implements OrgStore {
  private readonly cache: ReadCache<Org>;

  constructor(
    private readonly inner: OrgStore,
    ttlMs: number,
    options: { max?: number; changes?: ConfigChanges } = {},
  ) {
    this.cache = readCache(ttlMs, options.max ?? 10_000, (id) => inner.get(id), options.changes);
  }

  get(id: string): Promise<Org | null> {
    return this.cache.get(id);
  }

  async create(org: Org): Promise<void> {
    await this.inner.create(org);
    this.cache.forget(org.id);
  }

  list(): Promise<Org[]> {
    return this.inner.list();
  }

  async setDefaultPolicy(id: string, policyId: string | null): Promise<void> {
    await this.inner.setDefaultPolicy(id, policyId);
    this.cache.forget(id);
  }
}
