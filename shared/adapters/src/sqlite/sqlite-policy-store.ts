import type {
  Policy,
  PolicyListRequest,
  PolicyPage,
  PolicyStore,
  PolicyVersion,
  PolicyWriteResult,
  StoredPolicy,
} from '@guard/domain';
import { decodePolicyCursor, encodePolicyCursor } from '../policy-list-cursor.js';
import type { SqliteDb } from './sqlite-database.js';

interface PolicyRow {
  doc: string;
  deleted: number;
  revision: number;
}

interface ListRow {
  doc: string;
  updated_at: string;
  id: string;
}

const conflict: PolicyWriteResult = { ok: false, reason: 'conflict' };

export class SqlitePolicyStore implements PolicyStore {
  private readonly insertPolicy;
  private readonly updatePolicy;
  private readonly deletePolicy;
  private readonly insertVersion;
  private readonly getLive;
  private readonly getAny;
  private readonly countLive;
  private readonly firstPage;
  private readonly nextPage;
  private readonly versions;
  private readonly db: SqliteDb;

  constructor(db: SqliteDb) {
    this.db = db;
    this.insertPolicy = db.prepare(
      'INSERT INTO policies (id, org_id, doc, updated_at, deleted, revision) VALUES (?, ?, ?, ?, 0, 0)',
    );
    // Compare-and-set: the row changes only if it is still live at the revision the caller read.
    this.updatePolicy = db.prepare(
      `UPDATE policies SET doc = ?, updated_at = ?, revision = revision + 1
       WHERE id = ? AND org_id = ? AND deleted = 0 AND revision = ?`,
    );
    this.deletePolicy = db.prepare(
      `UPDATE policies SET deleted = 1, revision = revision + 1
       WHERE id = ? AND org_id = ? AND deleted = 0 AND revision = ?`,
    );
    this.insertVersion = db.prepare(
      'INSERT INTO policy_versions (id, policy_id, org_id, doc) VALUES (?, ?, ?, ?)',
    );
    this.getLive = db.prepare<[string, string], PolicyRow>(
      'SELECT doc, deleted, revision FROM policies WHERE id = ? AND org_id = ? AND deleted = 0',
    );
    this.getAny = db.prepare<[string, string], PolicyRow>(
      'SELECT doc, deleted, revision FROM policies WHERE id = ? AND org_id = ?',
    );
    this.countLive = db.prepare<[string], { n: number }>(
      'SELECT COUNT(*) AS n FROM policies WHERE org_id = ? AND deleted = 0',
    );
    // Both walk the policies_org_live index from the cursor's position; no OFFSET.
    this.firstPage = db.prepare<[string, number], ListRow>(
      `SELECT doc, updated_at, id FROM policies WHERE org_id = ? AND deleted = 0
       ORDER BY updated_at DESC, id DESC LIMIT ?`,
    );
    this.nextPage = db.prepare<[string, string, string, number], ListRow>(
      `SELECT doc, updated_at, id FROM policies WHERE org_id = ? AND deleted = 0
       AND (updated_at, id) < (?, ?) ORDER BY updated_at DESC, id DESC LIMIT ?`,
    );
    this.versions = db.prepare<[string, string], { doc: string }>(
      'SELECT doc FROM policy_versions WHERE org_id = ? AND policy_id = ? ORDER BY seq DESC',
    );
  }

  async insert(policy: Policy, version: PolicyVersion): Promise<void> {
    this.db.transaction(() => {
      this.insertPolicy.run(
        policy.id,
        requireOrg(policy),
        JSON.stringify(policy),
        policy.updated_at,
      );
      this.appendVersion(version);
    })();
  }

  async replace(
    policy: Policy,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    return this.db.transaction((): PolicyWriteResult => {
      const r = this.updatePolicy.run(
        JSON.stringify(policy),
        policy.updated_at,
        policy.id,
        requireOrg(policy),
        expectedRevision,
      );
      if (r.changes === 0) return conflict;
      this.appendVersion(version);
      return { ok: true, revision: expectedRevision + 1 };
    })();
  }

  async markDeleted(
    orgId: string,
    policyId: string,
    version: PolicyVersion,
    expectedRevision: number,
  ): Promise<PolicyWriteResult> {
    return this.db.transaction((): PolicyWriteResult => {
      const r = this.deletePolicy.run(policyId, orgId, expectedRevision);
      if (r.changes === 0) return conflict;
      this.appendVersion(version);
      return { ok: true, revision: expectedRevision + 1 };
    })();
  }

  async get(orgId: string, policyId: string): Promise<Policy | null> {
    const row = this.getLive.get(policyId, orgId);
    return row ? (JSON.parse(row.doc) as Policy) : null;
  }

  async getLastState(orgId: string, policyId: string): Promise<StoredPolicy | null> {
    const row = this.getAny.get(policyId, orgId);
    return row
      ? {
          policy: JSON.parse(row.doc) as Policy,
          deleted: row.deleted === 1,
          revision: row.revision,
        }
      : null;
  }

  async list(orgId: string, request: PolicyListRequest): Promise<PolicyPage> {
    // One row more than asked for says whether a next page exists.
    const rows = request.cursor
      ? this.nextPage.all(orgId, ...decodePolicyCursor(request.cursor), request.limit + 1)
      : this.firstPage.all(orgId, request.limit + 1);
    const page = rows.slice(0, request.limit);
    const last = page[page.length - 1];
    return {
      items: page.map((r) => JSON.parse(r.doc) as Policy),
      nextCursor:
        rows.length > page.length && last ? encodePolicyCursor([last.updated_at, last.id]) : null,
    };
  }

  async count(orgId: string): Promise<number> {
    return this.countLive.get(orgId)?.n ?? 0;
  }

  async listVersions(orgId: string, policyId: string): Promise<PolicyVersion[]> {
    return this.versions.all(orgId, policyId).map((r) => JSON.parse(r.doc) as PolicyVersion);
  }

  private appendVersion(v: PolicyVersion): void {
    this.insertVersion.run(v.id, v.policy_id, v.org_id, JSON.stringify(v));
  }
}

function requireOrg(p: Policy): string {
  if (!p.org_id) throw new Error('presets are not stored');
  return p.org_id;
}
