import { LRUCache } from 'lru-cache';
import type { OrgStore } from '../ports.js';
import type { Org } from '../types.js';

/** A cached "no such org": lru-cache stores objects only. */
const MISSING = { missing: true } as const;

/**
 * Reads of orgs through a short-lived cache: the request path reads the caller's org on every
 * request (authentication, the default policy). A change made in another process (the CLI,
 * another worker, another pod) applies within the TTL; writes made through this store apply at
 * once. Concurrent misses for one org share a single store read.
 */
export class CachingOrgStore implements OrgStore {
  private readonly cache: LRUCache<string, Org | typeof MISSING>;

  constructor(
    private readonly inner: OrgStore,
    ttlMs: number,
    max = 10_000,
  ) {
    this.cache = new LRUCache({
      max,
      ttl: ttlMs,
      fetchMethod: async (id) => (await inner.get(id)) ?? MISSING,
    });
  }

  async get(id: string): Promise<Org | null> {
    const hit = await this.cache.fetch(id);
    return !hit || hit === MISSING ? null : (hit as Org);
  }

  async create(org: Org): Promise<void> {
    await this.inner.create(org);
    this.cache.delete(org.id);
  }

  list(): Promise<Org[]> {
    return this.inner.list();
  }

  async setDefaultPolicy(id: string, policyId: string | null): Promise<void> {
    await this.inner.setDefaultPolicy(id, policyId);
    this.cache.delete(id);
  }
}
