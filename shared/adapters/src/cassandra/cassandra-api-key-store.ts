import type { Client, types } from 'cassandra-driver';
import type { ApiKeyRecord, ApiKeyStore, Role } from '@guard/domain';
import {
  configQueryOptions,
  readPages,
  type CassandraConfigStoreOptions,
  type ConfigQueryOptions,
} from './cassandra-config-options.js';

// Keys of one org read from api_keys_by_org at once; their records are then read in parallel.
const PAGE = 200;
const COLUMNS =
  'key_hash, id, org_id, user_id, role, staff, name, prefix, created_at, revoked_at' as const;

/**
 * API keys on Cassandra (infra/cassandra/002_config.cql). A key's fields live in one row only,
 * `api_keys` by key hash: authentication reads that row, and revocation is one compare-and-set
 * on it (`IF id = ? AND revoked_at = null`, so the first revocation time stays). The lookups by
 * id and by org are pointers (id -> hash) that never change once written, so there is no second
 * copy of `revoked_at` to update, and no moment in which a revoked key still looks live through
 * some other table.
 *
 * `create` claims the id (IF NOT EXISTS on `api_keys_by_id`), adds the org's pointer, then
 * inserts the record IF NOT EXISTS on its hash: the key works only once that last write landed.
 * A create refused for a duplicate hash takes its pointers back; one that died half-way leaves
 * pointers to a record that is not there or names another id, and every read through a pointer
 * checks that the record it reaches has the same id (and org) before using it.
 */
export class CassandraApiKeyStore implements ApiKeyStore {
  private readonly client: Client;
  private readonly q: ConfigQueryOptions;
  private readonly cql: {
    claimId: string;
    releaseId: string;
    insertOrgPointer: string;
    deleteOrgPointer: string;
    insertKey: string;
    byHash: string;
    hashOfId: string;
    byOrg: string;
    revoke: string;
    any: string;
  };

  constructor(client: Client, options: CassandraConfigStoreOptions) {
    this.client = client;
    this.q = configQueryOptions(options);
    const ks = this.q.keyspace;
    this.cql = {
      claimId: `INSERT INTO ${ks}.api_keys_by_id (id, key_hash) VALUES (?, ?) IF NOT EXISTS`,
      releaseId: `DELETE FROM ${ks}.api_keys_by_id WHERE id = ? IF key_hash = ?`,
      insertOrgPointer: `INSERT INTO ${ks}.api_keys_by_org (org_id, id, key_hash) VALUES (?, ?, ?)`,
      deleteOrgPointer: `DELETE FROM ${ks}.api_keys_by_org WHERE org_id = ? AND id = ?`,
      insertKey: `INSERT INTO ${ks}.api_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
      byHash: `SELECT ${COLUMNS} FROM ${ks}.api_keys WHERE key_hash = ?`,
      hashOfId: `SELECT key_hash FROM ${ks}.api_keys_by_id WHERE id = ?`,
      byOrg: `SELECT id, key_hash FROM ${ks}.api_keys_by_org WHERE org_id = ?`,
      // `IF id = ?` also fails for a hash with no record, where `revoked_at = null` alone would
      // hold and the update would create a row holding nothing but revoked_at.
      revoke: `UPDATE ${ks}.api_keys SET revoked_at = ? WHERE key_hash = ? IF id = ? AND revoked_at = null`,
      // Stops at the first row found, wherever it is: an existence check, not a count.
      any: `SELECT key_hash FROM ${ks}.api_keys LIMIT 1`,
    };
  }

  async create(key: ApiKeyRecord): Promise<void> {
    const claim = await this.client.execute(this.cql.claimId, [key.id, key.key_hash], this.q.cas);
    if (!claim.wasApplied()) throw new Error('duplicate api key');
    await this.client.execute(
      this.cql.insertOrgPointer,
      [key.org_id, key.id, key.key_hash],
      this.q.plain,
    );
    const rs = await this.client.execute(
      this.cql.insertKey,
      [
        key.key_hash,
        key.id,
        key.org_id,
        key.user_id,
        key.role,
        key.staff,
        key.name,
        key.prefix,
        key.created_at,
        // Unset rather than null: a null would write a tombstone for nothing.
        key.revoked_at ?? undefined,
      ],
      this.q.cas,
    );
    if (rs.wasApplied()) return;
    // Another key has this hash. The id is ours (claimed above): hand it back.
    await this.client.execute(this.cql.deleteOrgPointer, [key.org_id, key.id], this.q.plain);
    await this.client.execute(this.cql.releaseId, [key.id, key.key_hash], this.q.cas);
    throw new Error('duplicate api key');
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = (await this.client.execute(this.cql.byHash, [keyHash], this.q.plain)).first();
    return row ? toKey(row) : null;
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const hash = await this.hashOf(id);
    if (hash === null) return null;
    const key = await this.findByHash(hash);
    return key?.id === id ? key : null;
  }

  async listByOrg(orgId: string): Promise<ApiKeyRecord[]> {
    const keys: ApiKeyRecord[] = [];
    for await (const rows of readPages(this.client, this.cql.byOrg, [orgId], this.q.plain, PAGE)) {
      const page = await Promise.all(
        rows.map(async (r) => {
          const key = await this.findByHash(r.get('key_hash') as string);
          return key?.id === (r.get('id') as string) && key.org_id === orgId ? key : null;
        }),
      );
      for (const key of page) if (key) keys.push(key);
    }
    return keys;
  }

  async revoke(id: string, at: string): Promise<boolean> {
    const hash = await this.hashOf(id);
    if (hash === null) return false;
    const rs = await this.client.execute(this.cql.revoke, [at, hash, id], this.q.cas);
    // Not applied: revoked already (true: the first time stays), or the pointer leads to no key
    // of this id (a create that never finished).
    return rs.wasApplied() || rs.first()?.get('id') === id;
  }

  async hasAnyKey(): Promise<boolean> {
    return (await this.client.execute(this.cql.any, [], this.q.plain)).rows.length > 0;
  }

  private async hashOf(id: string): Promise<string | null> {
    const row = (await this.client.execute(this.cql.hashOfId, [id], this.q.plain)).first();
    return (row?.get('key_hash') as string | null | undefined) ?? null;
  }
}

function toKey(row: types.Row): ApiKeyRecord {
  return {
    id: row.get('id') as string,
    org_id: row.get('org_id') as string,
    user_id: row.get('user_id') as string,
    role: row.get('role') as Role,
    staff: row.get('staff') === true,
    name: row.get('name') as string,
    key_hash: row.get('key_hash') as string,
    prefix: row.get('prefix') as string,
    created_at: row.get('created_at') as string,
    revoked_at: (row.get('revoked_at') as string | null) ?? null,
  };
}
