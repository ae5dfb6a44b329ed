import { TtlCache } from '@guard/platform';
import type { OrgStore } from './ports.js';
import type { Org } from './types.js';

/**
 * Reads of orgs through a short-lived cache: the monitor path reads the caller's org on every
 * request (for its default policy). A change made in another process (the CLI, another worker)
 * applies within the TTL; writes made through this store apply at once.
 */
export class CachingOrgStore implements OrgStore {
  private readonly cache: TtlCache<string, Org | null>;

  constructor(
    private readonly inner: OrgStore,
    ttlMs: number,
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  async get(id: string): Promise<Org | null> {
    const hit = this.cache.get(id);
    if (hit !== undefined) return hit;
    const org = await this.inner.get(id);
    this.cache.set(id, org);
    return org;
  }

  create(org: Org): Promise<void> {
    this.cache.delete(org.id);
    return this.inner.create(org);
  }

  list(): Promise<Org[]> {
    return this.inner.list();
  }

  async setDefaultPolicy(id: string, policyId: string | null): Promise<void> {
    this.cache.delete(id);
    await this.inner.setDefaultPolicy(id, policyId);
  }
}
