import type { Client, types } from 'cassandra-driver';
import type { Org, OrgKind, OrgStore } from '@guard/domain';
import {
  configQueryOptions,
  readPages,
  type CassandraConfigStoreOptions,
  type ConfigQueryOptions,
} from './cassandra-config-options.js';

// The one partition of org_directory.
const SCOPE = 'all';
// Ids read from org_directory at once; their orgs are then read in parallel.
const PAGE = 200;

/**
 * Orgs on Cassandra (infra/cassandra/002_config.cql): one row per org in `orgs`, and every id in
 * the single partition of `org_directory`, so that `list` reads one partition in id order
 * instead of scanning the ring.
 *
 * `create` writes the directory entry first and then the org with IF NOT EXISTS, so an org that
 * exists is always listed; a create that died in between leaves an id without an org, which
 * `list` skips. Every write of `orgs` is a lightweight transaction (the insert, and the update
 * IF EXISTS, which must not create a partial row for an unknown id): mixing them with plain
 * writes on the same rows is unsafe.
 */
export class CassandraOrgStore implements OrgStore {
  private readonly client: Client;
  private readonly q: ConfigQueryOptions;
  private readonly cql: {
    insertDirectory: string;
    insertOrg: string;
    get: string;
    listIds: string;
    setDefault: string;
  };

  constructor(client: Client, options: CassandraConfigStoreOptions) {
    this.client = client;
    this.q = configQueryOptions(options);
    const ks = this.q.keyspace;
    this.cql = {
      insertDirectory: `INSERT INTO ${ks}.org_directory (scope, id) VALUES (?, ?)`,
      insertOrg: `INSERT INTO ${ks}.orgs (id, name, kind, default_policy_id, created_at)
                  VALUES (?, ?, ?, ?, ?) IF NOT EXISTS`,
      get: `SELECT id, name, kind, default_policy_id, created_at FROM ${ks}.orgs WHERE id = ?`,
      listIds: `SELECT id FROM ${ks}.org_directory WHERE scope = ?`,
      setDefault: `UPDATE ${ks}.orgs SET default_policy_id = ? WHERE id = ? IF EXISTS`,
    };
  }

  async create(org: Org): Promise<void> {
    await this.client.execute(this.cql.insertDirectory, [SCOPE, org.id], this.q.plain);
    const rs = await this.client.execute(
      this.cql.insertOrg,
      // Unset rather than null: a null would write a tombstone for nothing.
      [org.id, org.name, org.kind, org.default_policy_id ?? undefined, org.created_at],
      this.q.cas,
    );
    if (!rs.wasApplied()) throw new Error(`org ${org.id} exists`);
  }

  async get(id: string): Promise<Org | null> {
    const row = (await this.client.execute(this.cql.get, [id], this.q.plain)).first();
    return row ? toOrg(row) : null;
  }

  async list(): Promise<Org[]> {
    const orgs: Org[] = [];
    for await (const rows of readPages(
      this.client,
      this.cql.listIds,
      [SCOPE],
      this.q.plain,
      PAGE,
    )) {
      const page = await Promise.all(rows.map((r) => this.get(r.get('id') as string)));
      for (const org of page) if (org) orgs.push(org);
    }
    return orgs;
  }

  async setDefaultPolicy(id: string, policyId: string | null): Promise<void> {
    await this.client.execute(this.cql.setDefault, [policyId, id], this.q.cas);
  }
}

function toOrg(row: types.Row): Org {
  return {
    id: row.get('id') as string,
    name: row.get('name') as string,
    kind: row.get('kind') as OrgKind,
    default_policy_id: (row.get('default_policy_id') as string | null) ?? null,
    created_at: row.get('created_at') as string,
  };
}
