import { Kafka } from 'kafkajs';
import { CassandraActivityStore } from '@guard/adapters/cassandra/cassandra-activity-store';
import { connectCassandra } from '@guard/adapters/cassandra/connect';
import { kafkaLogCreator } from '@guard/adapters/kafka/kafka-log';
import type { Lifecycle, Logger } from '@guard/platform';
import { processMetrics, type GuardMetrics } from '@guard/platform/metrics';
import { ActivityIngester } from './activity-ingester.js';
import type { IngesterConfig } from './config.js';
import { ConsumerLag } from './consumer-lag.js';
import { startHealthServer, type RunningHealthServer } from './health-server.js';

export interface RunningIngester {
  ingester: ActivityIngester;
  health: RunningHealthServer;
}

/**
 * The composition root of the ingester role: Cassandra (migrated) behind the ActivityStore port,
 * the Kafka consumer, and the probe server. Every piece is registered with `lifecycle`, so a
 * stop closes them in reverse: the consumer finishes its batches and commits, then the probe
 * server and the Cassandra session close.
 */
export async function startIngesterProcess(
  config: IngesterConfig,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<RunningIngester> {
  const cassandra = await connectCassandra(config.cassandra, logger, lifecycle);
  const store = new CassandraActivityStore(cassandra, {
    keyspace: config.cassandra.keyspace,
    ttlSeconds: config.retentionSeconds,
  });

  const kafka = new Kafka({
    clientId: config.kafka.clientId,
    brokers: config.kafka.brokers,
    logCreator: kafkaLogCreator(logger),
  });
  const ingester = new ActivityIngester({
    kafka,
    store,
    logger,
    topic: config.kafka.topic,
    dlqTopic: config.kafka.dlqTopic,
    groupId: config.kafka.groupId,
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    chunkSize: config.chunkSize,
    partitionsConsumedConcurrently: config.partitionsConcurrency,
  });

  const metrics = config.metrics ? processMetrics() : null;
  if (metrics) {
    const lag = new ConsumerLag(kafka, ingester.topic, ingester.groupId);
    lifecycle.onClose('consumer lag', () => lag.close());
    meterIngester(metrics, ingester, lag);
  }
  const health = await startHealthServer(ingester, config.port, config.host, metrics);
  lifecycle.onClose('health server', health.close);
  logger.info({ url: health.url }, 'probes listening');

  if (config.kafka.createTopics) await ingester.ensureTopics(config.kafka.partitions);
  lifecycle.onClose('ingester', () => ingester.stop());
  await ingester.start();
  logger.info(
    { topic: ingester.topic, dlqTopic: ingester.dlqTopic, groupId: ingester.groupId },
    'consuming activity',
  );
  return { ingester, health };
}

/** The ingester's own counters and the group's lag, read when Prometheus scrapes. */
function meterIngester(metrics: GuardMetrics, ingester: ActivityIngester, lag: ConsumerLag): void {
  metrics.countersOf(ingester.stats, {
    written: ['guard_ingester_written_total', 'Activities written to the store.'],
    batches: ['guard_ingester_batches_total', 'Kafka batches processed.'],
    retries: [
      'guard_ingester_retries_total',
      'Store writes, dead-letter sends and commits retried.',
    ],
    poisoned: [
      'guard_ingester_poisoned_total',
      'Unreadable messages sent to the dead-letter topic.',
    ],
  });
  metrics.gaugeFrom(
    'guard_ingester_consumer_lag',
    'Messages of the activity topic the consumer group has not committed yet (all partitions).',
    () => lag.read(),
  );
}
