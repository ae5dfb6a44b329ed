import { newId, type Logger } from '@guard/platform';
import { BatchingActivitySink, openSqlite, SqliteActivityStore, SqliteApiKeyStore, SqliteOrgStore, SqlitePolicyStore, type SqliteDb } from '@guard/adapters';
import type { ScoreEngine } from '@guard/scoring';
import type { ApiDeps } from '@guard/api';
import type { StandaloneConfig } from './config.js';

export const VERSION = '0.1.0';

/** The embedded composition root: every port gets its SQLite adapter over one database file. */
export interface EmbeddedDeps {
  db: SqliteDb;
  api: ApiDeps;
}

function buildEngine(_config: StandaloneConfig): ScoreEngine {
  // Interim: the scoring core lands in @guard/scoring; until then scoring reports an error
  // (error: true, fail mode applies) rather than pretending to pass.
  return {
    score: async () => {
      throw new Error('the scoring engine is not built into this version yet');
    },
  };
}

export function buildEmbeddedDeps(config: StandaloneConfig, logger: Logger): EmbeddedDeps {
  const db = openSqlite(config.dbFile);
  const ping = db.prepare('SELECT 1');
  const activities = new SqliteActivityStore(db);
  const api: ApiDeps = {
    config: {
      bodyLimitBytes: config.bodyLimitBytes,
      version: VERSION,
      accessLog: config.accessLog,
      authCacheTtlMs: config.authCacheTtlMs,
      maxMessages: config.maxMessages,
      maxTextChars: config.maxTextChars,
      failMode: config.failMode,
      excerptChars: config.excerptChars,
    },
    logger,
    orgs: new SqliteOrgStore(db),
    keys: new SqliteApiKeyStore(db),
    policies: new SqlitePolicyStore(db),
    activities,
    activitySink: new BatchingActivitySink(activities),
    engine: buildEngine(config),
    newId: () => newId(),
    now: () => new Date(),
    ready: async () => ping.get() !== undefined,
  };
  return { db, api };
}
