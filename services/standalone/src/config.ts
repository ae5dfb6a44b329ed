import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { readFileSync } from 'node:fs';
import { envBool, envBytes, envHostList, envInt, parseEnv } from '@guard/platform';
import { PROVIDER_KINDS, STREAM_MODES, type StreamModeration } from '@guard/domain';
import { DEFAULT_BASE_URLS, type UpstreamRoute, type UpstreamRouting } from '@guard/api';

/**
 * Every setting of the standalone server. This is the only file that reads process.env; each
 * variable is documented in the README ("Settings").
 */
const Env = z.object({
  MODE: z.enum(['embedded', 'distributed']).default('embedded'),
  PORT: envInt(8080, 0, 65535),
  // Loopback unless asked: a laptop's admin API and freshly printed key stay off the network.
  HOST: z.string().min(1).default('127.0.0.1'),
  GUARD_DATA_DIR: z.string().default('./data'),
  GUARD_BODY_LIMIT: envBytes(1024 * 1024),
  GUARD_MAX_JSON_DEPTH: envInt(64, 2, 1000),
  GUARD_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info'),
  GUARD_LOG_CONTENT: envBool(false),
  GUARD_ACCESS_LOG: envBool(true),
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
  GUARD_AUTH_CACHE_TTL_MS: envInt(2000, 0, 3_600_000),
  GUARD_MONITOR_MAX_MESSAGES: envInt(500, 1, 100_000),
  GUARD_MONITOR_MAX_CHARS: envInt(200_000, 1, 50_000_000),
  GUARD_FAIL_MODE: z.enum(['open', 'closed']).default('closed'),
  GUARD_SCORE_TIMEOUT_MS: envInt(10_000, 50, 600_000),
  GUARD_SCORE_INLINE_CHARS: envInt(4000, 0, 1_000_000),
  GUARD_SCORE_THREADS: z
    .string()
    .default('auto')
    .transform((v, ctx) => {
      if (v === 'auto' || v === '') return 'auto' as const;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 64) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "auto", 0 (score on the request thread) or a whole number up to 64, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    }),
  GUARD_ACTIVITY_EXCERPT_CHARS: envInt(200, 0, 100_000),
  GUARD_JUDGE_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  GUARD_JUDGE_MODEL: z.string().optional(),
  GUARD_JUDGE_API_KEY: z.string().optional(),
  GUARD_JUDGE_TIMEOUT_MS: envInt(8000, 100, 600_000),
  GUARD_OPENAI_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  GUARD_OPENAI_API_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  GUARD_ANTHROPIC_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  GUARD_ANTHROPIC_API_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  GUARD_GEMINI_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  GUARD_GEMINI_API_KEY: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  GUARD_UPSTREAM_ROUTES: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  GUARD_UPSTREAM_TIMEOUT_MS: envInt(60_000, 100, 3_600_000),
  GUARD_UPSTREAM_IDLE_TIMEOUT_MS: envInt(120_000, 100, 3_600_000),
  GUARD_STREAM_MODE: z.enum(STREAM_MODES).default('window'),
  GUARD_STREAM_WINDOW_CHARS: envInt(400, 1, 1_000_000),
  GUARD_STREAM_OVERLAP_CHARS: envInt(100, 0, 100_000),
  GUARD_OUTPUT_CONTEXT_CHARS: envInt(1000, 0, 1_000_000),
  GUARD_ACTIVITY_SETTLE_MS: envInt(2000, 0, 3_600_000),
  GUARD_ACTIVITY_PIPELINE: z.enum(['sqlite', 'kafka']).default('sqlite'),
  KAFKA_BROKERS: envHostList('127.0.0.1:9092'),
  KAFKA_ACTIVITY_TOPIC: z.string().min(1).default('guard.activity.v1'),
  CASSANDRA_CONTACT_POINTS: envHostList('127.0.0.1:9042'),
  CASSANDRA_LOCAL_DC: z.string().min(1).default('datacenter1'),
  CASSANDRA_KEYSPACE: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,47}$/, 'a Cassandra keyspace name: lower case letters, digits, _')
    .default('guard'),
  // Cassandra's longest TTL is 20 years.
  GUARD_ACTIVITY_RETENTION_DAYS: envInt(30, 0, 7300),
  GUARD_BOOTSTRAP_ADMIN_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z.string().min(20).max(256).optional(),
  ),
});

