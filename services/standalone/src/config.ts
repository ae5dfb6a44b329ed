import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { envBool, envBytes, envInt, parseEnv } from '@guard/platform';

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
  };
}
