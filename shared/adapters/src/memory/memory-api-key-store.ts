import { clone, type ApiKeyRecord, type ApiKeyStore } from '@guard/domain';

export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly byId = new Map<string, ApiKeyRecord>();
  private readonly idByHash = new Map<string, string>();

  async create(key: ApiKeyRecord): Promise<void> {
    if (this.byId.has(key.id) || this.idByHash.has(key.key_hash))
      throw new Error('duplicate api key');
    this.byId.set(key.id, clone(key));
    this.idByHash.set(key.key_hash, key.id);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const id = this.idByHash.get(keyHash);
    return id ? this.get(id) : null;
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const key = this.byId.get(id);
    return key ? clone(key) : null;
  }

  async listByOrg(orgId: string): Promise<ApiKeyRecord[]> {
    return [...this.byId.values()]
      .filter((k) => k.org_id === orgId)
      .sort((a, b) => a.id.localeCompare(b.id))
      .map(clone);
  }

  async revoke(id: string, at: string): Promise<boolean> {
    const key = this.byId.get(id);
    if (!key) return false;
    key.revoked_at ??= at;
    return true;
  }

  async hasAnyKey(): Promise<boolean> {
    return this.byId.size > 0;
  }
}
