import os from 'node:os';
import { z } from 'zod';
import { envInt, parseEnv } from '@guard/platform';
import {
  DEFAULT_SCORE_REQUEST_STREAM,
  DEFAULT_SCORER_GROUP,
} from '@guard/contracts/score-envelope';

/**
 * Every setting of the scorer role; the only file that reads the environment. Each variable is
 * described in the service's README.
 */
const Env = z.object({
  PORT: envInt(8091, 0, 65535),
  // Probes come from the kubelet, over the pod's address; the endpoints answer no data.
  HOST: z.string().min(1).default('0.0.0.0'),
  GUARD_LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info'),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'expected redis://host:port or rediss://…' }),
  GUARD_SCORE_REQUEST_STREAM: z.string().min(1).default(DEFAULT_SCORE_REQUEST_STREAM),
  GUARD_SCORER_GROUP: z.string().min(1).default(DEFAULT_SCORER_GROUP),
  GUARD_SCORER_CONCURRENCY: envInt(16, 1, 1_024),
  GUARD_SCORER_CLAIM_IDLE_MS: envInt(5_000, 100, 600_000),
  GUARD_SCORE_TIMEOUT_MS: envInt(10_000, 50, 600_000),
  GUARD_SCORE_INLINE_CHARS: envInt(4000, 0, 1_000_000),
  GUARD_SCORE_THREADS: z
    .string()
    .default('auto')
    .transform((v, ctx) => {
      if (v === 'auto' || v === '') return Math.max(1, os.availableParallelism());
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 64) {
        ctx.addIssue({
          code: 'custom',
          message: `expected "auto", 0 (score on the main thread) or a whole number up to 64, got "${v}"`,
        });
        return z.NEVER;
      }
      return n;
    }),
  GUARD_JUDGE_BASE_URL: z.preprocess((v) => (v === '' ? undefined : v), z.url().optional()),
  GUARD_JUDGE_MODEL: z.string().optional(),
  GUARD_JUDGE_API_KEY: z.string().optional(),
  GUARD_JUDGE_TIMEOUT_MS: envInt(8000, 100, 600_000),
});

export interface ScorerConfig {
  port: number;
  host: string;
  logLevel: string;
  redisUrl: string;
  requestStream: string;
  group: string;
  /** Requests one process scores at once. */
  concurrency: number;
  /** Requests pending this long on a silent scorer are taken over. */
  claimIdleMs: number;
  /** The scoring core's own deadline per request (the envelope's deadline also applies). */
  scoreTimeoutMs: number;
  /** Scoring threads; 0 scores on the main thread. */
  scoreThreads: number;
  /** Requests up to this many characters score on the main thread; 0 sends all to the threads. */
  scoreInlineChars: number;
  judge: { baseUrl: string; model: string; apiKey: string | undefined; timeoutMs: number } | null;
}

export function loadConfig(env: Record<string, string | undefined>): ScorerConfig {
  const e = parseEnv(Env, env);
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.GUARD_LOG_LEVEL,
    redisUrl: e.REDIS_URL,
    requestStream: e.GUARD_SCORE_REQUEST_STREAM,
    group: e.GUARD_SCORER_GROUP,
    concurrency: e.GUARD_SCORER_CONCURRENCY,
    claimIdleMs: e.GUARD_SCORER_CLAIM_IDLE_MS,
    scoreTimeoutMs: e.GUARD_SCORE_TIMEOUT_MS,
    scoreThreads: e.GUARD_SCORE_THREADS,
    scoreInlineChars: e.GUARD_SCORE_INLINE_CHARS,
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