export interface StandaloneConfig {
  mode: 'embedded' | 'distributed';
  port: number;
  host: string;
  dataDir: string;
  dbFile: string;
  bodyLimitBytes: number;
  maxJsonDepth: number;
  logLevel: string;
  logContent: boolean;
  accessLog: boolean;
  bootstrapAdminKey: string | undefined;
  workers: number;
  authCacheTtlMs: number;
  maxMessages: number;
  maxTextChars: number;
  failMode: 'open' | 'closed';
  /** A scoring call still running after this answers `error: true` under the fail mode. */
  scoreTimeoutMs: number;
  /** Worker threads that score, per process; 0 scores on the request thread (no deadline enforcement). */
  scoreThreads: number;
  /** Requests up to this many characters score on the request thread (faster than a thread hop); 0 sends all to the threads. */
  scoreInlineChars: number;
  excerptChars: number;
  judge: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number } | null;
  /** Where protected completions go: a provider per endpoint family, and the routing file's routes. */
  upstream: UpstreamRouting;
  upstreamTimeoutMs: number;
  upstreamIdleTimeoutMs: number;
  stream: StreamModeration;
  outputContextChars: number;
  activitySettleMs: number;
  /** Days activity is kept; 0 keeps it forever. */
  activityRetentionDays: number;
  /**
   * Where activity goes: `sqlite` (the embedded store) or `kafka` (published to Kafka for the
   * activity ingester, exported from the Cassandra tables it writes).
   */
  activityPipeline:
    | { kind: 'sqlite' }
    | {
        kind: 'kafka';
        brokers: string[];
        topic: string;
        cassandra: { contactPoints: string[]; localDataCenter: string; keyspace: string };
      };
}

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
): StandaloneConfig {
  const e = parseEnv(Env, env);
  const dataDir = path.resolve(e.GUARD_DATA_DIR);
  return {
    mode: e.MODE,
    port: e.PORT,
    host: e.HOST,
    dataDir,
    dbFile: path.join(dataDir, 'guard.db'),
    bodyLimitBytes: e.GUARD_BODY_LIMIT,
    maxJsonDepth: e.GUARD_MAX_JSON_DEPTH,
    logLevel: e.GUARD_LOG_LEVEL,
    logContent: e.GUARD_LOG_CONTENT,
    accessLog: e.GUARD_ACCESS_LOG,
    bootstrapAdminKey: e.GUARD_BOOTSTRAP_ADMIN_KEY,
    workers: e.GUARD_WORKERS,
    authCacheTtlMs: e.GUARD_AUTH_CACHE_TTL_MS,
    maxMessages: e.GUARD_MONITOR_MAX_MESSAGES,
    maxTextChars: e.GUARD_MONITOR_MAX_CHARS,
    failMode: e.GUARD_FAIL_MODE,
    scoreTimeoutMs: e.GUARD_SCORE_TIMEOUT_MS,
    scoreInlineChars: e.GUARD_SCORE_INLINE_CHARS,
    // auto: the cores left to each worker process, at least one thread each.
    scoreThreads:
      e.GUARD_SCORE_THREADS === 'auto'
        ? Math.max(1, Math.floor(os.availableParallelism() / e.GUARD_WORKERS))
        : e.GUARD_SCORE_THREADS,
    excerptChars: e.GUARD_ACTIVITY_EXCERPT_CHARS,
    judge: e.GUARD_JUDGE_BASE_URL
      ? {
          baseUrl: e.GUARD_JUDGE_BASE_URL,
          model: e.GUARD_JUDGE_MODEL ?? 'gpt-4o-mini',
          apiKey: e.GUARD_JUDGE_API_KEY,
          timeoutMs: e.GUARD_JUDGE_TIMEOUT_MS,
        }
      : null,
    upstream: {
      providers: {
        openai: {
          baseUrl: e.GUARD_OPENAI_BASE_URL ?? DEFAULT_BASE_URLS.openai,
          apiKey: e.GUARD_OPENAI_API_KEY ?? null,
        },
        anthropic: {
          baseUrl: e.GUARD_ANTHROPIC_BASE_URL ?? DEFAULT_BASE_URLS.anthropic,
          apiKey: e.GUARD_ANTHROPIC_API_KEY ?? null,
        },
        gemini: {
          baseUrl: e.GUARD_GEMINI_BASE_URL ?? DEFAULT_BASE_URLS.gemini,
          apiKey: e.GUARD_GEMINI_API_KEY ?? null,
        },
      },
      routes: e.GUARD_UPSTREAM_ROUTES ? loadRoutes(e.GUARD_UPSTREAM_ROUTES, env) : [],
    },
    upstreamTimeoutMs: e.GUARD_UPSTREAM_TIMEOUT_MS,
    upstreamIdleTimeoutMs: e.GUARD_UPSTREAM_IDLE_TIMEOUT_MS,
    stream: {
      mode: e.GUARD_STREAM_MODE,
      windowChars: e.GUARD_STREAM_WINDOW_CHARS,
      overlapChars: e.GUARD_STREAM_OVERLAP_CHARS,
    },
    outputContextChars: e.GUARD_OUTPUT_CONTEXT_CHARS,
    activitySettleMs: e.GUARD_ACTIVITY_SETTLE_MS,
    activityRetentionDays: e.GUARD_ACTIVITY_RETENTION_DAYS,
    activityPipeline:
      e.GUARD_ACTIVITY_PIPELINE === 'sqlite'
        ? { kind: 'sqlite' }
        : {
            kind: 'kafka',
            brokers: e.KAFKA_BROKERS,
            topic: e.KAFKA_ACTIVITY_TOPIC,
            cassandra: {
              contactPoints: e.CASSANDRA_CONTACT_POINTS,
              localDataCenter: e.CASSANDRA_LOCAL_DC,
              keyspace: e.CASSANDRA_KEYSPACE,
            },
          },
  };
}

