import { clone, type PageRequest, type Policy, type PolicyPage, type PolicyStore, type PolicyVersion } from '@guard/domain';

interface Entry {
  policy: Policy;
  deleted: boolean;
  versions: PolicyVersion[];
}

export class MemoryPolicyStore implements PolicyStore {
  private readonly entries = new Map<string, Entry>();

  private entry(orgId: string, policyId: string): Entry | undefined {
    const e = this.entries.get(policyId);
    return e && e.policy.org_id === orgId ? e : undefined;
  }

  async insert(policy: Policy, version: PolicyVersion): Promise<void> {
    if (!policy.org_id) throw new Error('presets are not stored');
    if (this.entries.has(policy.id)) throw new Error(`policy ${policy.id} exists`);
    this.entries.set(policy.id, { policy: clone(policy), deleted: false, versions: [clone(version)] });
  }

  async replace(policy: Policy, version: PolicyVersion): Promise<void> {
    const e = this.entry(policy.org_id ?? '', policy.id);
    if (!e || e.deleted) throw new Error(`policy ${policy.id} is not stored`);
    e.policy = clone(policy);
    e.versions.push(clone(version));
  }

  async markDeleted(orgId: string, policyId: string, version: PolicyVersion): Promise<void> {
    const e = this.entry(orgId, policyId);
    if (!e || e.deleted) throw new Error(`policy ${policyId} is not stored`);
    e.deleted = true;
    e.versions.push(clone(version));
  }

  async get(orgId: string, policyId: string): Promise<Policy | null> {
    const e = this.entry(orgId, policyId);
    return e && !e.deleted ? clone(e.policy) : null;
  }

  async getLastState(orgId: string, policyId: string): Promise<{ policy: Policy; deleted: boolean } | null> {
    const e = this.entry(orgId, policyId);
    return e ? { policy: clone(e.policy), deleted: e.deleted } : null;
  }

  async list(orgId: string, page: PageRequest): Promise<PolicyPage> {
    const live = [...this.entries.values()]
      .filter((e) => e.policy.org_id === orgId && !e.deleted)
      .map((e) => e.policy)
      .sort((a, b) => (a.updated_at === b.updated_at ? (a.id < b.id ? 1 : -1) : a.updated_at < b.updated_at ? 1 : -1));
    const end = page.limit === null ? undefined : page.offset + page.limit;
    return { items: live.slice(page.offset, end).map(clone), total: live.length };
  }

  async listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    const e = this.entry(orgId, policyId);
    return e ? [...e.versions].reverse().map(clone) : [];
  }
}
