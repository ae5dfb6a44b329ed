import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDb = Database.Database;

/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Append only:
 * a shipped migration is never edited. Exported so that tests can build a database as an earlier
 * release left it.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE orgs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    default_policy_id TEXT,
    created_at TEXT NOT NULL
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    staff INTEGER NOT NULL,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE INDEX api_keys_org ON api_keys(org_id);
  CREATE TABLE policies (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    doc TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX policies_org_live ON policies(org_id, deleted, updated_at DESC, id DESC);
  CREATE TABLE policy_versions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    policy_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX policy_versions_policy ON policy_versions(org_id, policy_id, seq);
  `,
  `
  CREATE TABLE activities (
    org_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    alarm INTEGER NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (org_id, id)
  ) WITHOUT ROWID;
  CREATE INDEX activities_alarm ON activities(org_id, alarm, id);
  `,
  // Compare-and-set writes of policies. A policy's revision is the number of versions after its
  // first, so existing rows start where their history stands.
  `
  ALTER TABLE policies ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
  UPDATE policies SET revision = MAX(0, (
    SELECT COUNT(*) - 1 FROM policy_versions v
    WHERE v.org_id = policies.org_id AND v.policy_id = policies.id
  ));
  `,
  // Retention deletes by recording time, in chunks.
  `
  CREATE INDEX activities_created ON activities(created_ms);
  `,
];

/** Open (creating if needed) the embedded database. `:memory:` gives a throwaway one. */
export function openSqlite(file: string): SqliteDb {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

function migrate(db: SqliteDb): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let i = current; i < SQLITE_MIGRATIONS.length; i++) {
    db.transaction(() => {
      db.exec(SQLITE_MIGRATIONS[i]!);
      db.pragma(`user_version = ${i + 1}`);
    })();
  }
}
