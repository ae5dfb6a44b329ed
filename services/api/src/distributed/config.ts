import { z } from 'zod';
import {
  cassandraEnv,
  cassandraSettings,
  envHostList,
  envInt,
  parseEnv,
  type CassandraSettings,
} from '@guard/platform';
import { DEFAULT_SCORE_REQUEST_STREAM } from '@guard/contracts/score-envelope';
import { DEFAULT_JOBS_TASK_QUEUE } from '@guard/adapters/temporal/temporal-job-runner';
import { API_ENV, apiSettings, type ApiSettings } from '../settings.js';

/**
 * Every setting of the distributed `api` role (ROLE=api): the API's own (API_ENV, as the
 * standalone server has them) and where the engines are. The only file of the role that reads
 * the environment; each variable is documented in docs/distributed.md.
 */
const Env = z.object({
  ...API_ENV,
  ...cassandraEnv(),
  PORT: envInt(8080, 0, 65535),
  // A pod serves on its own address; the Service and the ingress decide who can reach it.
  HOST: z.string().min(1).default('0.0.0.0'),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'expected redis://host:port or rediss://…' }),
  KAFKA_BROKERS: envHostList(),
  KAFKA_ACTIVITY_TOPIC: z.string().min(1).default('guard.activity.v1'),
  GUARD_SCORE_TIMEOUT_MS: envInt(10_000, 50, 600_000),
  GUARD_SCORER_MAX_QUEUE: envInt(1000, 1, 1_000_000),
  GUARD_SCORE_REQUEST_STREAM: z.string().min(1).default(DEFAULT_SCORE_REQUEST_STREAM),
  GUARD_ACTIVITY_RETENTION_DAYS: envInt(30, 0, 7300),
  // Unset: export jobs and bulk imports run in the API pods themselves (see docs/distributed.md).
  TEMPORAL_ADDRESS: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  GUARD_JOBS_TASK_QUEUE: z.string().min(1).default(DEFAULT_JOBS_TASK_QUEUE),
  // How long a stop waits for requests in flight before it closes their connections.
  GUARD_SHUTDOWN_GRACE_MS: envInt(10_000, 0, 600_000),
});

/** Every variable this role reads: test/deploy checks the deployment files against it. */
export const ENV_SCHEMA = Env;

export interface DistributedApiConfig extends ApiSettings {
  port: number;
  host: string;
  redisUrl: string;
  kafka: { brokers: string[]; topic: string };
  cassandra: CassandraSettings;
  /** How long a monitor call waits for a scorer pod's answer before the fail mode applies. */
  scoreTimeoutMs: number;
  /** Requests queued for the scorers from which new ones answer 503 SCORER_UNAVAILABLE. */
  scorerMaxQueue: number;
  /** The Redis stream scorer pods read (the same GUARD_SCORE_REQUEST_STREAM as theirs). */
  scoreRequestStream: string;
  activityRetentionDays: number;
  shutdownGraceMs: number;
  /** Where export jobs and bulk imports run: Temporal workflows on the jobs workers, or null (these pods). */
  temporal: { address: string; namespace: string; taskQueue: string } | null;
}

export function loadDistributedApiConfig(
  env: Record<string, string | undefined>,
): DistributedApiConfig {
  const e = parseEnv(Env, env);
  return {
    ...apiSettings(e, env),
    port: e.PORT,
    host: e.HOST,
    redisUrl: e.REDIS_URL,
    kafka: { brokers: e.KAFKA_BROKERS, topic: e.KAFKA_ACTIVITY_TOPIC },
    cassandra: cassandraSettings(e),
    scoreTimeoutMs: e.GUARD_SCORE_TIMEOUT_MS,
    scorerMaxQueue: e.GUARD_SCORER_MAX_QUEUE,
    scoreRequestStream: e.GUARD_SCORE_REQUEST_STREAM,
    activityRetentionDays: e.GUARD_ACTIVITY_RETENTION_DAYS,
    shutdownGraceMs: e.GUARD_SHUTDOWN_GRACE_MS,
    temporal: e.TEMPORAL_ADDRESS
      ? {
          address: e.TEMPORAL_ADDRESS,
          namespace: e.TEMPORAL_NAMESPACE,
          taskQueue: e.GUARD_JOBS_TASK_QUEUE,
        }
      : null,
  };
}
