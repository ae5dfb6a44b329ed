import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDb = Database.Database;

/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Append only:
 * a shipped migration is never edited.
 */
const MIGRATIONS: string[] = [
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
  for (let i = current; i < MIGRATIONS.length; i++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[i]!);
      db.pragma(`user_version = ${i + 1}`);
    })();
  }
}
