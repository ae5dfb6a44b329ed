import { newId, type Logger } from '@guard/platform';
import { BatchingActivitySink, openSqlite, SqliteActivityStore, SqliteApiKeyStore, SqliteOrgStore, SqlitePolicyStore, type SqliteDb } from '@guard/adapters';
import { createDefaultEngine, type ScoreEngine } from '@guard/scoring';
import type { ApiDeps } from '@guard/api';
import type { StandaloneConfig } from './config.js';

export const VERSION = '0.1.0';

/** The embedded composition root: every port gets its SQLite adapter over one database file. */
export interface EmbeddedDeps {
  db: SqliteDb;
  api: ApiDeps;
}

/** The scoring core in-process: learned detectors from the committed weights, plus the judge when configured. */
export function buildEngine(config: StandaloneConfig): ScoreEngine {
  return createDefaultEngine({
    ...(config.judge
      ? { judge: { baseUrl: config.judge.baseUrl, model: config.judge.model, timeoutMs: config.judge.timeoutMs, ...(config.judge.apiKey ? { apiKey: config.judge.apiKey } : {}) } }
      : {}),
  });
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
    activitySink: new BatchingActivitySink(activities),
    engine: buildEngine(config),
    newId: () => newId(),
    now: () => new Date(),
    ready: async () => ping.get() !== undefined,
  };
  return { db, api };
}
