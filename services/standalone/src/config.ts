import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  cassandraEnv,
  cassandraSettings,
  envHostList,
  envInt,
  encoderSettings,
  judgeSettings,
  parseEnv,
  scoringEnv,
  type CassandraSettings,
  type EncoderSettings,
  type JudgeSettings,
} from '@guard/platform';
import { API_ENV, apiSettings, type ApiSettings } from '@guard/api/settings';

/**
 * Every setting of the standalone server: the API's own (API_ENV in @guard/api) and the embedded
 * server's. This is the only file of the server that reads process.env; each variable is
 * documented in the README ("Settings").
 */
const Env = z.object({
  ...API_ENV,
  ...scoringEnv(),
  ...cassandraEnv('127.0.0.1:9042'),
  MODE: z.enum(['embedded', 'distributed']).default('embedded'),
  PORT: envInt(8080, 0, 65535),
  // Loopback unless asked: a laptop's admin API and freshly printed key stay off the network.
  HOST: z.string().min(1).default('127.0.0.1'),
  GUARD_DATA_DIR: z.string().default('./data'),
  // An empty value counts as unset (handy in env files and test harnesses).
  GUARD_WORKERS: z
    .string()
    .default('auto')
    .transform((v, ctx) => {
      if (v === 'auto') return Math.max(1, os.availableParallelism());
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 64) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "auto" or a whole number from 1 to 64, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    }),
  GUARD_ACTIVITY_PIPELINE: z.enum(['sqlite', 'kafka']).default('sqlite'),
  KAFKA_BROKERS: envHostList('127.0.0.1:9092'),
  KAFKA_ACTIVITY_TOPIC: z.string().min(1).default('guard.activity.v1'),
  // Cassandra's longest TTL is 20 years.
  GUARD_ACTIVITY_RETENTION_DAYS: envInt(30, 0, 7300),
});

/** Every variable this role reads: test/deploy checks the deployment files against it. */
export const ENV_SCHEMA = Env;

export interface StandaloneConfig extends ApiSettings {
  mode: 'embedded' | 'distributed';
  port: number;
  host: string;
  dataDir: string;
  dbFile: string;
  workers: number;
  /** A scoring call still running after this answers `error: true` under the fail mode. */
  scoreTimeoutMs: number;
  /** Worker threads that score, per process; 0 scores on the request thread (no deadline enforcement). */
  scoreThreads: number;
  /** Requests up to this many characters score on the request thread (faster than a thread hop); 0 sends all to the threads. */
  scoreInlineChars: number;
  judge: JudgeSettings | null;
  /** The jailbreak encoder stage: default mode, threads and cache (GUARD_ENCODER, GUARD_ENCODER_THREADS, GUARD_ENCODER_CACHE). */
  encoder: EncoderSettings;
  /** Days activity is kept; 0 keeps it forever. */
  activityRetentionDays: number;
  /**
   * Where activity goes: `sqlite` (the embedded store) or `kafka` (published to Kafka for the
   * activity ingester, exported from the Cassandra tables it writes).
   */
  activityPipeline:
    | { kind: 'sqlite' }
    | { kind: 'kafka'; brokers: string[]; topic: string; cassandra: CassandraSettings };
}

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): StandaloneConfig {
  const e = parseEnv(Env, env);
  const dataDir = path.resolve(e.GUARD_DATA_DIR);
  return {
    ...apiSettings(e, env),
    mode: e.MODE,
    port: e.PORT,
    host: e.HOST,
    dataDir,
    dbFile: path.join(dataDir, 'guard.db'),
    workers: e.GUARD_WORKERS,
    scoreTimeoutMs: e.GUARD_SCORE_TIMEOUT_MS,
    scoreInlineChars: e.GUARD_SCORE_INLINE_CHARS,
    // auto: the cores left to each worker process, at least one thread each.
    scoreThreads:
      e.GUARD_SCORE_THREADS === 'auto'
        ? Math.max(1, Math.floor(os.availableParallelism() / e.GUARD_WORKERS))
        : e.GUARD_SCORE_THREADS,
    judge: judgeSettings(e),
    encoder: encoderSettings(e),
    activityRetentionDays: e.GUARD_ACTIVITY_RETENTION_DAYS,
    activityPipeline:
      e.GUARD_ACTIVITY_PIPELINE === 'sqlite'
        ? { kind: 'sqlite' }
        : {
            kind: 'kafka',
            brokers: e.KAFKA_BROKERS,
            topic: e.KAFKA_ACTIVITY_TOPIC,
            cassandra: cassandraSettings(e),
          },
  };
}
