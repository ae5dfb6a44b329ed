import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { newId, type Lifecycle, type Logger } from '@guard/platform';
import { processMetrics } from '@guard/platform/metrics';
import {
  announceWrites,
  bootstrapIfEmpty,
  createJobActivities,
  cachingApiKeyStore,
  CachingOrgStore,
  cachingPolicyStore,
  type ConfigStores,
  type JobActivities,
  type JobRunner,
} from '@guard/domain';
import { CassandraActivityStore } from '@guard/adapters/cassandra/cassandra-activity-store';
import { CassandraApiKeyStore } from '@guard/adapters/cassandra/cassandra-api-key-store';
import { CassandraJobStore } from '@guard/adapters/cassandra/cassandra-job-store';
import { CassandraOrgStore } from '@guard/adapters/cassandra/cassandra-org-store';
import { CassandraPolicyStore } from '@guard/adapters/cassandra/cassandra-policy-store';
import { connectCassandra } from '@guard/adapters/cassandra/connect';
import { KafkaActivitySink } from '@guard/adapters/kafka/kafka-activity-sink';
import { RedisConfigChanges } from '@guard/adapters/redis/redis-config-changes';
import { RedisScoreClient } from '@guard/adapters/redis/redis-score-client';
import { createHttpUpstream } from '@guard/adapters/upstream/http-upstream';
import { InProcessJobRunner } from '@guard/adapters/jobs/in-process-job-runner';
import { TemporalJobRunner } from '@guard/adapters/temporal/temporal-job-runner';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../app.js';
import type { ApiDeps } from '../deps.js';
import { apiConfigOf } from '../settings.js';
import type { DistributedApiConfig } from './config.js';

export const VERSION = '0.1.0';

export interface RunningApi {
  url: string;
  port: number;
  server: Server;
}

/**
 * The composition root of the distributed `api` role: a stateless HTTP pod. Orgs, keys and
 * policies live in Cassandra, cached in this pod and dropped on every pod at once when any pod
 * writes (Redis pub/sub); scoring goes to scorer pods over Redis Streams; activity goes to Kafka
 * for the ingester and is exported from the Cassandra tables it writes. Every piece is registered
 * with `lifecycle`, so a stop closes them in reverse order: the HTTP server first (no new
 * requests, in-flight ones finish), then the activity sink flushes, then the clients close.
 */
export async function startDistributedApi(
  config: DistributedApiConfig,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<RunningApi> {
  const cassandra = await connectCassandra(config.cassandra, logger, lifecycle);

  const redis = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  lifecycle.onClose('redis', async () => void (await redis.quit().catch(() => undefined)));
  await redis.connect();
  const subscriber = new Redis(config.redisUrl, { lazyConnect: true });
  lifecycle.onClose('redis subscriber', async () => {
    await subscriber.quit().catch(() => undefined);
  });
  const changes = new RedisConfigChanges(subscriber, redis, logger);
  await changes.start();

  const keyspace = config.cassandra.keyspace;
  const stores: ConfigStores = announceWrites(
    {
      orgs: new CassandraOrgStore(cassandra, { keyspace }),
      keys: new CassandraApiKeyStore(cassandra, { keyspace }),
      policies: new CassandraPolicyStore(cassandra, { keyspace }),
    },
    () => changes.announce(),
  );
  const ids = { newId: (atMs?: number) => newId(atMs), now: () => new Date() };
  await bootstrapOnce(redis, { ...stores, ...ids }, config, logger);

  const scorer = new RedisScoreClient({
    redisUrl: config.redisUrl,
    timeoutMs: config.scoreTimeoutMs,
    maxQueue: config.scorerMaxQueue,
    requestStream: config.scoreRequestStream,
    logger,
  });
  lifecycle.onClose('score client', () => scorer.close());
  await scorer.start();

  const sink = new KafkaActivitySink({
    brokers: config.kafka.brokers,
    clientId: 'guard-api',
    topic: config.kafka.topic,
    logger,
  });
  lifecycle.onClose('activity sink', () => sink.close());
  const upstream = createHttpUpstream({
    headersTimeoutMs: config.upstreamTimeoutMs,
    bodyTimeoutMs: config.upstreamIdleTimeoutMs,
  });
  lifecycle.onClose('upstream', () => upstream.close());

  const cached = { changes };
  const ttl = config.authCacheTtlMs;
  const policies = ttl > 0 ? cachingPolicyStore(stores.policies, ttl, cached) : stores.policies;
  const activities = new CassandraActivityStore(cassandra, {
    keyspace,
    ttlSeconds: config.activityRetentionDays * 86_400,
  });
  const jobStore = new CassandraJobStore(cassandra, { keyspace });
  const jobs = await buildJobRunner(config, lifecycle, logger, jobStore, () =>
    createJobActivities({ jobs: jobStore, activities, policies, now: ids.now }),
  );

  const metrics = config.metrics ? processMetrics() : null;
  // Read from Redis when scraped: the backlog every API pod and scorer shares (scorers delete
  // what they answered, so XLEN is the queue), the signal the scorers scale on.
  metrics?.gaugeFrom(
    'guard_scorer_queue_depth',
    'Score requests queued in the Redis request stream, not yet answered.',
    () => redis.xlen(config.scoreRequestStream),
  );

  const api: ApiDeps = {
    config: apiConfigOf(config, VERSION),
    logger,
    // Cached in this pod for up to GUARD_AUTH_CACHE_TTL_MS, dropped at once when any pod writes.
    orgs: ttl > 0 ? new CachingOrgStore(stores.orgs, ttl, cached) : stores.orgs,
    keys: ttl > 0 ? cachingApiKeyStore(stores.keys, ttl, cached) : stores.keys,
    policies,
    activities,
    activitySink: sink,
    jobs,
    engine: scorer,
    upstream,
    upstreamRouting: config.upstream,
    ...ids,
    ready: async () => scorer.ready() && redis.status === 'ready',
    metrics,
  };

  const app = createApp(api);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, (err?: Error) =>
      err ? reject(err) : resolve(s),
    );
  });
  server.keepAliveTimeout = 65_000;
  lifecycle.onClose(
    'http',
    () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  );
  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info({ port, mode: 'distributed', role: 'api' }, 'guard listening');
  return { url: `http://${host}:${port}`, port, server };
}

