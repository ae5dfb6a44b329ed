import { z } from 'zod';
import {
  cassandraEnv,
  cassandraSettings,
  envBool,
  envHostList,
  envInt,
  envLogLevel,
  parseEnv,
  type CassandraSettings,
} from '@guard/platform';

/**
 * Every setting of the activity ingester; the only file that reads the environment. Each
 * variable is described in the service's README.
 */
const Env = z.object({
  PORT: envInt(8090, 0, 65535),
  // Probes come from the kubelet, over the pod's address; the endpoints answer no data.
  HOST: z.string().min(1).default('0.0.0.0'),
  GUARD_LOG_LEVEL: envLogLevel(),
  KAFKA_BROKERS: envHostList(),
  KAFKA_CLIENT_ID: z.string().min(1).default('guard-activity-ingester'),
  KAFKA_ACTIVITY_TOPIC: z.string().min(1).default('guard.activity.v1'),
  KAFKA_ACTIVITY_DLQ_TOPIC: z.string().min(1).optional(),
  KAFKA_CONSUMER_GROUP: z.string().min(1).default('guard-activity-ingester'),
  KAFKA_SESSION_TIMEOUT_MS: envInt(30_000, 6_000, 300_000),
  KAFKA_CREATE_TOPICS: envBool(true),
  KAFKA_ACTIVITY_PARTITIONS: envInt(6, 1, 10_000),
  INGESTER_PARTITIONS_CONCURRENCY: envInt(4, 1, 1_000),
  INGESTER_CHUNK_SIZE: envInt(1000, 1, 100_000),
  ...cassandraEnv(),
  // 0 keeps activity forever; Cassandra's longest TTL is 20 years.
  GUARD_ACTIVITY_RETENTION_DAYS: envInt(30, 0, 7300),
  GUARD_METRICS: envBool(true),
});

/** Every variable this role reads: test/deploy checks the deployment files against it. */
export const ENV_SCHEMA = Env;

export interface IngesterConfig {
  port: number;
  host: string;
  logLevel: string;
  kafka: {
    brokers: string[];
    clientId: string;
    topic: string;
    dlqTopic: string;
    groupId: string;
    sessionTimeoutMs: number;
    createTopics: boolean;
    partitions: number;
  };
  partitionsConcurrency: number;
  chunkSize: number;
  cassandra: CassandraSettings;
  retentionSeconds: number;
  /** Serve Prometheus metrics at `/metrics` on the probe port. */
  metrics: boolean;
}

export function loadConfig(env: Record<string, string | undefined>): IngesterConfig {
  const e = parseEnv(Env, env);
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.GUARD_LOG_LEVEL,
    kafka: {
      brokers: e.KAFKA_BROKERS,
      clientId: e.KAFKA_CLIENT_ID,
      topic: e.KAFKA_ACTIVITY_TOPIC,
      dlqTopic: e.KAFKA_ACTIVITY_DLQ_TOPIC ?? `${e.KAFKA_ACTIVITY_TOPIC}.dlq`,
      groupId: e.KAFKA_CONSUMER_GROUP,
      sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
      createTopics: e.KAFKA_CREATE_TOPICS,
      partitions: e.KAFKA_ACTIVITY_PARTITIONS,
    },
    partitionsConcurrency: e.INGESTER_PARTITIONS_CONCURRENCY,
    chunkSize: e.INGESTER_CHUNK_SIZE,
    cassandra: cassandraSettings(e),
    retentionSeconds: e.GUARD_ACTIVITY_RETENTION_DAYS * 86_400,
    metrics: e.GUARD_METRICS,
  };
}
