import { newId, type Logger } from '@guard/platform';
import { openSqlite, SqliteApiKeyStore, SqliteOrgStore, SqlitePolicyStore, type SqliteDb } from '@guard/adapters';
import type { ApiDeps } from '@guard/api';
import type { StandaloneConfig } from './config.js';

export const VERSION = '0.1.0';

/** The embedded composition root: every port gets its SQLite adapter over one database file. */
export interface EmbeddedDeps {
  db: SqliteDb;
  api: ApiDeps;
}

export function buildEmbeddedDeps(config: StandaloneConfig, logger: Logger): EmbeddedDeps {
  const db = openSqlite(config.dbFile);
  const ping = db.prepare('SELECT 1');
  const api: ApiDeps = {
    config: { bodyLimitBytes: config.bodyLimitBytes, version: VERSION, accessLog: config.accessLog },
    logger,
    orgs: new SqliteOrgStore(db),
    keys: new SqliteApiKeyStore(db),
    policies: new SqlitePolicyStore(db),
    newId: () => newId(),
    now: () => new Date(),
    ready: async () => ping.get() !== undefined,
  };
  return { db, api };
}
