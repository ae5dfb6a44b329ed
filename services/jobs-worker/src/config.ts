import { z } from 'zod';
import {
  cassandraEnv,
  cassandraSettings,
  envBool,
  envInt,
  envLogLevel,
  parseEnv,
  type CassandraSettings,
} from '@guard/platform';
import { DEFAULT_JOBS_TASK_QUEUE } from '@guard/adapters/temporal/temporal-job-runner';

/**
 * Every setting of the jobs-worker role; the only file that reads the environment. Each variable
 * is described in the service's README.
 */
const WorkerEnv = z.object({
  PORT: envInt(8092, 0, 65535),
  // Probes come from the kubelet, over the pod's address; the endpoints answer no data.
  HOST: z.string().min(1).default('0.0.0.0'),
  GUARD_LOG_LEVEL: envLogLevel(),
  TEMPORAL_ADDRESS: z.string().min(1, 'expected host:port of the Temporal frontend'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  GUARD_JOBS_TASK_QUEUE: z.string().min(1).default(DEFAULT_JOBS_TASK_QUEUE),
  GUARD_JOBS_MAX_ACTIVITIES: envInt(8, 1, 1_000),
  // How long a stop lets running activities finish before cancelling them (they are retried).
  GUARD_JOBS_SHUTDOWN_GRACE_MS: envInt(10_000, 0, 600_000),
  GUARD_METRICS: envBool(true),
  // Unset: dist/job-workflows.bundle.js when the build wrote it (the image does), else bundled at start.
  GUARD_WORKFLOW_BUNDLE: z.string().min(1).optional(),
});

const Env = WorkerEnv.extend({
  ...cassandraEnv(),
  // Activity rows are only read here; the store is built with the same retention as the writers.
  GUARD_ACTIVITY_RETENTION_DAYS: envInt(30, 0, 7300),
});

/** Every variable this role reads: test/deploy checks the deployment files against it. */
export const ENV_SCHEMA = Env;

/** What the worker itself needs, whatever stores it runs over. */
export interface JobsWorkerSettings {
  port: number;
  host: string;
  logLevel: string;
  temporal: { address: string; namespace: string; taskQueue: string };
  /** Activities (import chunks, export pages) one process runs at once. */
  maxActivities: number;
  shutdownGraceMs: number;
  /** Serve Prometheus metrics (the Node process metrics) at `/metrics` on the probe port. */
  metrics: boolean;
  /** A bundle written by `npm run build:workflow-bundle` to load instead of the default place. */
  workflowBundlePath: string | undefined;
}

export interface JobsWorkerConfig extends JobsWorkerSettings {
  cassandra: CassandraSettings;
  activityRetentionDays: number;
}

function settings(e: z.infer<typeof WorkerEnv>): JobsWorkerSettings {
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.GUARD_LOG_LEVEL,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.GUARD_JOBS_TASK_QUEUE,
    },
    maxActivities: e.GUARD_JOBS_MAX_ACTIVITIES,
    shutdownGraceMs: e.GUARD_JOBS_SHUTDOWN_GRACE_MS,
    metrics: e.GUARD_METRICS,
    workflowBundlePath: e.GUARD_WORKFLOW_BUNDLE,
  };
}

/** The worker's settings alone, for a composition root that brings its own stores. */
export function loadWorkerSettings(env: Record<string, string | undefined>): JobsWorkerSettings {
  return settings(parseEnv(WorkerEnv, env));
}

export function loadConfig(env: Record<string, string | undefined>): JobsWorkerConfig {
  const e = parseEnv(Env, env);
  return {
    ...settings(e),
    cassandra: cassandraSettings(e),
    activityRetentionDays: e.GUARD_ACTIVITY_RETENTION_DAYS,
  };
}
