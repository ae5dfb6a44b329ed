import os from 'node:os';
import { z } from 'zod';
import {
  envBool,
  envInt,
  envLogLevel,
  encoderSettings,
  judgeSettings,
  parseEnv,
  scoringEnv,
  type EncoderSettings,
  type JudgeSettings,
} from '@guard/platform';
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
  GUARD_LOG_LEVEL: envLogLevel(),
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: 'expected redis://host:port or rediss://…' }),
  GUARD_SCORE_REQUEST_STREAM: z.string().min(1).default(DEFAULT_SCORE_REQUEST_STREAM),
  GUARD_SCORER_GROUP: z.string().min(1).default(DEFAULT_SCORER_GROUP),
  GUARD_SCORER_CONCURRENCY: envInt(16, 1, 1_024),
  GUARD_SCORER_CLAIM_IDLE_MS: envInt(5_000, 100, 600_000),
  GUARD_METRICS: envBool(true),
  ...scoringEnv(),
});

/** Every variable this role reads: test/deploy checks the deployment files against it. */
export const ENV_SCHEMA = Env;

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
  judge: JudgeSettings | null;
  /** The jailbreak encoder stage: default mode, threads and cache (GUARD_ENCODER, GUARD_ENCODER_THREADS, GUARD_ENCODER_CACHE). */
  encoder: EncoderSettings;
  /** Serve Prometheus metrics at `/metrics` on the probe port. */
  metrics: boolean;
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
    // auto: every core of the pod.
    scoreThreads:
      e.GUARD_SCORE_THREADS === 'auto'
        ? Math.max(1, os.availableParallelism())
        : e.GUARD_SCORE_THREADS,
    scoreInlineChars: e.GUARD_SCORE_INLINE_CHARS,
    judge: judgeSettings(e),
    encoder: encoderSettings(e),
    metrics: e.GUARD_METRICS,
  };
}
