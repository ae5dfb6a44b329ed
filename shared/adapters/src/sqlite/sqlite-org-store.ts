import type { Org, OrgKind, OrgStore } from '@guard/domain';
import type { SqliteDb } from './sqlite-database.js';

interface OrgRow {
  id: string;
  name: string;
  kind: string;
  default_policy_id: string | null;
  created_at: string;
}

const toOrg = (r: OrgRow): Org => ({ ...r, kind: r.kind as OrgKind });

export class SqliteOrgStore implements OrgStore {
  private readonly insertStmt;
  private readonly getStmt;
  private readonly listStmt;
  private readonly setDefaultStmt;

  constructor(db: SqliteDb) {
    this.insertStmt = db.prepare(
      'INSERT INTO orgs (id, name, kind, default_policy_id, created_at) VALUES (@id, @name, @kind, @default_policy_id, @created_at)',
    );
    this.getStmt = db.prepare<[string], OrgRow>('SELECT * FROM orgs WHERE id = ?');
    this.listStmt = db.prepare<[], OrgRow>('SELECT * FROM orgs ORDER BY id');
    this.setDefaultStmt = db.prepare('UPDATE orgs SET default_policy_id = ? WHERE id = ?');
  }

  async create(org: Org): Promise<void> {
    this.insertStmt.run(org);
  }

  async get(id: string): Promise<Org | null> {
    const row = this.getStmt.get(id);
    return row ? toOrg(row) : null;
  }

  async list(): Promise<Org[]> {
    return this.listStmt.all().map(toOrg);
  }

  async setDefaultPolicy(id: string, policyId: string | null): Promise<void> {
    this.setDefaultStmt.run(policyId, id);
  }
}
