import { clone, type Org, type OrgStore } from '@guard/domain';

export class MemoryOrgStore implements OrgStore {
  private readonly orgs = new Map<string, Org>();

  async create(org: Org): Promise<void> {
    if (this.orgs.has(org.id)) throw new Error(`org ${org.id} exists`);
    this.orgs.set(org.id, clone(org));
  }

  async get(id: string): Promise<Org | null> {
    const org = this.orgs.get(id);
    return org ? clone(org) : null;
  }

  async list(): Promise<Org[]> {
    return [...this.orgs.values()].sort((a, b) => a.id.localeCompare(b.id)).map(clone);
  }

  async setDefaultPolicy(id: string, policyId: string | null): Promise<void> {
    const org = this.orgs.get(id);
    if (org) org.default_policy_id = policyId;
  }
}
