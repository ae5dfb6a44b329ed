import { describe, expect, it } from 'vitest';
import { GuardMetrics } from '@guard/platform/metrics';
import { A_JAILBREAK, presetScoreFields } from '@guard/testing/score-request';
import { createServingEngine, meterCaches } from './serving-engine.js';

describe('the serving engine and its caches', () => {
  it('counts what its caches answered, and serves the counts as metrics', async () => {
    const serving = createServingEngine({ threads: 0, timeoutMs: 30_000, inlineChars: 4000 });
    try {
      const request = {
        messages: [{ role: 'user' as const, content: A_JAILBREAK }],
        ...(await presetScoreFields('Basic Content Safety')),
        reasoning_mode: 'off' as const,
        cache_scope: 'org-a',
      };
      await serving.engine.score(request);
      const first = serving.cacheStats().encoder;
      expect(first?.reads).toBeGreaterThan(0);
      await serving.engine.score(request);
      const second = serving.cacheStats().encoder;
      expect(second?.reads).toBe(first?.reads);
      expect(second?.hits).toBeGreaterThan(first?.hits ?? 0);

      const metrics = new GuardMetrics({ defaultMetrics: false });
      meterCaches(metrics, serving.cacheStats);
      const text = await metrics.render();
      expect(text).toContain(`guard_encoder_cache_reads_total ${second?.reads}`);
      expect(text).toContain(`guard_encoder_cache_hits_total ${second?.hits}`);
      expect(text).toContain(`guard_encoder_cache_entries ${second?.entries}`);
      expect(text).toContain('# TYPE guard_multilingual_cache_hits_total counter');
    } finally {
      await serving.close();
    }
  });

  it('has no cache with GUARD_ENCODER_CACHE=0', async () => {
    const serving = createServingEngine({
      threads: 0,
      timeoutMs: 30_000,
      inlineChars: 4000,
      encoder: { mode: 'cascade', threads: 1, cache: 0 },
    });
    try {
      expect(serving.cacheStats()).toEqual({ encoder: null, multilingual: null });
    } finally {
      await serving.close();
    }
  });
});
