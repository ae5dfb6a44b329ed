import type { PageRequest, Policy, PolicyPage, PolicyStore, PolicyVersion } from '@guard/domain';
import type { SqliteDb } from './sqlite-database.js';

interface PolicyRow {
  doc: string;
  deleted: number;
}

export class SqlitePolicyStore implements PolicyStore {
  private readonly insertPolicy;
  private readonly updatePolicy;
  private readonly deletePolicy;
  private readonly insertVersion;
  private readonly getLive;
  private readonly getAny;
  private readonly countLive;
  private readonly pageLive;
  private readonly allLive;
  private readonly versions;
  private readonly db: SqliteDb;

  constructor(db: SqliteDb) {
    this.db = db;
    this.insertPolicy = db.prepare('INSERT INTO policies (id, org_id, doc, updated_at, deleted) VALUES (?, ?, ?, ?, 0)');
    this.updatePolicy = db.prepare('UPDATE policies SET doc = ?, updated_at = ? WHERE id = ? AND org_id = ? AND deleted = 0');
    this.deletePolicy = db.prepare('UPDATE policies SET deleted = 1 WHERE id = ? AND org_id = ? AND deleted = 0');
    this.insertVersion = db.prepare('INSERT INTO policy_versions (id, policy_id, org_id, doc) VALUES (?, ?, ?, ?)');
    this.getLive = db.prepare<[string, string], PolicyRow>('SELECT doc, deleted FROM policies WHERE id = ? AND org_id = ? AND deleted = 0');
    this.getAny = db.prepare<[string, string], PolicyRow>('SELECT doc, deleted FROM policies WHERE id = ? AND org_id = ?');
    this.countLive = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM policies WHERE org_id = ? AND deleted = 0');
    this.pageLive = db.prepare<[string, number, number], PolicyRow>(
      'SELECT doc, deleted FROM policies WHERE org_id = ? AND deleted = 0 ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?',
    );
    this.allLive = db.prepare<[string, number], PolicyRow>(
      'SELECT doc, deleted FROM policies WHERE org_id = ? AND deleted = 0 ORDER BY updated_at DESC, id DESC LIMIT -1 OFFSET ?',
    );
    this.versions = db.prepare<[string, string], { doc: string }>(
      'SELECT doc FROM policy_versions WHERE org_id = ? AND policy_id = ? ORDER BY seq DESC',
    );
  }

  async insert(policy: Policy, version: PolicyVersion): Promise<void> {
    this.db.transaction(() => {
      this.insertPolicy.run(policy.id, requireOrg(policy), JSON.stringify(policy), policy.updated_at);
      this.insertVersion.run(version.id, version.policy_id, version.org_id, JSON.stringify(version));
    })();
  }

  async replace(policy: Policy, version: PolicyVersion): Promise<void> {
    this.db.transaction(() => {
      const r = this.updatePolicy.run(JSON.stringify(policy), policy.updated_at, policy.id, requireOrg(policy));
      if (r.changes === 0) throw new Error(`policy ${policy.id} is not stored`);
      this.insertVersion.run(version.id, version.policy_id, version.org_id, JSON.stringify(version));
    })();
  }

  async markDeleted(orgId: string, policyId: string, version: PolicyVersion): Promise<void> {
    this.db.transaction(() => {
      const r = this.deletePolicy.run(policyId, orgId);
      if (r.changes === 0) throw new Error(`policy ${policyId} is not stored`);
      this.insertVersion.run(version.id, version.policy_id, version.org_id, JSON.stringify(version));
    })();
  }

  async get(orgId: string, policyId: string): Promise<Policy | null> {
    const row = this.getLive.get(policyId, orgId);
    return row ? (JSON.parse(row.doc) as Policy) : null;
  }

  async getLastState(orgId: string, policyId: string): Promise<{ policy: Policy; deleted: boolean } | null> {
    const row = this.getAny.get(policyId, orgId);
    return row ? { policy: JSON.parse(row.doc) as Policy, deleted: row.deleted === 1 } : null;
  }

  async list(orgId: string, page: PageRequest): Promise<PolicyPage> {
    const total = this.countLive.get(orgId)?.n ?? 0;
    const rows = page.limit === null ? this.allLive.all(orgId, page.offset) : this.pageLive.all(orgId, page.limit, page.offset);
    return { items: rows.map((r) => JSON.parse(r.doc) as Policy), total };
  }

  async listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    return this.versions.all(orgId, policyId).map((r) => JSON.parse(r.doc) as PolicyVersion);
  }
}

function requireOrg(p: Policy): string {
  if (!p.org_id) throw new Error('presets are not stored');
  return p.org_id;
}
