import { describe, expect, it } from 'vitest';
import { AppError } from '@guard/platform';
import {
  errorScoreResult,
  type ScoreClient,
  type ScoreRequest,
} from '../scoring/score-contract.js';
import { scoreSafely } from './monitor.js';

const request: ScoreRequest = {
  messages: [{ role: 'user', content: 'hello' }],
  rules: [],
  thresholds: {
    pre_violation_threshold: 0.5,
    pre_jb_threshold: 0.3,
    post_violation_threshold: 0.5,
    post_violation_jb_threshold: 0.3,
  },
  mode: 'content_moderation',
  scanners_config: {},
  reasoning_mode: 'off',
};
const throwing: ScoreClient = {
  score: async () => {
    throw new Error('scorer down');
  },
};
const reportingError: ScoreClient = {
  score: async (r) => errorScoreResult(r, new Error('detector crashed')),
};

describe('scoreSafely', () => {
  it('fails closed by default: an error is never a clean pass', async () => {
    for (const engine of [throwing, reportingError]) {
      const r = await scoreSafely(engine, request, { failMode: 'closed', timeoutMs: null });
      expect(r).toMatchObject({ error: true, violation: 1, alarm: true, phase: 'input' });
      expect(r.error_message).toMatch(/scorer down|detector crashed/);
    }
  });

  it('fails open when configured, still saying error', async () => {
    for (const engine of [throwing, reportingError]) {
      const r = await scoreSafely(engine, request, { failMode: 'open', timeoutMs: null });
      expect(r).toMatchObject({ error: true, violation: 0 });
    }
  });

  it('passes "no scorer can take it" on as an error (503), in either fail mode', async () => {
    const full: ScoreClient = {
      score: async () => {
        throw new AppError('SCORER_UNAVAILABLE', 'the scoring queue is full');
      },
    };
    for (const mode of ['open', 'closed'] as const)
      await expect(
        scoreSafely(full, request, { failMode: mode, timeoutMs: null }),
      ).rejects.toMatchObject({
        code: 'SCORER_UNAVAILABLE',
      });
  });

  it("gives up at the policy's timeout and answers by its fail mode, saying why", async () => {
    const slow: ScoreClient = {
      score: (_r, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason as Error));
        }),
    };
    const started = Date.now();
    const open = await scoreSafely(slow, request, { failMode: 'open', timeoutMs: 60 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(open).toMatchObject({ error: true, violation: 0, alarm: false });
    expect(open.error_message).toMatch(/scoring_timeout_ms \(60 ms\).*fail mode open/);
    const closed = await scoreSafely(slow, request, { failMode: 'closed', timeoutMs: 60 });
    expect(closed).toMatchObject({ error: true, violation: 1, alarm: true });
  });
});
