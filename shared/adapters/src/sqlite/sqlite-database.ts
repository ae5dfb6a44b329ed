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
  // One counter that every change to orgs, keys and policies bumps, whoever makes it (another
  // worker, the CLI): caches compare it to drop what they hold (sqliteConfigChanges).
  `
  CREATE TABLE config_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
  );
  INSERT INTO config_version (id, version) VALUES (1, 0);
  CREATE TRIGGER orgs_insert_bumps_config AFTER INSERT ON orgs
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER orgs_update_bumps_config AFTER UPDATE ON orgs
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER orgs_delete_bumps_config AFTER DELETE ON orgs
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER api_keys_insert_bumps_config AFTER INSERT ON api_keys
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER api_keys_update_bumps_config AFTER UPDATE ON api_keys
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER api_keys_delete_bumps_config AFTER DELETE ON api_keys
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER policies_insert_bumps_config AFTER INSERT ON policies
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER policies_update_bumps_config AFTER UPDATE ON policies
    BEGIN UPDATE config_version SET version = version + 1; END;
  CREATE TRIGGER policies_delete_bumps_config AFTER DELETE ON policies
    BEGIN UPDATE config_version SET version = version + 1; END;
  `,
  // Jobs (activity export, bulk import): the record as JSON; status and lease as columns, so that
  // worker processes claim a job with one conditional write and a restart finds unfinished ones.
  `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER,
    doc TEXT NOT NULL
  );
  CREATE INDEX jobs_unfinished ON jobs(status, created_at);
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

/**
 * Changes to orgs, keys and policies made through other connections to the same file (other
 * server workers, the `guard` CLI), for the caches of the request path. `PRAGMA data_version`
 * moves only when another connection committed something (an activity write, say), and only then
 * is the counter the triggers keep read. Each read of the file costs a couple of microseconds, so
 * the answer is kept until the event loop's next turn: requests whose bytes arrived in this turn
 * share one check, and a request sent after a change landed elsewhere always arrives in a later
 * turn, after a fresh check.
 */
export function sqliteConfigChanges(db: SqliteDb): { version(): number } {
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const configVersion = db.prepare('SELECT version FROM config_version WHERE id = 1').pluck();
  let lastData: unknown;
  let version = 0;
  let checked = false;
  const expire = () => {
    checked = false;
  };
  return {
    version() {
      if (checked) return version;
      checked = true;
      setImmediate(expire);
      const data = dataVersion.get();
      if (data !== lastData) {
        lastData = data;
        version = configVersion.get() as number;
      }
      return version;
    },
  };
}
