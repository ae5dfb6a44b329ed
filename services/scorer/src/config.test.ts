import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

const required = { REDIS_URL: 'redis://127.0.0.1:6379' };

describe('scorer config', () => {
  it('has the documented defaults', () => {
    expect(loadConfig(required)).toMatchObject({
      port: 8091,
      host: '0.0.0.0',
      redisUrl: 'redis://127.0.0.1:6379',
      requestStream: 'guard:score:requests',
      group: 'scorers',
      concurrency: 16,
      claimIdleMs: 5000,
      scoreTimeoutMs: 10_000,
      scoreInlineChars: 4000,
      judge: null,
      metrics: true,
      encoder: { mode: 'cascade', threads: 1, cache: 4096, multilingual: true },
    });
    expect(loadConfig(required).scoreThreads).toBeGreaterThanOrEqual(1);
  });

  it('reads every setting', () => {
    const c = loadConfig({
      REDIS_URL: 'rediss://redis.internal:6380/2',
      PORT: '0',
      GUARD_SCORER_CONCURRENCY: '4',
      GUARD_SCORE_THREADS: '0',
      GUARD_SCORE_TIMEOUT_MS: '2500',
      GUARD_SCORER_CLAIM_IDLE_MS: '1500',
      GUARD_SCORE_REQUEST_STREAM: 'acme:score:requests',
      GUARD_SCORER_GROUP: 'acme-scorers',
      GUARD_JUDGE_BASE_URL: 'http://judge.internal/v1',
      GUARD_METRICS: 'off',
      GUARD_ENCODER: 'all',
      GUARD_ENCODER_THREADS: '2',
      GUARD_ENCODER_CACHE: '0',
    });
    expect(c).toMatchObject({
      port: 0,
      redisUrl: 'rediss://redis.internal:6380/2',
      concurrency: 4,
      scoreThreads: 0,
      scoreTimeoutMs: 2500,
      claimIdleMs: 1500,
      requestStream: 'acme:score:requests',
      group: 'acme-scorers',
      judge: { baseUrl: 'http://judge.internal/v1', model: 'gpt-4o-mini', timeoutMs: 8000 },
      metrics: false,
      encoder: { mode: 'all', threads: 2, cache: 0 },
    });
    expect(() => loadConfig({ ...required, GUARD_ENCODER_CACHE: '-1' })).toThrow(
      /GUARD_ENCODER_CACHE/,
    );
  });

  it('lists every bad variable at once', () => {
    expect(() =>
      loadConfig({
        REDIS_URL: 'http://127.0.0.1:6379',
        GUARD_SCORER_CONCURRENCY: '0',
        GUARD_SCORE_THREADS: 'many',
        GUARD_SCORER_CLAIM_IDLE_MS: '10',
      }),
    ).toThrow(
      /REDIS_URL[\s\S]*GUARD_SCORER_CONCURRENCY[\s\S]*GUARD_SCORER_CLAIM_IDLE_MS[\s\S]*GUARD_SCORE_THREADS/,
    );
    expect(() => loadConfig({})).toThrow(/REDIS_URL/);
  });
});