const RoutesFile = z.strictObject({
  routes: z.array(
    z
      .strictObject({
        model: z.string().min(1),
        provider: z.enum(PROVIDER_KINDS),
        base_url: z.url().optional(),
        api_key: z.string().min(1).optional(),
        api_key_env: z.string().min(1).optional(),
      })
      .refine((r) => !(r.api_key && r.api_key_env), {
        message: 'give the key as api_key or api_key_env, not both',
      }),
  ),
});

/**
 * The routing file (GUARD_UPSTREAM_ROUTES): models, by name or `*` pattern, to a provider's base
 * URL and key. A key is best named by environment variable (`api_key_env`), so that the file
 * holds no secret.
 */
export function loadRoutes(file: string, env: Record<string, string | undefined>): UpstreamRoute[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(
      `GUARD_UPSTREAM_ROUTES: could not read ${file} as JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = RoutesFile.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `GUARD_UPSTREAM_ROUTES: ${file} is not a routing file: ${z.prettifyError(parsed.error)}`,
    );
  return parsed.data.routes.map((r, i) => {
    let apiKey: string | null = r.api_key ?? null;
    if (r.api_key_env) {
      const v = env[r.api_key_env];
      if (!v)
        throw new Error(
          `GUARD_UPSTREAM_ROUTES: route ${i + 1} (${r.model}) names api_key_env ${r.api_key_env}, which is not set`,
        );
      apiKey = v;
    }
    return {
      model: r.model,
      provider: r.provider,
      baseUrl: r.base_url ?? DEFAULT_BASE_URLS[r.provider],
      apiKey,
    };
  });
}
