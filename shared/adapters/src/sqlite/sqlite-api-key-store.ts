import type { ApiKeyRecord, ApiKeyStore, Role } from '@guard/domain';
import type { SqliteDb } from './sqlite-database.js';

interface KeyRow extends Omit<ApiKeyRecord, 'staff' | 'role'> {
  staff: number;
  role: string;
}

const toKey = (r: KeyRow): ApiKeyRecord => ({ ...r, role: r.role as Role, staff: r.staff === 1 });

export class SqliteApiKeyStore implements ApiKeyStore {
  private readonly insertStmt;
  private readonly byHashStmt;
  private readonly byIdStmt;
  private readonly byOrgStmt;
  private readonly revokeStmt;
  private readonly anyStmt;

  constructor(db: SqliteDb) {
    this.insertStmt = db.prepare(
      `INSERT INTO api_keys (id, org_id, user_id, role, staff, name, key_hash, prefix, created_at, revoked_at)
       VALUES (@id, @org_id, @user_id, @role, @staff, @name, @key_hash, @prefix, @created_at, @revoked_at)`,
    );
    this.byHashStmt = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE key_hash = ?');
    this.byIdStmt = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
    this.byOrgStmt = db.prepare<[string], KeyRow>(
      'SELECT * FROM api_keys WHERE org_id = ? ORDER BY id',
    );
    this.revokeStmt = db.prepare(
      'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?',
    );
    this.anyStmt = db.prepare<[], { one: number }>('SELECT 1 AS one FROM api_keys LIMIT 1');
  }

  async create(key: ApiKeyRecord): Promise<void> {
    this.insertStmt.run({ ...key, staff: key.staff ? 1 : 0 });
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const row = this.byHashStmt.get(keyHash);
    return row ? toKey(row) : null;
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const row = this.byIdStmt.get(id);
    return row ? toKey(row) : null;
  }

  async listByOrg(orgId: string): Promise<ApiKeyRecord[]> {
    return this.byOrgStmt.all(orgId).map(toKey);
  }

  async revoke(id: string, at: string): Promise<boolean> {
    return this.revokeStmt.run(at, id).changes > 0;
  }

  async hasAnyKey(): Promise<boolean> {
    return this.anyStmt.get() !== undefined;
  }
}