const BOOTSTRAP_LOCK = 'guard:bootstrap:lock';

/**
 * First start of a deployment: the default org and a staff key, made by one pod of those starting
 * together (a Redis lock; the others wait until it is done). Only with GUARD_BOOTSTRAP_ADMIN_KEY:
 * a pod has nowhere safe to print a key it made up.
 */
async function bootstrapOnce(
  redis: Redis,
  deps: Parameters<typeof bootstrapIfEmpty>[0],
  config: DistributedApiConfig,
  logger: Logger,
): Promise<void> {
  if (!config.bootstrapAdminKey || (await deps.keys.hasAnyKey())) return;
  const token = newId();
  for (;;) {
    if ((await redis.set(BOOTSTRAP_LOCK, token, 'PX', 30_000, 'NX')) === 'OK') {
      try {
        const boot = await bootstrapIfEmpty(deps, config.bootstrapAdminKey);
        if (boot)
          logger.info(
            { org_id: boot.org.id, key_source: 'GUARD_BOOTSTRAP_ADMIN_KEY' },
            'first start: created the default org and an admin (staff) key',
          );
      } finally {
        if ((await redis.get(BOOTSTRAP_LOCK)) === token) await redis.del(BOOTSTRAP_LOCK);
      }
      return;
    }
    if (await deps.keys.hasAnyKey()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Where export jobs and bulk imports run. With TEMPORAL_ADDRESS: as Temporal workflows on the
 * jobs workers (a job outlives any pod; retries and heartbeats are Temporal's). Without it: in
 * the pod that was asked, recorded in Cassandra, so any pod answers their status and the jobs of
 * a pod that died are taken over once its lease lapses.
 */
async function buildJobRunner(
  config: DistributedApiConfig,
  lifecycle: Lifecycle,
  logger: Logger,
  store: CassandraJobStore,
  activities: () => JobActivities,
): Promise<JobRunner> {
  if (config.temporal) {
    const connection = await Connection.connect({ address: config.temporal.address });
    lifecycle.onClose('temporal', () => connection.close());
    logger.info(
      { temporal: config.temporal.address, task_queue: config.temporal.taskQueue },
      'export jobs and bulk imports run on the Temporal jobs workers',
    );
    return new TemporalJobRunner({
      client: new Client({ connection, namespace: config.temporal.namespace }),
      store,
      taskQueue: config.temporal.taskQueue,
    });
  }
  const runner = new InProcessJobRunner({
    store,
    activities: activities(),
    logger: logger.child({ component: 'jobs' }),
  });
  lifecycle.onClose('jobs', () => runner.close());
  await runner.resume({ takeOver: false });
  logger.info('export jobs and bulk imports run in the API pods (no TEMPORAL_ADDRESS)');
  return runner;
}
