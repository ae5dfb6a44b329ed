import { newId, type Logger } from '@guard/platform';
import { processMetrics } from '@guard/platform/metrics';
import {
  BatchingActivitySink,
  createHttpUpstream,
  InProcessJobRunner,
  openSqlite,
  SqliteActivityStore,
  SqliteApiKeyStore,
  SqliteJobStore,
  SqliteOrgStore,
  SqlitePolicyStore,
  sqliteConfigChanges,
  type SqliteDb,
} from '@guard/adapters';
import {
  createServingEngine,
  meterCaches,
  type ServingEngine,
} from '@guard/scoring/pool/serving-engine';
import type { ApiDeps } from '@guard/api';
import { apiConfigOf } from '@guard/api/settings';
import { Client as CassandraClient } from 'cassandra-driver';
import { KafkaActivitySink } from '@guard/adapters/kafka/kafka-activity-sink';
import { CassandraActivityStore } from '@guard/adapters/cassandra/cassandra-activity-store';
import {
  cachingApiKeyStore,
  CachingOrgStore,
  cachingPolicyStore,
  createJobActivities,
  type ActivitySink,
  type ActivityStore,
} from '@guard/domain';
import type { StandaloneConfig } from './config.js';

export const VERSION = '0.1.0';

/** The embedded composition root: every port gets its SQLite adapter over one database file. */
export interface EmbeddedDeps {
  db: SqliteDb;
  api: ApiDeps;
  /** Export jobs and bulk imports, run in this process over the job table. */
  jobs: InProcessJobRunner;
  /** Stops the scoring threads. */
  closeEngine: () => Promise<void>;
}

/**
 * The scoring core in this process: learned detectors from the committed weights, plus the judge
 * when configured. By default on worker threads (GUARD_SCORE_THREADS), where the deadline
 * (GUARD_SCORE_TIMEOUT_MS) really stops a call; with 0 threads, on the request thread.
 */
export function buildEngine(config: StandaloneConfig): ServingEngine {
  return createServingEngine({
    threads: config.scoreThreads,
    timeoutMs: config.scoreTimeoutMs,
    inlineChars: config.scoreInlineChars,
    judge: config.judge,
    encoder: config.encoder,
  });
}

/** The SQLite adapters over one database file, uncached: what the CLI and the bootstrap use. */
export interface EmbeddedStores {
  db: SqliteDb;
  orgs: SqliteOrgStore;
  keys: SqliteApiKeyStore;
  policies: SqlitePolicyStore;
  activities: SqliteActivityStore;
}

export function openEmbeddedStores(dbFile: string): EmbeddedStores {
  const db = openSqlite(dbFile);
  return {
    db,
    orgs: new SqliteOrgStore(db),
    keys: new SqliteApiKeyStore(db),
    policies: new SqlitePolicyStore(db),
    activities: new SqliteActivityStore(db),
  };
}

interface ActivityPipeline {
  sink: ActivitySink;
  store: ActivityStore;
  close: () => Promise<void>;
}

/**
 * Where decisions are recorded and exported from: the embedded SQLite store (batched writes), or
 * Kafka for the activity ingester, with export read from the Cassandra tables the ingester writes.
 */
function buildActivityPipeline(
  config: StandaloneConfig,
  sqlite: SqliteActivityStore,
  logger: Logger,
): ActivityPipeline {
  const p = config.activityPipeline;
  if (p.kind === 'sqlite')
    return {
      store: sqlite,
      sink: new BatchingActivitySink(sqlite, 1000, (err, activityId) => {
        logger.error({ err, activity_id: activityId }, 'activity record could not be stored');
      }),
      close: async () => undefined,
    };
  const sink = new KafkaActivitySink({
    brokers: p.brokers,
    clientId: `guard-api-${process.pid}`,
    topic: p.topic,
    logger,
  });
  const cassandra = new CassandraClient({
    contactPoints: p.cassandra.contactPoints,
    localDataCenter: p.cassandra.localDataCenter,
  });
  return {
    sink,
    store: new CassandraActivityStore(cassandra, {
      keyspace: p.cassandra.keyspace,
      ttlSeconds: config.activityRetentionDays * 86_400,
    }),
    close: async () => {
      await sink.close();
      await cassandra.shutdown();
    },
  };
}

/** The domain's id and clock, for every verb of this process. */
export const embeddedIds = { newId: (atMs?: number) => newId(atMs), now: () => new Date() };

export function buildEmbeddedDeps(config: StandaloneConfig, logger: Logger): EmbeddedDeps {
  const { db, orgs, keys, policies, activities } = openEmbeddedStores(config.dbFile);
  const ping = db.prepare('SELECT 1');
  const cached = { changes: sqliteConfigChanges(db) };
  const scoring = buildEngine(config);
  const pipeline = buildActivityPipeline(config, activities, logger);
  const upstream = createHttpUpstream({
    headersTimeoutMs: config.upstreamTimeoutMs,
    bodyTimeoutMs: config.upstreamIdleTimeoutMs,
  });
  const policyStore =
    config.authCacheTtlMs > 0
      ? cachingPolicyStore(policies, config.authCacheTtlMs, cached)
      : policies;
  const jobStore = new SqliteJobStore(db);
  const jobs = new InProcessJobRunner({
    store: jobStore,
    activities: createJobActivities({
      jobs: jobStore,
      activities: pipeline.store,
      policies: policyStore,
      now: embeddedIds.now,
    }),
    logger: logger.child({ component: 'jobs' }),
  });
  const api: ApiDeps = {
    config: apiConfigOf(config, VERSION),
    logger,
    // Caching is decided here, once: key, org and policy reads on every request are served from
    // memory for up to GUARD_AUTH_CACHE_TTL_MS; writes through these stores apply at once, and
    // writes through any other connection to the database (other workers, the CLI) as soon as
    // the next lookup sees the change counter move.
    orgs:
      config.authCacheTtlMs > 0 ? new CachingOrgStore(orgs, config.authCacheTtlMs, cached) : orgs,
    keys:
      config.authCacheTtlMs > 0 ? cachingApiKeyStore(keys, config.authCacheTtlMs, cached) : keys,
    policies: policyStore,
    activities: pipeline.store,
    jobs,
    activitySink: pipeline.sink,
    engine: scoring.engine,
    upstream,
    upstreamRouting: config.upstream,
    ...embeddedIds,
    ready: async () => ping.get() !== undefined,
    metrics: config.metrics ? processMetrics() : null,
  };
  if (api.metrics) meterCaches(api.metrics, scoring.cacheStats);
  return {
    db,
    api,
    jobs,
    closeEngine: async () => {
      await scoring.close();
      await upstream.close();
      await pipeline.close();
    },
  };
}
